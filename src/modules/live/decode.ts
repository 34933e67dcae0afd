import { createHash } from "node:crypto";
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
 * The chunks received so far, in order, decoded as one file to 16 kHz mono PCM, and the
 * SHA-256 of each chunk read. ffmpeg decodes a cut-off WAV or Ogg up to its last whole
 * frame; what the next chunk completes is decoded on the next pass.
 */
export async function decodePrefix(deps: Deps, keys: string[], signal: AbortSignal): Promise<{ pcm: Float32Array; digests: string[] }> {
  const dir = await mkdtemp(join(tmpdir(), "parley-live-"));
  try {
    const path = join(dir, "prefix");
    const file = Bun.file(path).writer();
    const digests: string[] = [];
    for (const key of keys) {
      const hash = createHash("sha256");
      for await (const chunk of chunksOf(deps.storage.read(key))) {
        hash.update(chunk);
        file.write(chunk);
      }
      digests.push(hash.digest("hex"));
    }
    await file.end();
    return { pcm: await deps.engines.audio.decodePcm16k(path, signal), digests };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
