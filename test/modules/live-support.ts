import { SingleSpeakerDiarizer } from "../../src/engines/diarizer";
import type { Engines } from "../../src/engines";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { makeTenant, makeTestApp } from "../helpers";
import { concat, silence, voiced, wav } from "./pipeline-fixtures";

/** Real ffmpeg and Silero VAD; the scripted transcriber says which audio each call was given. */
export async function liveApp(engines: Partial<Engines> = {}) {
  const t = await makeTestApp({
    engines: { transcriber: new ScriptedTranscriber(), llm: new ScriptedLlm(), diarizer: new SingleSpeakerDiarizer(), ...engines },
  });
  const tenant = makeTenant(t.deps);
  return { t, tenant };
}

export type T = Awaited<ReturnType<typeof liveApp>>["t"];

/** Three utterances of 2 s, 1.5 s of silence after each: every one is closed by silence. */
export const speech = wav(concat(voiced(2), silence(1.5), voiced(2), silence(1.5), voiced(2), silence(1.5)));
/** Byte ranges cutting the WAV mid-sample and mid-utterance: chunk 0 ends inside the second utterance. */
export const parts = [speech.slice(0, 100_000), speech.slice(100_000, 190_000), speech.slice(190_000)];

export const liveSegments = (t: T, id: string) =>
  t.deps.db
    .query<{ seq: number; start: number; end: number; text: string }, [string]>(
      'SELECT seq, start, "end", text FROM live_segments WHERE transcription_id = ? ORDER BY seq',
    )
    .all(id);

export const transcriptionOf = async (t: T, key: string, rec: string) => (await t.call("GET", `/v1/transcriptions?recording_id=${rec}`, { key })).body.data[0];

/** A transcriber that records the length (seconds) of the audio of each call, then answers as the scripted one. */
export function measuredTranscriber() {
  const inner = new ScriptedTranscriber();
  const seconds: number[] = [];
  return {
    seconds,
    transcriber: {
      model: inner.model,
      transcribe(pcm: Float32Array, options: Parameters<ScriptedTranscriber["transcribe"]>[1]) {
        seconds.push(pcm.length / 16_000);
        return inner.transcribe(pcm, options);
      },
    },
  };
}
