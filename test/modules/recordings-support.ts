import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { issueCredential } from "../../src/http/credentials";
import type { makeTenant, makeTestApp } from "../helpers";

export type T = Awaited<ReturnType<typeof makeTestApp>>;
export type Tenant = ReturnType<typeof makeTenant>;

export const FIXTURES = join(import.meta.dir, "..", "fixtures");
export const fixture = (name: string): Uint8Array<ArrayBuffer> => new Uint8Array(readFileSync(join(FIXTURES, name)));
export const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

/** The path part of an upload URL, for t.call. */
export const pathOf = (url: string) => new URL(url).pathname;

/** Replaces the pipeline's handler so these tests see exactly what upload completion enqueues. */
export function captureAutoTranscriptions(t: T): unknown[] {
  const seen: unknown[] = [];
  t.deps.queue.register("transcriptions.auto", ({ payload }) => void seen.push(payload));
  return seen;
}

/** A device token for a device of the tenant's project (dtok_ carries deviceId and endUserId). */
export function deviceToken(t: T, tenant: Tenant, deviceId: string, endUserId: string | null, mode: "test" | "live" = "test"): string {
  return issueCredential(t.deps.db, { kind: "device", projectId: tenant.project.id, mode, deviceId, endUserId, now: t.clock.now() }).token;
}

export async function createRecording(t: T, key: string, body: Record<string, unknown> = {}) {
  const r = await t.call("POST", "/v1/recordings", { key, body });
  if (r.status !== 201) throw new Error(`create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** upload-url, then the PUT of `bytes`; returns the PUT reply. */
export async function put(t: T, key: string, id: string, bytes: Uint8Array<ArrayBuffer>, extra: Record<string, unknown> = {}) {
  const u = await t.call("POST", `/v1/recordings/${id}/upload-url`, { key, body: { content_type: "audio/wav", ...extra } });
  if (u.status !== 200) throw new Error(`upload-url failed: ${u.status} ${JSON.stringify(u.body)}`);
  return t.call("PUT", pathOf(u.body.upload_url), { rawBody: bytes, headers: { "content-type": "audio/wav" } });
}

/** The whole happy path: create, PUT, complete with the hash, verify, complete again. */
export async function uploadedRecording(t: T, key: string, file = "tone-3s.wav", body: Record<string, unknown> = {}) {
  const rec = await createRecording(t, key, body);
  const bytes = fixture(file);
  await put(t, key, rec.id, bytes);
  const completion = { sha256: sha256(bytes), file_size_bytes: bytes.length };
  const first = await t.call("POST", `/v1/recordings/${rec.id}/upload-complete`, { key, body: completion });
  if (first.status !== 425) throw new Error(`complete failed: ${first.status} ${JSON.stringify(first.body)}`);
  await t.deps.queue.drain();
  const done = await t.call("POST", `/v1/recordings/${rec.id}/upload-complete`, { key, body: completion });
  if (done.status !== 200) throw new Error(`complete retry failed: ${done.status} ${JSON.stringify(done.body)}`);
  return { recording: done.body, bytes };
}

export function eventsOf(t: T, type: string): any[] {
  return t.deps.db
    .query<{ data: string }, [string]>("SELECT data FROM events WHERE type = ? ORDER BY created_at, id")
    .all(type)
    .map((r) => JSON.parse(r.data));
}
