import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { type FileHandle, mkdir, open, readdir, rename, rm, stat } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import { assertSafeKey, type ByteRange, ObjectTooLargeError, type Storage, type WriteResult } from "./storage";
import { syncPath } from "./fsync";
import { isOutOfSpace, OutOfSpaceError } from "./volumes";

/**
 * Objects as files under one root (default <dataDir>/audio). Writes go to root/.tmp, are
 * fsynced, then renamed into place and the directory fsynced, so after a crash a key holds
 * either the complete object or nothing; a crash leaves at most a file in .tmp, swept later.
 */
export class LocalStorage implements Storage {
  readonly kind = "local" as const;
  private readonly tmpDir: string;

  constructor(readonly root: string) {
    this.tmpDir = join(root, ".tmp");
    try {
      mkdirSync(this.tmpDir, { recursive: true });
    } catch {
      // A server started on a full disk still starts; each write makes the folder again if need be.
    }
  }

  pathOf(key: string): string {
    assertSafeKey(key);
    return join(this.root, key);
  }

  /**
   * Every write is awaited and the file fsynced before the rename, so a write that returns
   * is durably stored in full; a full disk is an OutOfSpaceError and leaves nothing behind.
   * (Bun's FileSink, used before, did not report ENOSPC from end(): a PUT answered 200 for
   * bytes that never landed.)
   */
  async write(key: string, body: AsyncIterable<Uint8Array>, options: { maxBytes?: number } = {}): Promise<WriteResult> {
    const target = this.pathOf(key);
    const tmp = join(this.tmpDir, `${randomBytes(12).toString("hex")}.part`);
    let size = 0;
    try {
      await mkdir(this.tmpDir, { recursive: true });
      const file = await open(tmp, "wx", 0o600);
      try {
        const batch = new WriteBatch(file);
        for await (const chunk of body) {
          size += chunk.byteLength;
          if (options.maxBytes !== undefined && size > options.maxBytes) throw new ObjectTooLargeError(options.maxBytes);
          await batch.add(chunk);
        }
        await batch.flush();
        await file.sync();
      } finally {
        await file.close();
      }
      await mkdir(dirname(target), { recursive: true });
      await rename(tmp, target);
      await syncPath(dirname(target));
    } catch (err) {
      await rm(tmp, { force: true }).catch(() => {});
      throw isOutOfSpace(err) ? new OutOfSpaceError("audio", err) : err;
    }
    return { size };
  }

  async size(key: string): Promise<number | null> {
    try {
      return (await stat(this.pathOf(key))).size;
    } catch {
      return null;
    }
  }

  read(key: string, range?: ByteRange): ReadableStream<Uint8Array> {
    const file = Bun.file(this.pathOf(key));
    return (range ? file.slice(range.start, range.end + 1) : file).stream();
  }

  async remove(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async removePrefix(prefix: string): Promise<void> {
    await rm(this.pathOf(prefix.replace(/\/$/, "")), { recursive: true, force: true });
  }

  /** Reads the whole tree, then yields in order: an appliance's objects number in the tens of thousands at most. */
  async *list(after: string | null): AsyncGenerator<string> {
    const entries = await readdir(this.root, { recursive: true, withFileTypes: true }).catch(() => []);
    const keys = entries
      .filter((e) => e.isFile())
      .map((e) => relative(this.root, join(e.parentPath, e.name)).split(sep).join("/"))
      .filter((key) => !key.startsWith(".tmp/") && (after === null || key > after))
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    yield* keys;
  }

  async sweepPartial(before: Date): Promise<number> {
    let removed = 0;
    for (const name of await readdir(this.tmpDir).catch(() => [])) {
      const path = join(this.tmpDir, name);
      // Age, not "all": another process (a CLI command) may be writing into the same root right now.
      if ((await stat(path)).mtime < before) {
        await rm(path, { force: true });
        removed++;
      }
    }
    return removed;
  }

  async withLocalFile<T>(key: string, fn: (path: string) => Promise<T>): Promise<T> {
    return fn(this.pathOf(key));
  }
}

/** Body bytes held in memory at most while a write is in flight (backpressure on the socket beyond that). */
const MAX_GATHERED_BYTES = 4 * 1024 * 1024;

/**
 * Keeps one write in flight and gathers the chunks that arrive meanwhile into the next
 * one: a slow body is written as it comes, a fast one in large writes, and the disk and
 * the socket work side by side (one writev, no copy: joining the chunks into one buffer
 * first halved the throughput). Every write is awaited, and its error thrown, before the
 * file is synced.
 */
class WriteBatch {
  private parts: Uint8Array[] = [];
  private bytes = 0;
  private writing: Promise<void> | null = null;
  private failure: { error: unknown } | null = null;
  constructor(private file: FileHandle) {}

  async add(chunk: Uint8Array): Promise<void> {
    this.parts.push(chunk);
    this.bytes += chunk.byteLength;
    if (this.bytes >= MAX_GATHERED_BYTES) await this.settled();
    if (!this.writing) this.startWrite();
    this.throwFailure();
  }

  /** Writes what is gathered and waits for every write to finish. */
  async flush(): Promise<void> {
    await this.settled();
    if (this.bytes) this.startWrite();
    await this.settled();
  }

  private startWrite(): void {
    const parts = this.parts;
    const bytes = this.bytes;
    this.parts = [];
    this.bytes = 0;
    this.writing = writeAll(this.file, parts, bytes).then(
      () => {
        this.writing = null;
      },
      (error) => {
        this.writing = null;
        this.failure = { error };
      },
    );
  }

  private async settled(): Promise<void> {
    while (this.writing) await this.writing;
    this.throwFailure();
  }

  private throwFailure(): void {
    if (this.failure) throw this.failure.error;
  }
}

/** Writes every byte of `parts` at the file's position: one writev, then whatever it left over (a short write is allowed). */
async function writeAll(file: FileHandle, parts: Uint8Array[], bytes: number): Promise<void> {
  const { bytesWritten } = await file.writev(parts);
  if (bytesWritten < bytes) await file.writeFile(Buffer.concat(parts, bytes).subarray(bytesWritten));
}
