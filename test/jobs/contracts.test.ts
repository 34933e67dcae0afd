import { expect, test } from "bun:test";
import { JOB_NAMES } from "../../src/jobs/contracts";
import type { JobQueue } from "../../src/jobs/queue";
import { makeTestApp } from "../helpers";

test("every job the contracts name has a handler once the background work is registered", async () => {
  const t = await makeTestApp();
  expect(JOB_NAMES.filter((name) => !t.deps.queue.handles(name))).toEqual([]);
});

/** Never called: `tsc --noEmit` checks that the contracts type enqueue and register (decision 083). */
export function contractsTypeEnqueueAndRegister(queue: JobQueue): void {
  const tenant = { project_id: "prj_1", mode: "test" } as const;
  queue.enqueue("summaries.auto", { ...tenant, transcription_id: "txn_1", template: "general" });
  // @ts-expect-error a job no contract names
  queue.enqueue("summaries.automatic", { ...tenant, transcription_id: "txn_1", template: "general" });
  // @ts-expect-error a payload missing a field of its contract
  queue.enqueue("summaries.auto", { ...tenant, transcription_id: "txn_1" });
  // @ts-expect-error a payload of another job
  queue.enqueue("search.index_transcription", { ...tenant, recording_id: "rec_1" });
  // @ts-expect-error a handler reading a field its payload does not have
  queue.register("search.index_transcription", (job) => void job.payload.recording_id);
}
