// Export archives can be deleted and expire (decision 107): the archive file goes, the export
// stays on record as deleted or expired with no download_url, its download is 404, audited.
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { makeTenant, makeTestApp } from "../helpers";
import { seedRecording, voiced, wav } from "./pipeline-fixtures";

const DAY = 86_400_000;

async function archivedApp(env: Record<string, string> = {}) {
  const t = await makeTestApp({ env });
  const tenant = makeTenant(t.deps);
  const key = tenant.test;
  const recording = await seedRecording(t.deps, { projectId: tenant.project.id, mode: "test" }, wav(voiced(1)));
  const build = async () => {
    const created = await t.call("POST", "/v1/exports", { key, body: { matter: "Doe v. Roe", recording_ids: [recording] } });
    await t.deps.queue.drain();
    const done = (await t.call("GET", `/v1/exports/${created.body.id}`, { key })).body;
    expect(done.status).toBe("completed");
    return done;
  };
  const archiveFile = (id: string) => join(t.deps.config.dataDir, "audio", tenant.project.id, "test", id, "archive");
  const download = (id: string) => t.call("GET", `/v1/exports/${id}/download`, { key });
  const auditOf = (id: string) =>
    t.deps.db
      .query<{ action: string; actor_type: string; actor_id: string }, [string]>(
        "SELECT action, actor_type, actor_id FROM audit_events WHERE resource_ids LIKE ? ORDER BY seq",
      )
      .all(`%${id}%`);
  return { t, tenant, key, build, archiveFile, download, auditOf };
}

describe("DELETE /v1/exports/{id}", () => {
  test("erases the archive; the export stays as deleted with no download_url; its download is 404; audited", async () => {
    const { t, key, build, archiveFile, download, auditOf } = await archivedApp();
    const done = await build();
    expect(existsSync(archiveFile(done.id))).toBe(true);

    expect((await t.call("DELETE", `/v1/exports/${done.id}`, { key })).status).toBe(204);
    await t.deps.queue.drain();
    expect(existsSync(archiveFile(done.id))).toBe(false);
    const after = (await t.call("GET", `/v1/exports/${done.id}`, { key })).body;
    expect(after).toMatchObject({ status: "deleted", download_url: null, erased_at: t.clock.now().toISOString(), sha256: done.sha256 });
    const gone = await download(done.id);
    expect({ status: gone.status, code: gone.body.error.code }).toEqual({ status: 404, code: "not_found" });
    expect(gone.body.error.message).toContain("was deleted");

    expect((await t.call("DELETE", `/v1/exports/${done.id}`, { key })).status).toBe(204); // again: nothing more to do
    expect(auditOf(done.id).map((a) => a.action)).toEqual(["export.create", "export.delete"]);
    expect((await t.call("GET", "/v1/exports", { key })).body.data[0]).toMatchObject({ id: done.id, status: "deleted" });
  });

  test("errors and security: unknown 404, a build in progress 409, read-only keys 403, other projects 404", async () => {
    const { t, tenant, key, build } = await archivedApp();
    const done = await build();
    expect((await t.call("DELETE", "/v1/exports/exp_unknown", { key })).body.error.code).toBe("not_found");

    const recording = await seedRecording(t.deps, { projectId: tenant.project.id, mode: "test" }, wav(voiced(1)));
    const building = (await t.call("POST", "/v1/exports", { key, body: { recording_ids: [recording] } })).body;
    const conflict = await t.call("DELETE", `/v1/exports/${building.id}`, { key });
    expect({ status: conflict.status, code: conflict.body.error.code }).toEqual({ status: 409, code: "resource_conflict" });

    const readOnly = tenant.key("test", { scopes: ["exports:read"] });
    expect((await t.call("DELETE", `/v1/exports/${done.id}`, { key: readOnly })).status).toBe(403);
    const other = makeTenant(t.deps);
    expect((await t.call("DELETE", `/v1/exports/${done.id}`, { key: other.test })).status).toBe(404);
    expect((await t.call("DELETE", `/v1/exports/${done.id}`, { key: tenant.live })).status).toBe(404);
    expect((await t.call("GET", `/v1/exports/${done.id}`, { key })).body.status).toBe("completed");
  });
});

describe("export archives expire", () => {
  test("after PARLEY_EXPORT_RETENTION_DAYS the daily retention run erases the archive, audited as the system", async () => {
    const { t, key, build, archiveFile, download, auditOf } = await archivedApp({ PARLEY_EXPORT_RETENTION_DAYS: "7" });
    const done = await build();
    t.clock.advance(6 * DAY);
    await t.runTask("expire-recordings");
    expect((await t.call("GET", `/v1/exports/${done.id}`, { key })).body.status).toBe("completed");

    t.clock.advance(DAY + 1000);
    await t.runTask("expire-recordings");
    await t.deps.queue.drain();
    const expired = (await t.call("GET", `/v1/exports/${done.id}`, { key })).body;
    expect(expired).toMatchObject({ status: "expired", download_url: null, erased_at: t.clock.now().toISOString() });
    expect(existsSync(archiveFile(done.id))).toBe(false);
    const gone = await download(done.id);
    expect({ status: gone.status, code: gone.body.error.code }).toEqual({ status: 404, code: "not_found" });
    expect(gone.body.error.message).toContain("expired");
    expect(auditOf(done.id).at(-1)).toEqual({ action: "export.expire", actor_type: "system", actor_id: "retention" });
  });

  test("0 keeps archives", async () => {
    const { t, key, build, archiveFile } = await archivedApp({ PARLEY_EXPORT_RETENTION_DAYS: "0" });
    const done = await build();
    t.clock.advance(400 * DAY);
    await t.runTask("expire-recordings");
    await t.deps.queue.drain();
    expect((await t.call("GET", `/v1/exports/${done.id}`, { key })).body.status).toBe("completed");
    expect(existsSync(archiveFile(done.id))).toBe(true);
  });
});
