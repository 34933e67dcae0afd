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
  consumeCredential(t.deps, usedReset, now);
  const revokedDevice = issue("device");
  t.deps.db.query("UPDATE credentials SET revoked_at = ? WHERE id = ?").run(now.toISOString(), revokedDevice);
  const liveDevice = issue("device");
  const revokedKey = t.deps.db.query<{ id: string }, []>("SELECT id FROM credentials WHERE kind = 'secret' LIMIT 1").get()!.id;
  t.deps.db.query("UPDATE credentials SET revoked_at = ? WHERE id = ?").run(now.toISOString(), revokedKey);

  const alive = () =>
    new Set(
      t.deps.db
        .query<{ id: string }, []>("SELECT id FROM credentials")
        .all()
        .map((r) => r.id),
    );
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

test("purge-finished-jobs drops done jobs after a week and dead ones after 30 days, never queued or running ones", async () => {
  const t = await makeTestApp();
  const insert = t.deps.db.query(
    "INSERT INTO jobs (id, type, payload, state, attempts, max_attempts, run_at, created_at, updated_at) VALUES (?, 'test.kind', '{}', ?, 1, 5, ?, ?, ?)",
  );
  const at = t.clock.now().toISOString();
  for (const state of ["done", "dead", "queued", "running"]) insert.run(`job_${state}`, state, at, at, at);
  const left = () =>
    t.deps.db
      .query<{ id: string }, []>("SELECT id FROM jobs WHERE type = 'test.kind' ORDER BY id")
      .all()
      .map((r) => r.id);
  t.clock.advance(8 * DAY);
  await t.runTask("purge-finished-jobs");
  expect(left()).toEqual(["job_dead", "job_queued", "job_running"]);
  t.clock.advance(23 * DAY);
  await t.runTask("purge-finished-jobs");
  expect(left()).toEqual(["job_queued", "job_running"]);
});

test("the stuck-verification sweep reads the partial index, not the whole recordings table", async () => {
  const t = await makeTestApp();
  const plan = t.deps.db.query<{ detail: string }, []>("EXPLAIN QUERY PLAN SELECT id, project_id, mode FROM recordings WHERE verification = 'pending'").all();
  expect(plan.map((p) => p.detail).join(" ")).toContain("recordings_verifying");
});
