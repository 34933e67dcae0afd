import { open } from "node:fs/promises";
import { join } from "node:path";
import type { Clock } from "../../clock";
import type { Scratch } from "../scratch";
import { type ByteRange, chunksOf, ObjectTooLargeError, type Storage, type WriteResult } from "../storage";
import type { DataKeys } from "./data-keys";
import { RewriteGate } from "./rewrite-gate";
import { CHUNK, chunkCount, HEADER_BYTES, type Header, openChunk, parseHeader, plainSize, SEALED_CHUNK, seal } from "./sealed-format";

/** The project an object belongs to: the first part of its key (`<project>/<mode>/<recording>/<name>`). */
const projectOf = (key: string) => key.slice(0, key.indexOf("/"));

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const part of chunksOf(stream)) parts.push(part);
  return Buffer.concat(parts);
}

/** What is under a key: a sealed object with its stored size and header, plaintext from before encryption, or nothing. */
type Stored = { kind: "sealed"; storedSize: number; header: Header } | { kind: "plain"; storedSize: number } | null;

/** The stream's parts with the first one already read: the object is open, so a rename over it no longer changes what it yields. */
async function opened(stream: ReadableStream<Uint8Array>): Promise<AsyncGenerator<Uint8Array>> {
  const parts = chunksOf(stream);
  const first = await parts.next();
  return (async function* () {
    if (first.done) return;
    yield first.value;
    yield* parts;
  })();
}

/**
 * Audio sealed at rest (decision 105), in front of local or S3 storage: what goes in and
 * comes out is the plaintext, so hashing, probing, ranges and backups above it are
 * unchanged; what the storage below holds is the sealed format, under the project's data
 * key. Objects written before encryption (no header) are read as they are until
 * sealInPlace seals them (decision 107); the gate keeps that rewrite from meeting a read,
 * write or removal of the same object.
 */
export class EncryptedStorage implements Storage {
  readonly kind: Storage["kind"];
  private readonly gate = new RewriteGate();
  constructor(
    private readonly inner: Storage,
    private readonly keys: DataKeys,
    private readonly clock: Clock,
    private readonly scratch: Scratch,
  ) {
    this.kind = inner.kind;
  }

  async write(key: string, body: AsyncIterable<Uint8Array>, options: { maxBytes?: number } = {}): Promise<WriteResult> {
    const dataKey = this.keys.keyFor(projectOf(key), this.clock.now());
    let size = 0;
    const counted = (bytes: number) => {
      size += bytes;
      if (options.maxBytes !== undefined && size > options.maxBytes) throw new ObjectTooLargeError(options.maxBytes);
    };
    await this.gate.use(key, () => this.inner.write(key, seal(dataKey, body, counted)));
    return { size };
  }

  private async stored(key: string): Promise<Stored> {
    const storedSize = await this.inner.size(key);
    if (storedSize === null) return null;
    if (storedSize < HEADER_BYTES) return { kind: "plain", storedSize };
    const header = parseHeader(await readAll(this.inner.read(key, { start: 0, end: HEADER_BYTES - 1 })));
    return header ? { kind: "sealed", storedSize, header } : { kind: "plain", storedSize };
  }

  async size(key: string): Promise<number | null> {
    const stored = await this.gate.use(key, () => this.stored(key));
    if (!stored) return null;
    return stored.kind === "plain" ? stored.storedSize : plainSize(stored.storedSize);
  }

  /**
   * Seals a plaintext object where it lies (decision 107): the sealed copy is written as
   * every write is (a temp file, fsynced, renamed over the key; or an S3 upload completed
   * at the end), so a crash leaves the plaintext object, still readable, to be sealed on the
   * next run. "busy" when the object is in use right now: try again later.
   */
  async sealInPlace(key: string): Promise<"sealed" | "already" | "busy"> {
    const outcome = await this.gate.rewrite(key, async () => {
      if ((await this.stored(key))?.kind !== "plain") return "already" as const;
      const dataKey = this.keys.keyFor(projectOf(key), this.clock.now());
      await this.inner.write(
        key,
        seal(dataKey, chunksOf(this.inner.read(key)), () => {}),
      );
      return "sealed" as const;
    });
    return outcome ?? "busy";
  }

  list(after: string | null): AsyncIterable<string> {
    return this.inner.list(after);
  }

