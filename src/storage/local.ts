import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { mkdir, open, readdir, rename, rm, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { assertSafeKey, type ByteRange, ObjectTooLargeError, type Storage, type WriteResult } from "./storage";

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
    mkdirSync(this.tmpDir, { recursive: true });
  }

  pathOf(key: string): string {
    assertSafeKey(key);
    return join(this.root, key);
  }

  async write(key: string, body: AsyncIterable<Uint8Array>, options: { maxBytes?: number } = {}): Promise<WriteResult> {
    const target = this.pathOf(key);
    const tmp = join(this.tmpDir, `${randomBytes(12).toString("hex")}.part`);
    let size = 0;
    // Bun's native FileSink: measured about 1.6x the throughput of awaiting fs writes per chunk.
    const sink = Bun.file(tmp).writer({ highWaterMark: 1024 * 1024 });
    try {
      for await (const chunk of body) {
        size += chunk.byteLength;
        if (options.maxBytes !== undefined && size > options.maxBytes) throw new ObjectTooLargeError(options.maxBytes);
        sink.write(chunk);
      }
      await sink.end();
      await syncPath(tmp);
    } catch (err) {
      await Promise.resolve(sink.end()).catch(() => {});
      await rm(tmp, { force: true });
      throw err;
    }
    await mkdir(dirname(target), { recursive: true });
    await rename(tmp, target);
    await syncPath(dirname(target));
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

  async sweepPartial(before: Date): Promise<number> {
    let removed = 0;
    for (const name of await readdir(this.tmpDir)) {
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

/** fsync of a file makes its bytes durable; of a directory, a rename in it. */
async function syncPath(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
