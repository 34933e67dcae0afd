// A client generated from the OpenAPI document with openapi-typescript and openapi-fetch, as
// an integrator makes one: it uploads audio bytes, reads the rate-limit headers and sends a
// Range header, with no cast anywhere (tsc --strict checks it), against the real server.
// Both tools are devDependencies, so the suite always runs it.
import { afterAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HashingTestEmbedder } from "../../src/engines/embedder.test-double";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { buildOpenApiDocument } from "../../src/http/openapi";
import { documentedRoutes } from "../../src/app";
import { makeTempDir, makeTenant, makeTestApp } from "../helpers";
import { fixture, sha256 } from "../modules/recordings-support";

const TOOLS = join(import.meta.dir, "../../node_modules");

/** The integrator's code: nothing here is cast, so tsc refuses it if the document does not type it. */
const CLIENT = `
import createClient from "openapi-fetch";
import type { paths } from "./schema";

type Remaining = paths["/v1/uploads/{token}"]["put"]["responses"][200]["headers"]["X-RateLimit-Remaining"];

export async function upload(baseUrl: string, key: string, audio: Blob) {
  const client = createClient<paths>({ baseUrl, headers: { authorization: "Bearer " + key } });
  const created = await client.POST("/v1/recordings", { body: { name: "from a generated client" } });
  if (!created.data) throw new Error("create failed");
  const url = await client.POST("/v1/recordings/{id}/upload-url", { params: { path: { id: created.data.id } }, body: { content_type: "audio/wav" } });
  if (!url.data) throw new Error("upload-url failed");
  const token = new URL(url.data.upload_url).pathname.split("/").pop() ?? "";
  const put = await client.PUT("/v1/uploads/{token}", {
    params: { path: { token } },
    body: audio,
    bodySerializer: (body) => body,
    headers: { "content-type": "audio/wav" },
  });
  const remaining: Remaining = Number(put.response.headers.get("X-RateLimit-Remaining"));
  return { id: created.data.id, status: put.response.status, stored: put.data?.file_size_bytes, remaining };
}

export async function firstBytes(baseUrl: string, key: string, id: string) {
  const client = createClient<paths>({ baseUrl, headers: { authorization: "Bearer " + key } });
  const res = await client.GET("/v1/recordings/{id}/audio", { params: { path: { id }, header: { Range: "bytes=0-9" } }, parseAs: "arrayBuffer" });
  return { status: res.response.status, contentRange: res.response.headers.get("Content-Range"), bytes: res.data ? new Uint8Array(res.data) : null };
}
`;

describe("a client generated with openapi-typescript and openapi-fetch", () => {
  let server: ReturnType<typeof Bun.serve> | undefined;
  afterAll(() => server?.stop(true));

  test("type-checks without a cast, uploads bytes, reads the rate-limit headers and asks for a byte range", async () => {
    const t = await makeTestApp({ engines: { embedder: new HashingTestEmbedder(), transcriber: new ScriptedTranscriber() } });
    const key = makeTenant(t.deps).test;
    server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => t.app.handle(req) });
    const base = `http://127.0.0.1:${server.port}`;

    const dir = makeTempDir();
    symlinkSync(TOOLS, join(dir, "node_modules"));
    const { default: openapiTS, astToString } = await import(join(TOOLS, "openapi-typescript/dist/index.mjs"));
    const ts = await import(join(TOOLS, "typescript/lib/typescript.js"));
    // openapi-typescript's documented way to make binary bodies Blobs (its default is string).
    const ast = await openapiTS(buildOpenApiDocument(documentedRoutes(t.deps)), {
      transform: (schema: { format?: string }) => (schema.format === "binary" ? ts.factory.createTypeReferenceNode("Blob") : undefined),
    });
    writeFileSync(join(dir, "schema.d.ts"), astToString(ast));
    writeFileSync(join(dir, "client.ts"), CLIENT);
    const tsc = join(TOOLS, "typescript/bin/tsc");
    const flags = [
      "--noEmit",
      "--strict",
      "--target",
      "es2022",
      "--module",
      "esnext",
      "--moduleResolution",
      "bundler",
      "--lib",
      "es2022,dom",
      "--skipLibCheck",
    ];
    try {
      execFileSync(process.execPath, [tsc, ...flags, join(dir, "client.ts")], { cwd: dir, stdio: "pipe" });
    } catch (err) {
      throw new Error(`the generated client does not type-check:\n${(err as { stdout?: Buffer }).stdout?.toString()}`);
    }

    const client = await import(join(dir, "client.ts"));
    const bytes = fixture("tone-3s.wav");
    const uploaded = await client.upload(base, key, new Blob([bytes]));
    expect(uploaded).toMatchObject({ status: 200, stored: bytes.length });
    expect(uploaded.remaining).toBeGreaterThan(0);
    const completion = { sha256: sha256(bytes), file_size_bytes: bytes.length };
    expect((await t.call("POST", `/v1/recordings/${uploaded.id}/upload-complete`, { key, body: completion })).status).toBe(425);
    await t.deps.queue.drain();
    expect((await t.call("POST", `/v1/recordings/${uploaded.id}/upload-complete`, { key, body: completion })).status).toBe(200);

    const range = await client.firstBytes(base, key, uploaded.id);
    expect(range.status).toBe(206);
    expect(range.contentRange).toBe(`bytes 0-9/${bytes.length}`);
    expect([...range.bytes]).toEqual([...bytes.subarray(0, 10)]);
  }, 120_000);
});