  read(key: string, range?: ByteRange): ReadableStream<Uint8Array> {
    const plaintext = range ? this.plaintext(key, range) : this.whole(key);
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await plaintext.next();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
      async cancel() {
        await plaintext.return(undefined);
      },
    });
  }

  private dataKeyOf(key: string): Buffer {
    const dataKey = this.keys.existing(projectOf(key));
    if (!dataKey) throw new Error(`the data key of ${projectOf(key)} is destroyed: ${key} cannot be read`);
    return dataKey;
  }

  /**
   * The whole plaintext in one pass over the object (one request on S3): the header from
   * its first bytes, then chunk after chunk, one held back until the next arrives, since
   * only the end of the object says which chunk is the last.
   */
  private async *whole(key: string): AsyncGenerator<Uint8Array> {
    let mode: "unknown" | "plain" | "sealed" = "unknown";
    let header: Header | null = null;
    let dataKey: Buffer | null = null;
    let index = 0;
    let pending: Buffer = Buffer.alloc(0);
    for await (const part of chunksOf(this.inner.read(key))) {
      if (mode === "plain") {
        yield part;
        continue;
      }
      pending = pending.length ? Buffer.concat([pending, part]) : Buffer.from(part);
      if (mode === "unknown") {
        if (pending.length < HEADER_BYTES) continue;
        header = parseHeader(pending);
        mode = header ? "sealed" : "plain";
        if (!header) {
          yield pending; // written before encryption
          continue;
        }
        dataKey = this.dataKeyOf(key);
        pending = pending.subarray(HEADER_BYTES);
      }
      while (pending.length > SEALED_CHUNK) {
        yield openChunk(dataKey!, header!, index++, false, pending.subarray(0, SEALED_CHUNK));
        pending = pending.subarray(SEALED_CHUNK);
      }
    }
    if (mode === "sealed") yield openChunk(dataKey!, header!, index, true, pending);
    else if (mode === "unknown" && pending.length) yield pending; // a plain object shorter than a header
  }

  /** The plaintext of `range`, decrypting only the chunks it touches. */
  private async *plaintext(key: string, range: ByteRange): AsyncGenerator<Uint8Array> {
    // A plaintext object is opened before the gate lets its sealing start; a sealed one never changes.
    const { stored, plain } = await this.gate.use(key, async () => {
      const stored = await this.stored(key);
      return { stored, plain: stored?.kind === "plain" ? await opened(this.inner.read(key, range)) : null };
    });
    if (!stored) throw new Error(`no object ${key}`);
    if (stored.kind === "plain") return yield* plain!;
    const dataKey = this.dataKeyOf(key);
    const total = plainSize(stored.storedSize);
    const chunks = chunkCount(stored.storedSize);
    const start = range.start;
    const end = Math.min(range.end, total - 1);
    if (end < start) return;
    const first = Math.floor(start / CHUNK);
    const last = Math.floor(end / CHUNK);
    const sealedRange = { start: HEADER_BYTES + first * SEALED_CHUNK, end: Math.min(stored.storedSize, HEADER_BYTES + (last + 1) * SEALED_CHUNK) - 1 };
    let index = first;
    let pending: Buffer = Buffer.alloc(0);
    const emit = (sealed: Buffer) => {
      const plain = openChunk(dataKey, stored.header, index, index === chunks - 1, sealed);
      const from = index === first ? start - first * CHUNK : 0;
      const to = index === last ? end - last * CHUNK + 1 : plain.length;
      index++;
      return plain.subarray(from, to);
    };
    for await (const part of chunksOf(this.inner.read(key, sealedRange))) {
      pending = pending.length ? Buffer.concat([pending, part]) : Buffer.from(part);
      while (pending.length >= SEALED_CHUNK && index <= last) {
        yield emit(pending.subarray(0, SEALED_CHUNK));
        pending = pending.subarray(SEALED_CHUNK);
      }
    }
    if (index === last) yield emit(pending);
    else if (index <= last) throw new Error(`${key} is cut off: chunk ${index} of ${chunks} is missing`);
  }

  remove(key: string): Promise<void> {
    return this.gate.use(key, () => this.inner.remove(key));
  }

  removePrefix(prefix: string): Promise<void> {
    return this.gate.use(prefix, () => this.inner.removePrefix(prefix));
  }

  sweepPartial(before: Date): Promise<number> {
    return this.inner.sweepPartial(before);
  }

  /** ffmpeg needs a path: the plaintext goes to a private scratch file, removed when `fn` is done. */
  async withLocalFile<T>(key: string, fn: (path: string) => Promise<T>): Promise<T> {
    // A plaintext object is used where it lies, kept from its sealing until fn is done.
    const plain = await this.gate.use(key, async () =>
      (await this.stored(key))?.kind === "plain" ? { result: await this.inner.withLocalFile(key, fn) } : null,
    );
    if (plain) return plain.result;
    return this.scratch.withDir(async (dir) => {
      const path = join(dir, "plaintext");
      const file = await open(path, "wx", 0o600);
      try {
        for await (const part of chunksOf(this.read(key))) await file.writeFile(part); // every byte, at the file's position
      } finally {
        await file.close();
      }
      return fn(path);
    });
  }
}
