// Deleting a project (decision 107): `parley projects delete` erases its recordings through
// DELETE's path, refuses while a legal hold is active, destroys the project's data key (a
// copy of its sealed audio can never be read again) and is audited as the operator.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { chunksOf } from "../../src/storage";
import { LocalStorage } from "../../src/storage/local";
import { verifyAuditChain } from "../../src/modules/audit/service";
import { makeTenant, makeTestApp } from "../helpers";
import { sha256, uploadedRecording } from "./recordings-support";

const CLI = join(import.meta.dir, "..", "..", "src", "cli.ts");

async function parley(dataDir: string, args: string[]) {
  const env = { PATH: process.env.PATH ?? "", PARLEY_DATA_DIR: dataDir, PARLEY_LOG_LEVEL: "silent" };
  const proc = Bun.spawn([process.execPath, CLI, ...args], { env, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const p of chunksOf(stream)) parts.push(p);
  return Buffer.concat(parts);
}

describe("parley projects delete", () => {
  test("refuses under a hold, says what it would erase without --yes, then erases everything and destroys the data key", async () => {
    const t = await makeTestApp();
    const dataDir = t.deps.config.dataDir;
    const doomed = makeTenant(t.deps, "doomed-clinic");
    const kept = makeTenant(t.deps, "kept-clinic");
    const key = doomed.test;
    const endUser = (await t.call("POST", "/v1/end-users", { key, body: { name: "Patient" }, headers: { "idempotency-key": "patient-1" } })).body.id as string;
    await t.call("POST", "/v1/devices", { key, body: { serial_number: "SN-DOOMED-1", model: "parley_pin" } });
    expect((await t.call("POST", "/v1/webhooks", { key, body: { url: "https://10.255.255.1/hook", events: ["*"] } })).status).toBe(201);
    expect((await t.call("PUT", "/v1/config/project", { key, body: { auto_transcribe: false } })).status).toBe(200);
    const { recording } = await uploadedRecording(t, key, "tone-3s.wav", { end_user_id: endUser });
    const live = await uploadedRecording(t, doomed.live);
    const other = await uploadedRecording(t, kept.test);
    expect((await t.call("POST", "/v1/exports", { key, body: { recording_ids: [recording.id] } })).status).toBe(202);
    await t.deps.queue.drain();

    const storageKey = t.deps.db.query<{ storage_key: string }, [string]>("SELECT storage_key FROM recordings WHERE id = ?").get(recording.id)!.storage_key;
    const sealedCopy = readFileSync(join(dataDir, "audio", storageKey)); // what a backup or a stolen copy holds
    expect(sealedCopy.subarray(0, 8).toString()).toBe("PRLYAE01");

    const hold = (await t.call("POST", "/v1/legal-holds", { key, body: { matter: "Doe v. Clinic", end_user_id: endUser } })).body;
    const refused = await parley(dataDir, ["projects", "delete", "doomed-clinic", "--yes"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("legal hold");
    expect(refused.stderr).toContain(hold.id);
    expect((await t.call("GET", `/v1/recordings/${recording.id}/audio`, { key })).status).toBe(200);
    await t.call("POST", `/v1/legal-holds/${hold.id}/release`, { key });

    const unconfirmed = await parley(dataDir, ["projects", "delete", "doomed-clinic"]);
    expect(unconfirmed.code).toBe(1);
    expect(unconfirmed.stdout).toContain("would erase 2 recording(s)");
    expect(unconfirmed.stderr).toContain("--yes");
    expect((await t.call("GET", `/v1/recordings/${recording.id}`, { key })).status).toBe(200);

    const deleted = await parley(dataDir, ["projects", "delete", "doomed-clinic", "--yes", "--json"]);
    expect(deleted.stderr).toBe("");
    expect(deleted.code).toBe(0);
    expect(JSON.parse(deleted.stdout)).toMatchObject({ id: doomed.project.id, recordings_erased: 2, data_key: "destroyed", deleted: true });

    // The project, its keys, rows and stored objects are gone; its data key with them.
    expect((await t.call("GET", `/v1/recordings/${recording.id}`, { key })).status).toBe(401);
    const count = (sql: string) => t.deps.db.query<{ n: number }, [string]>(sql).get(doomed.project.id)!.n;
    for (const table of [
      "projects WHERE id",
      "data_keys WHERE project_id",
      "recordings WHERE project_id",
      "end_users WHERE project_id",
      "devices WHERE project_id",
      "credentials WHERE project_id",
      "exports WHERE project_id",
      "legal_holds WHERE project_id",
      "webhook_endpoints WHERE project_id",
      "events WHERE project_id",
      "idempotency_keys WHERE project_id",
      "config_overrides WHERE project_id",
    ]) {
      expect({ table, n: count(`SELECT count(*) AS n FROM ${table} = ?`) }).toEqual({ table, n: 0 });
    }
    expect(existsSync(join(dataDir, "audio", doomed.project.id))).toBe(false);
    expect((await parley(dataDir, ["projects", "list", "--json"])).stdout).not.toContain("doomed-clinic");

    // The copy put back where it was cannot be decrypted, by this server (which had the key cached) or any other.
    await new LocalStorage(join(dataDir, "audio")).write(
      storageKey,
      (async function* () {
        yield sealedCopy;
      })(),
    );
    await expect(readAll(t.deps.storage.read(storageKey))).rejects.toThrow("destroyed");

    // Audited as the operator at the CLI: the project and each recording; the chain still holds.
    const audit = t.deps.db
      .query<{ action: string; actor_type: string; resource_ids: string }, []>(
        "SELECT action, actor_type, resource_ids FROM audit_events WHERE action IN ('project.delete', 'recording.delete') ORDER BY seq",
      )
      .all();
    expect(audit.map((a) => [a.action, a.actor_type, JSON.parse(a.resource_ids)])).toEqual([
      ["recording.delete", "operator", [recording.id]],
      ["recording.delete", "operator", [live.recording.id]],
      ["project.delete", "operator", [doomed.project.id]],
    ]);
    expect(verifyAuditChain(t.deps.db).ok).toBe(true);

    // The other project is untouched.
    const download = await t.app.handle(
      new Request(`http://localhost/v1/recordings/${other.recording.id}/audio`, { headers: { authorization: `Bearer ${kept.test}` } }),
    );
    expect(sha256(new Uint8Array(await download.arrayBuffer()))).toBe(sha256(other.bytes));
  });

  test("an unknown project is an error naming it", async () => {
    const t = await makeTestApp();
    const r = await parley(t.deps.config.dataDir, ["projects", "delete", "no-such-project", "--yes"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("No project named no-such-project");
  });
});
