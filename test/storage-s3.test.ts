// S3Storage against a small in-process S3 stand-in (path-style PUT/GET/HEAD/DELETE,
// ListObjectsV2 and multipart uploads): enough of the protocol to exercise Bun's client for
// real. A real store (MinIO, AWS) is still the operator's to verify (docs/recordings.md).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { S3Storage } from "../src/storage/s3";
import { Scratch } from "../src/storage/scratch";
import { makeTempDir, makeTenant, makeTestApp } from "./helpers";
import { captureAutoTranscriptions, uploadedRecording } from "./modules/recordings-support";
import { ObjectTooLargeError } from "../src/storage/storage";

const objects = new Map<string, Uint8Array<ArrayBuffer>>();
const multipart = new Map<string, { key: string; parts: Map<number, Uint8Array<ArrayBuffer>> }>();
const requests: string[] = [];
let server: ReturnType<typeof Bun.serve>;
let storage: S3Storage;

const concat = (parts: Uint8Array<ArrayBuffer>[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) out.set(p, o), (o += p.length);
  return out;
};

function fakeS3(req: Request, body: Uint8Array<ArrayBuffer>): Response {
  const url = new URL(req.url);
  const [, bucket, ...rest] = decodeURIComponent(url.pathname).split("/");
  const key = rest.join("/");
  const q = url.searchParams;
  requests.push(`${req.method} ${key}${q.size ? `?${[...q.keys()].join("&")}` : ""}`);
  if (bucket !== "parley") return new Response("NoSuchBucket", { status: 404 });
  if (req.method === "GET" && q.get("list-type") === "2") {
    const after = q.get("start-after");
    const keys = [...objects.keys()].filter((k) => k.startsWith(q.get("prefix") ?? "") && (after === null || k > after)).sort();
    const contents = keys.map((k) => `<Contents><Key>${k}</Key><Size>${objects.get(k)!.length}</Size></Contents>`).join("");
    return new Response(
      `<?xml version="1.0"?><ListBucketResult><Name>parley</Name><KeyCount>${keys.length}</KeyCount><IsTruncated>false</IsTruncated>${contents}</ListBucketResult>`,
      {
        headers: { "content-type": "application/xml" },
      },
    );
  }
  if (req.method === "POST" && q.has("uploads")) {
    const id = crypto.randomUUID();
    multipart.set(id, { key, parts: new Map() });
    return new Response(
      `<?xml version="1.0"?><InitiateMultipartUploadResult><Bucket>parley</Bucket><Key>${key}</Key><UploadId>${id}</UploadId></InitiateMultipartUploadResult>`,
    );
  }
  if (req.method === "PUT" && q.has("uploadId")) {
    multipart.get(q.get("uploadId")!)!.parts.set(Number(q.get("partNumber")), body);
    return new Response("", { headers: { etag: `"${createHash("md5").update(body).digest("hex")}"` } });
  }
  if (req.method === "POST" && q.has("uploadId")) {
    const upload = multipart.get(q.get("uploadId")!)!;
    objects.set(upload.key, concat([...upload.parts.entries()].sort(([a], [b]) => a - b).map(([, p]) => p)));
    multipart.delete(q.get("uploadId")!);
    return new Response(`<?xml version="1.0"?><CompleteMultipartUploadResult><Key>${upload.key}</Key><ETag>"x"</ETag></CompleteMultipartUploadResult>`);
  }
  if (req.method === "DELETE" && q.has("uploadId")) {
    multipart.delete(q.get("uploadId")!);
    return new Response(null, { status: 204 });
  }
  const stored = objects.get(key);
  if (req.method === "PUT") {
    objects.set(key, body);
    return new Response("", { headers: { etag: '"x"' } });
  }
  if (req.method === "DELETE") {
    objects.delete(key);
    return new Response(null, { status: 204 });
  }
  if (!stored) return new Response(`<?xml version="1.0"?><Error><Code>NoSuchKey</Code></Error>`, { status: 404 });
  const headers = {
    "content-length": String(stored.length),
    etag: '"x"',
    "last-modified": new Date().toUTCString(),
    "content-type": "application/octet-stream",
  };
  if (req.method === "HEAD") return new Response(null, { headers });
  const range = req.headers.get("range")?.match(/bytes=(\d+)-(\d*)/);
  if (range) {
    const start = Number(range[1]);
    const end = range[2] ? Number(range[2]) : stored.length - 1;
    return new Response(stored.slice(start, end + 1), { status: 206, headers: { "content-range": `bytes ${start}-${end}/${stored.length}` } });
  }
  return new Response(stored, { headers });
}

/** Where the S3 objects' local copies go (a data dir's tmp in the app). */
const scratchDir = makeTempDir();

beforeAll(() => {
  server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: async (req) => fakeS3(req, new Uint8Array(await req.arrayBuffer())) });
  storage = new S3Storage(
    {
      bucket: "parley",
      endpoint: `http://127.0.0.1:${server.port}`,
      region: "us-east-1",
      accessKeyId: "test",
      secretAccessKey: "test-secret",
    },
    new Scratch(scratchDir),
  );
});
afterAll(() => server.stop(true));

async function* bytes(...parts: Uint8Array[]) {
  yield* parts;
}
const text = async (s: ReadableStream<Uint8Array>) => new Response(s).text();
const enc = (s: string) => new TextEncoder().encode(s);

