import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * The sealed-object format (decision 105): a 20-byte header, then the plaintext in chunks
 * of CHUNK bytes, each sealed with AES-256-GCM under the project's data key and followed by
 * its 16-byte tag. A chunk's nonce is the object's random 8-byte prefix and the chunk's
 * number, so a byte range decrypts only the chunks it touches. The header and whether the
 * chunk is the last are authenticated with each chunk: chunks cannot be moved between
 * objects or reordered, and a cut-off object fails instead of reading short.
 *
 *   header: "PRLYAE01" | chunk size (u32 BE) | nonce prefix (8 bytes)
 *   chunk i: AES-256-GCM(key, nonce = prefix | i (u32 BE), aad = header | last) | tag
 */
export const MAGIC = Buffer.from("PRLYAE01");
export const HEADER_BYTES = 20;
export const CHUNK = 64 * 1024;
const TAG = 16;
/** A sealed chunk's size in storage. */
export const SEALED_CHUNK = CHUNK + TAG;

export type Header = { bytes: Buffer; chunk: number; noncePrefix: Buffer };

export function newHeader(): Header {
  const bytes = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(bytes, 0);
  bytes.writeUInt32BE(CHUNK, 8);
  randomBytes(8).copy(bytes, 12);
  return { bytes, chunk: CHUNK, noncePrefix: bytes.subarray(12, 20) };
}

/** The header at the start of `bytes`, or null when the object is not sealed (written before encryption). */
export function parseHeader(bytes: Uint8Array): Header | null {
  if (bytes.length < HEADER_BYTES || !MAGIC.equals(bytes.subarray(0, 8))) return null;
  const header = Buffer.from(bytes.subarray(0, HEADER_BYTES));
  if (header.readUInt32BE(8) !== CHUNK) throw new Error(`sealed object with an unknown chunk size ${header.readUInt32BE(8)}`);
  return { bytes: header, chunk: CHUNK, noncePrefix: header.subarray(12, 20) };
}

function nonce(header: Header, index: number): Buffer {
  const n = Buffer.alloc(12);
  header.noncePrefix.copy(n, 0);
  n.writeUInt32BE(index, 8);
  return n;
}

const aad = (header: Header, last: boolean) => Buffer.concat([header.bytes, Uint8Array.of(last ? 1 : 0)]);

export function sealChunk(key: Buffer, header: Header, index: number, last: boolean, plain: Uint8Array): Buffer {
  const cipher = createCipheriv("aes-256-gcm", key, nonce(header, index));
  cipher.setAAD(aad(header, last));
  return Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
}

/** The plaintext of sealed chunk `index`; throws when it was altered, moved, or is not the key's. */
export function openChunk(key: Buffer, header: Header, index: number, last: boolean, sealed: Uint8Array): Buffer {
  if (sealed.length < TAG) throw new Error(`sealed chunk ${index} is cut off`);
  const decipher = createDecipheriv("aes-256-gcm", key, nonce(header, index));
  decipher.setAAD(aad(header, last));
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG));
  return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG)), decipher.final()]);
}

/** How many chunks a sealed object of `storedSize` bytes has (an empty plaintext is one empty chunk). */
export function chunkCount(storedSize: number): number {
  return Math.max(1, Math.ceil((storedSize - HEADER_BYTES) / SEALED_CHUNK));
}

/** The plaintext size of a sealed object of `storedSize` bytes. */
export function plainSize(storedSize: number): number {
  return storedSize - HEADER_BYTES - chunkCount(storedSize) * TAG;
}

/**
 * Seals `body` chunk by chunk as it streams: a chunk goes out once more bytes follow it
 * (so the last one is known), and only the plaintext is counted (`counted` throws past a
 * limit, from inside the stream, so the storage below abandons the write). What one part
 * of the body completes goes out as one piece, so it is written at once, not held until
 * the next part arrives.
 */
export async function* seal(key: Buffer, body: AsyncIterable<Uint8Array>, counted: (bytes: number) => void): AsyncGenerator<Uint8Array> {
  const header = newHeader();
  let out: Buffer[] = [header.bytes];
  let index = 0;
  let pending: Buffer = Buffer.alloc(0);
  for await (const part of body) {
    counted(part.byteLength);
    pending = pending.length ? Buffer.concat([pending, part]) : Buffer.from(part);
    while (pending.length > CHUNK) {
      out.push(sealChunk(key, header, index++, false, pending.subarray(0, CHUNK)));
      pending = pending.subarray(CHUNK);
    }
    if (index > 0 && out.length > 0) {
      yield Buffer.concat(out);
      out = [];
    }
  }
  out.push(sealChunk(key, header, index, true, pending));
  yield Buffer.concat(out);
}
