import { chunksOf, type Storage } from "../storage";
import { HEADER_BYTES, parseHeader } from "./sealed-format";

/**
 * How many objects in the storage below encryption are still plaintext (no sealed-format
 * header: written before encryption at rest, not yet sealed by the background job,
 * decision 107), out of how many. Reads the first bytes of each object.
 */
export async function countPlaintextObjects(inner: Storage): Promise<{ plaintext: number; total: number }> {
  let plaintext = 0;
  let total = 0;
  for await (const key of inner.list(null)) {
    total++;
    const head: Uint8Array[] = [];
    for await (const part of chunksOf(inner.read(key, { start: 0, end: HEADER_BYTES - 1 }))) head.push(part);
    if (!parseHeader(Buffer.concat(head))) plaintext++;
  }
  return { plaintext, total };
}