describe("S3 storage (against an S3 stand-in)", () => {
  test("write, size, read whole and by range, local file, remove", async () => {
    const r = await storage.write("p/test/rec_1/upload-a", bytes(enc("hello "), enc("world")));
    expect(r).toEqual({ size: 11 });
    expect([...objects.keys()]).toContain("audio/p/test/rec_1/upload-a");
    expect(await storage.size("p/test/rec_1/upload-a")).toBe(11);
    expect(await text(storage.read("p/test/rec_1/upload-a"))).toBe("hello world");
    expect(await text(storage.read("p/test/rec_1/upload-a", { start: 6, end: 10 }))).toBe("world");
    let copy = "";
    const local = await storage.withLocalFile("p/test/rec_1/upload-a", (path) => {
      copy = path;
      return Bun.file(path).text();
    });
    expect(local).toBe("hello world");
    // The copy was in the scratch dir, and is gone once read.
    expect(copy.startsWith(`${scratchDir}/`)).toBe(true);
    expect(existsSync(copy)).toBe(false);
    await storage.remove("p/test/rec_1/upload-a");
    expect(await storage.size("p/test/rec_1/upload-a")).toBeNull();
  });

  test("an object larger than a part goes up as a multipart upload and reads back intact", async () => {
    const mb = new Uint8Array(1024 * 1024).map((_, i) => i & 0xff);
    const parts = Array.from({ length: 10 }, () => mb);
    const r = await storage.write("p/test/rec_2/upload-big", bytes(...parts));
    expect(r.size).toBe(10 * mb.length);
    expect(requests.some((x) => x.startsWith("POST audio/p/test/rec_2/upload-big?uploads"))).toBe(true);
    const whole = new Uint8Array(10 * mb.length);
    parts.forEach((p, i) => whole.set(p, i * mb.length));
    expect(createHash("sha256").update(objects.get("audio/p/test/rec_2/upload-big")!).digest("hex")).toBe(createHash("sha256").update(whole).digest("hex"));
  });

  test("over maxBytes nothing becomes visible under the key", async () => {
    const mb = new Uint8Array(1024 * 1024);
    await expect(storage.write("p/test/rec_3/upload-a", bytes(mb, mb, mb), { maxBytes: 2 * mb.length })).rejects.toBeInstanceOf(ObjectTooLargeError);
    expect(await storage.size("p/test/rec_3/upload-a")).toBeNull();
    // Also once a multipart upload has started (past one 8 MB part): it is never completed.
    const big = Array.from({ length: 12 }, () => mb);
    await expect(storage.write("p/test/rec_3/upload-b", bytes(...big), { maxBytes: 11 * mb.length })).rejects.toBeInstanceOf(ObjectTooLargeError);
    Bun.gc(true);
    await Bun.sleep(100);
    expect(await storage.size("p/test/rec_3/upload-b")).toBeNull();
  });

  test("removePrefix deletes a recording's objects and nothing else", async () => {
    await storage.write("p/test/rec_4/a", bytes(enc("1")));
    await storage.write("p/test/rec_4/b", bytes(enc("2")));
    await storage.write("p/test/rec_40/a", bytes(enc("3")));
    await storage.removePrefix("p/test/rec_4/");
    expect(await storage.size("p/test/rec_4/a")).toBeNull();
    expect(await storage.size("p/test/rec_4/b")).toBeNull();
    expect(await storage.size("p/test/rec_40/a")).toBe(1);
  });

  test("list gives every key in order, and resumes after a given one", async () => {
    const all: string[] = [];
    for await (const key of storage.list(null)) all.push(key);
    expect(all).toEqual([...all].sort());
    expect(all).toContain("p/test/rec_40/a");
    const rest: string[] = [];
    for await (const key of storage.list(all[0]!)) rest.push(key);
    expect(rest).toEqual(all.slice(1));
  });
});

test("the whole recording flow on S3: upload, verify, probe, ranged download, delete", async () => {
  const t = await makeTestApp({
    env: {
      PARLEY_S3_BUCKET: "parley",
      PARLEY_S3_ENDPOINT: `http://127.0.0.1:${server.port}`,
      PARLEY_S3_ACCESS_KEY_ID: "test",
      PARLEY_S3_SECRET_ACCESS_KEY: "test-secret",
      PARLEY_S3_REGION: "us-east-1",
    },
  });
  captureAutoTranscriptions(t);
  const tenant = makeTenant(t.deps, "s3-flow");
  const { recording, bytes: original } = await uploadedRecording(t, tenant.test, "tone-3s.mp3");
  expect(recording).toMatchObject({ status: "uploaded", format: "mp3", duration_seconds: 3 });
  const prefix = `audio/${tenant.project.id}/test/${recording.id}/`;
  expect([...objects.keys()].some((k) => k.startsWith(prefix))).toBe(true);
  // Sealed in the bucket (decision 105): not the uploaded bytes.
  const stored = [...objects.entries()].filter(([k]) => k.startsWith(prefix)).map(([, v]) => Buffer.from(v));
  expect(stored.every((v) => v.subarray(0, 8).toString() === "PRLYAE01" && !v.includes(Buffer.from(original.subarray(1000, 1064))))).toBe(true);
  const r = await t.app.handle(
    new Request(`http://localhost/v1/recordings/${recording.id}/audio`, { headers: { authorization: `Bearer ${tenant.test}`, range: "bytes=0-9" } }),
  );
  expect(r.status).toBe(206);
  expect(new Uint8Array(await r.arrayBuffer())).toEqual(original.slice(0, 10));
  expect((await t.call("DELETE", `/v1/recordings/${recording.id}`, { key: tenant.test })).status).toBe(204);
  await t.deps.queue.drain();
  expect([...objects.keys()].some((k) => k.startsWith(prefix))).toBe(false);
});
