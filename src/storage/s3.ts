import { join } from "node:path";
import { S3Client } from "bun";
import type { Config } from "../config";
import type { Scratch } from "./scratch";
import { assertSafeKey, type ByteRange, ObjectTooLargeError, type Storage, type WriteResult } from "./storage";

/** The prefix objects live under in the bucket, mirroring <dataDir>/audio on local disk. */
export const S3_PREFIX = "audio/";
const PART_SIZE = 8 * 1024 * 1024;

/**
 * Objects in any S3-compatible store (AWS, MinIO, Ceph, R2) through Bun's S3 client.
 * Writes stream as a multipart upload, which S3 makes visible only when completed, so a
 * crash mid-write never leaves a partial object under the key (the bucket should expire
 * incomplete multipart uploads with a lifecycle rule; see docs/recordings.md).
 */
export class S3Storage implements Storage {
  readonly kind = "s3" as const;
  readonly client: S3Client;

  constructor(
    options: NonNullable<Config["s3"]>,
    private readonly scratch: Scratch,
  ) {
    this.client = new S3Client({
      bucket: options.bucket,
      endpoint: options.endpoint,
      region: options.region,
      accessKeyId: options.accessKeyId,
      secretAccessKey: options.secretAccessKey,
    });
  }

  /** The object key in the bucket for a storage key. */
  objectKey(key: string): string {
    assertSafeKey(key);
    return `${S3_PREFIX}${key}`;
  }

  async write(key: string, body: AsyncIterable<Uint8Array>, options: { maxBytes?: number } = {}): Promise<WriteResult> {
    const file = this.client.file(this.objectKey(key));
    const writer = file.writer({ partSize: PART_SIZE, queueSize: 2 });
    let size = 0;
    let unflushed = 0;
    for await (const chunk of body) {
      size += chunk.byteLength;
      // Leaving without end() abandons the multipart upload: the key is never written.
      if (options.maxBytes !== undefined && size > options.maxBytes) throw new ObjectTooLargeError(options.maxBytes);
      writer.write(chunk);
      unflushed += chunk.byteLength;
      // Waiting on a flush once per part bounds memory to a few parts however fast the client sends.
      if (unflushed >= PART_SIZE) {
        await writer.flush();
        unflushed = 0;
      }
    }
    await writer.end();
    return { size };
  }

  async size(key: string): Promise<number | null> {
    const file = this.client.file(this.objectKey(key));
    if (!(await file.exists())) return null;
    return (await file.stat()).size;
  }

  read(key: string, range?: ByteRange): ReadableStream<Uint8Array> {
    const file = this.client.file(this.objectKey(key));
    return (range ? file.slice(range.start, range.end + 1) : file).stream();
  }

  async remove(key: string): Promise<void> {
    await this.client.file(this.objectKey(key)).delete();
  }

  async removePrefix(prefix: string): Promise<void> {
    const full = this.objectKey(prefix.replace(/\/$/, "")) + "/";
    for (;;) {
      const page = await this.client.list({ prefix: full, maxKeys: 1000 });
      const keys = (page.contents ?? []).map((c) => c.key);
      await Promise.all(keys.map((k) => this.client.file(k).delete()));
      if (!page.isTruncated || keys.length === 0) return;
    }
  }

  /** S3 lists keys in UTF-8 byte order, which is code-point order for our (ASCII) keys. */
  async *list(after: string | null): AsyncGenerator<string> {
    let startAfter = after === null ? undefined : `${S3_PREFIX}${after}`;
    for (;;) {
      const page = await this.client.list({ prefix: S3_PREFIX, maxKeys: 1000, startAfter });
      const keys = (page.contents ?? []).map((c) => c.key);
      for (const key of keys) yield key.slice(S3_PREFIX.length);
      if (!page.isTruncated || keys.length === 0) return;
      startAfter = keys.at(-1);
    }
  }

  /** Incomplete multipart uploads are the bucket's lifecycle rule's to expire. */
  async sweepPartial(): Promise<number> {
    return 0;
  }

  withLocalFile<T>(key: string, fn: (path: string) => Promise<T>): Promise<T> {
    return this.scratch.withDir(async (dir) => {
      const path = join(dir, "object");
      await Bun.write(path, this.client.file(this.objectKey(key)));
      return fn(path);
    });
  }
}
