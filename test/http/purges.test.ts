import { expect, test } from "bun:test";
import { consumeCredential, issueCredential } from "../../src/http/credentials";
import { makeTenant, makeTestApp } from "../helpers";

const DAY = 24 * 60 * 60 * 1000;

test("purge-spent-tokens drops upload, reset and device tokens a week after they stopped working, never API keys", async () => {
  const t = await makeTestApp();
  const acme = makeTenant(t.deps);
  const tenant = { projectId: acme.project.id, mode: "test" as const };
  const now = t.clock.now();
  const issue = (kind: "upload" | "reset" | "device", expiresAt: Date | null = null) => issueCredential(t.deps.db, { ...tenant, kind, expiresAt, now }).id;
  const expiredUpload = issue("upload", new Date(now.getTime() + 15 * 60 * 1000));
  const usedReset = issue("reset");
  consumeCredential(t.deps.db, usedReset, now);
  const revokedDevice = issue("device");
  t.deps.db.query("UPDATE credentials SET revoked_at = ? WHERE id = ?").run(now.toISOString(), revokedDevice);
  const liveDevice = issue("device");
  const revokedKey = t.deps.db.query<{ id: string }, []>("SELECT id FROM credentials WHERE kind = 'secret' LIMIT 1").get()!.id;
  t.deps.db.query("UPDATE credentials SET revoked_at = ? WHERE id = ?").run(now.toISOString(), revokedKey);

  const alive = () => new Set(t.deps.db.query<{ id: string }, []>("SELECT id FROM credentials").all().map((r) => r.id));
  t.clock.advance(6 * DAY);
  await t.runTask("purge-spent-tokens");
  for (const id of [expiredUpload, usedReset, revokedDevice, liveDevice, revokedKey]) expect(alive().has(id)).toBe(true);

  t.clock.advance(2 * DAY);
  await t.runTask("purge-spent-tokens");
  const left = alive();
  for (const id of [expiredUpload, usedReset, revokedDevice]) expect(left.has(id)).toBe(false);
  for (const id of [liveDevice, revokedKey]) expect(left.has(id)).toBe(true);
});

test("purge-idempotency-keys drops keys past 24 hours and keeps younger ones", async () => {
  const t = await makeTestApp();
  const acme = makeTenant(t.deps);
  const rows = () => (t.deps.db.query("SELECT COUNT(*) AS n FROM idempotency_keys").get() as { n: number }).n;
  await t.call("POST", "/v1/end-users", { key: acme.test, body: { name: "old" }, headers: { "idempotency-key": "old" } });
  t.clock.advance(20 * 60 * 60 * 1000);
  await t.call("POST", "/v1/end-users", { key: acme.test, body: { name: "young" }, headers: { "idempotency-key": "young" } });
  expect(rows()).toBe(2);
  t.clock.advance(5 * 60 * 60 * 1000);
  await t.runTask("purge-idempotency-keys");
  expect(rows()).toBe(1);
});
