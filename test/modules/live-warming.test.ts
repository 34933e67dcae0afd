// Summary warming yields to live passes (decision 210): the live job hands warmSummaryPrompt
// livePassesIdle, which holds each warm step while a pass runs in the process.
import { expect, test } from "bun:test";
import type { Transcriber } from "../../src/engines/transcriber";
import { livePassesIdle } from "../../src/modules/live/job";
import { waitFor } from "../helpers";
import { liveApp, parts, utteranceTranscriber } from "./live-support";
import { createRecording, put } from "./recordings-support";

test("livePassesIdle resolves once the pass running ends, not while its transcriber call is under way", async () => {
  const answers = utteranceTranscriber();
  const held = Promise.withResolvers<void>();
  let reached = false;
  const transcriber: Transcriber = {
    model: answers.model,
    async transcribe(pcm, options) {
      reached = true;
      await held.promise;
      return answers.transcribe(pcm, options);
    },
  };
  /** Whether livePassesIdle has answered once the promises already settled have run. */
  const idleNow = async () => {
    let idle = false;
    void livePassesIdle().then(() => (idle = true));
    await new Promise((resolve) => setImmediate(resolve));
    return idle;
  };
  const { t, tenant } = await liveApp({ transcriber });
  expect(await idleNow()).toBe(true);
  t.deps.queue.start();
  const rec = await createRecording(t, tenant.test);
  await put(t, tenant.test, rec.id, parts[0]!, { chunk_index: 0 });
  await waitFor("the pass to reach the transcriber", () => reached);
  let idle = false;
  void livePassesIdle().then(() => (idle = true));
  expect(await idleNow()).toBe(false);
  held.resolve();
  await waitFor("the pass to end", () => idle);
  await t.deps.queue.stop();
});
