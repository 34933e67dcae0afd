import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Deps } from "../../deps";
import { chunksOf } from "../../storage";

/**
 * Containers whose every prefix decodes (decision 162): a WAV's samples follow its header,
 * an Ogg's pages stand alone. Others (M4A with its index last, say) wait for completion.
 */
export function streamableFormat(head: Uint8Array): "wav" | "ogg" | null {
  const magic = new TextDecoder().decode(head.subarray(0, 4));
  if (magic === "RIFF") return "wav";
  if (magic === "OggS") return "ogg";
  return null;
}

/** The first bytes of a stored object (enough to recognise its container). */
export async function headOf(deps: Deps, key: string): Promise<Uint8Array> {
  for await (const chunk of chunksOf(deps.storage.read(key, { start: 0, end: 15 }))) return chunk;
  return new Uint8Array();
}

/**
 * The chunks received so far, in order, decoded as one file to 16 kHz mono PCM. ffmpeg
 * decodes a cut-off WAV or Ogg up to its last whole frame; what the next chunk completes is
 * decoded on the next pass.
 */
export async function decodePrefix(deps: Deps, keys: string[], signal: AbortSignal): Promise<Float32Array> {
  const dir = await mkdtemp(join(tmpdir(), "parley-live-"));
  try {
    const path = join(dir, "prefix");
    const file = Bun.file(path).writer();
    for (const key of keys) for await (const chunk of chunksOf(deps.storage.read(key))) file.write(chunk);
    await file.end();
    return await deps.engines.audio.decodePcm16k(path, signal);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
