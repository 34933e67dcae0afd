/** A byte range, both ends inclusive (as HTTP Range counts). */
export type ByteRange = { start: number; end: number };

/** What a finished write measured while the bytes streamed through. */
export type WriteResult = { size: number };

/** A write went past its byte limit; nothing was left under the key. */
export class ObjectTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the object is larger than ${limit} bytes`);
  }
}

/**
 * Where audio bytes live: local disk by default, any S3-compatible store when configured.
 * Keys are relative paths (`<project>/<mode>/<recording>/<name>`). A write is atomic:
 * readers see the whole object under its key or nothing, whatever crashes mid-write.
 */
export interface Storage {
  readonly kind: "local" | "s3";
  /** Streams `body` to `key`, counting as it goes; over `maxBytes` it throws ObjectTooLargeError. Hashing is the reader's job (verification hashes what storage holds). */
  write(key: string, body: AsyncIterable<Uint8Array>, options?: { maxBytes?: number }): Promise<WriteResult>;
  /** Size of the object, or null when it does not exist. */
  size(key: string): Promise<number | null>;
  /** The object's bytes, or one range of them. */
  read(key: string, range?: ByteRange): ReadableStream<Uint8Array>;
  /** Deletes the object; deleting a missing object is not an error (deletion jobs may run twice). */
  remove(key: string): Promise<void>;
  /** Deletes every object whose key starts with `prefix` (a recording's folder). */
  removePrefix(prefix: string): Promise<void>;
  /** Every object's key after `after` (all when null), in code-point order, so a walk can stop and resume. */
  list(after: string | null): AsyncIterable<string>;
  /** Removes what interrupted writes left behind before `before`; returns how many. */
  sweepPartial(before: Date): Promise<number>;
  /** Runs `fn` with a local file path holding the object (ffmpeg needs a path), cleaning up after. */
  withLocalFile<T>(key: string, fn: (path: string) => Promise<T>): Promise<T>;
}

/** Iterates a web stream chunk by chunk, with backpressure (lib.dom's ReadableStream is not typed as async-iterable). */
export async function* chunksOf(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read()) yield r.value;
  } finally {
    reader.releaseLock();
  }
}

/** Rejects keys that could escape the storage root or confuse an S3 listing. */
export function assertSafeKey(key: string): void {
  if (!/^[A-Za-z0-9_-]+(\/[A-Za-z0-9_.-]+)*$/.test(key) || key.split("/").some((p) => p === "." || p === "..")) {
    throw new Error(`unsafe storage key ${JSON.stringify(key)}`);
  }
}
