import { describe, expect, spyOn, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import type { Role } from "../../src/http/roles";
import { adminCommand } from "../../src/modules/admins/cli";
import { createAdmin } from "../../src/modules/admins/service";
import { addFirmware } from "../../src/modules/firmware/releases";
import { makeTempDir, makeTenant, makeTestApp } from "../helpers";
import { concat, seedRecording, silence, voiced, wav } from "./pipeline-fixtures";

// Issue 32 items 2 and 3 (decisions 136, 137): roles limit a session, break-glass opens one
// end user's content to a role without it, for a while, with a reason, on the record.

type T = Awaited<ReturnType<typeof makeTestApp>>;
const PASSWORD = "correct horse battery staple";

/** A signed-in session of a new account with this role, acting in the tenant's project, test mode. */
async function sessionAs(t: T, role: Role, projectId: string, email = `${role}@clinic.example`) {
  await createAdmin(t.deps.db, email, PASSWORD, role, t.clock.now());
  const signedIn = await t.call("POST", "/dashboard/api/session", { body: { email, password: PASSWORD } });
  const headers = { cookie: signedIn.headers.get("set-cookie")!.split(";")[0]!, "x-csrf-token": signedIn.body.csrf_token };
  expect((await t.call("PUT", "/dashboard/api/session/tenant", { headers, body: { project_id: projectId, mode: "test" } })).status).toBe(200);
  return { id: signedIn.body.admin.id as string, email, call: (method: string, path: string, body?: unknown) => t.call(method, path, { headers, body }) };
}

/** Two end users, each with a transcribed recording. */
async function appWithContent(env: Record<string, string> = {}) {
  const t = await makeTestApp({ env, engines: { transcriber: new ScriptedTranscriber(), llm: new ScriptedLlm() } });
  const acme = makeTenant(t.deps, "acme");
  const tenant = { projectId: acme.project.id, mode: "test" as const };
  const person = async (name: string) => {
    const endUser = (await t.call("POST", "/v1/end-users", { key: acme.test, body: { name } })).body.id as string;
    const recording = await seedRecording(t.deps, tenant, wav(concat(voiced(2), silence(1), voiced(2))), { endUserId: endUser });
    const transcription = (await t.call("POST", "/v1/transcriptions", { key: acme.test, body: { recording_id: recording } })).body.id as string;
    return { endUser, recording, transcription };
  };
  const alice = await person("Alice");
  const bob = await person("Bob");
  await t.deps.queue.drain();
  return { t, acme, alice, bob };
}

describe("break-glass", () => {
  test("a compliance session is refused a transcript, opens break-glass with a reason, reads that end user's content and no one else's", async () => {
    const { t, acme, alice, bob } = await appWithContent({ PARLEY_BREAK_GLASS_MINUTES: "5" });
    const officer = await sessionAs(t, "compliance", acme.project.id);

    // Metadata is the role's; content is not.
    expect((await officer.call("GET", `/v1/recordings/${alice.recording}`)).status).toBe(200);
    const refused = await officer.call("GET", `/v1/transcriptions/${alice.transcription}`);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("forbidden");
    expect(refused.body.error.message).toContain("break-glass");

    const short = await officer.call("POST", "/dashboard/api/break-glass", { end_user_id: alice.endUser, reason: "because" });
    expect(short.status).toBe(422);
    expect(short.body.error.param).toBe("reason");
    const unknown = await officer.call("POST", "/dashboard/api/break-glass", { end_user_id: "eu_nosuch", reason: "Subpoena 2026-114, court order" });
    expect([unknown.status, unknown.body.error.param]).toEqual([404, "end_user_id"]);

    const reason = "Subpoena 2026-114, court order of 3 March";
    const opened = await officer.call("POST", "/dashboard/api/break-glass", { end_user_id: alice.endUser, reason });
    expect(opened.status).toBe(201);
    expect(opened.body).toMatchObject({ end_user_id: alice.endUser, reason, status: "open", admin: { email: officer.email }, closed_at: null });
    expect(Date.parse(opened.body.expires_at) - t.clock.now().getTime()).toBe(5 * 60_000);
    expect((await officer.call("POST", "/dashboard/api/break-glass", { end_user_id: alice.endUser, reason })).status).toBe(409);

    const read = await officer.call("GET", `/v1/transcriptions/${alice.transcription}`);
    expect(read.status).toBe(200);
    expect(read.body.id).toBe(alice.transcription);
    expect((await officer.call("GET", `/v1/recordings/${alice.recording}/audio`)).status).toBe(200);
    const listed = await officer.call("GET", "/v1/transcriptions");
    expect(listed.body.data.map((x: { id: string }) => x.id)).toEqual([alice.transcription]);
    // Bob's content stays closed: hidden as unknown, and naming him is refused.
    expect((await officer.call("GET", `/v1/transcriptions/${bob.transcription}`)).status).toBe(404);
    expect((await officer.call("GET", `/v1/recordings/${bob.recording}/audio`)).status).toBe(404);
    const search = await officer.call("POST", "/v1/recordings/search", { query: "anything", end_user_id: bob.endUser });
    expect([search.status, search.body.error.code]).toEqual([403, "forbidden"]);
    expect((await officer.call("POST", "/v1/recordings/search", { query: "anything", end_user_id: alice.endUser })).status).toBe(200);

    // On the record: the open, with who and why, on the Compliance page's list and in the audit log.
    const record = (await officer.call("GET", "/dashboard/api/break-glass")).body.data;
    expect(record).toEqual([expect.objectContaining({ id: opened.body.id, status: "open", reason, admin: { id: officer.id, email: officer.email } })]);
    const audit = (await t.call("GET", `/v1/audit-events?action=break_glass.open`, { key: acme.test })).body.data;
    expect(audit.map((e: { resource_ids: string[]; actor: { admin_email: string } }) => [e.resource_ids, e.actor.admin_email])).toEqual([
      [[opened.body.id, alice.endUser], officer.email],
    ]);

    // It ends on its own: past PARLEY_BREAK_GLASS_MINUTES the transcript is refused again.
    t.clock.advance(5 * 60_000);
    expect((await officer.call("GET", `/v1/transcriptions/${alice.transcription}`)).status).toBe(403);
    expect((await officer.call("GET", "/dashboard/api/break-glass")).body.data[0].status).toBe("expired");
  });

  test("closed early by its opener or an owner, not by another officer; roles that see content open none", async () => {
    const { t, acme, alice, bob } = await appWithContent();
    const officer = await sessionAs(t, "compliance", acme.project.id);
    const colleague = await sessionAs(t, "compliance", acme.project.id, "colleague@clinic.example");
    const owner = await sessionAs(t, "owner", acme.project.id);
    const viewer = await sessionAs(t, "viewer", acme.project.id);

    expect((await owner.call("POST", "/dashboard/api/break-glass", { end_user_id: alice.endUser, reason: "Just looking around" })).status).toBe(403);
    const first = (await officer.call("POST", "/dashboard/api/break-glass", { end_user_id: alice.endUser, reason: "Complaint 88 from the patient" })).body;
    // PARLEY_BREAK_GLASS_MINUTES' default.
    expect(Date.parse(first.expires_at) - Date.parse(first.opened_at)).toBe(30 * 60_000);
    // A grant is its opener's: the colleague still cannot read.
    expect((await colleague.call("GET", `/v1/transcriptions/${alice.transcription}`)).status).toBe(403);
    expect((await colleague.call("DELETE", `/dashboard/api/break-glass/${first.id}`)).status).toBe(403);
    const closed = await officer.call("DELETE", `/dashboard/api/break-glass/${first.id}`);
    expect(closed.body).toMatchObject({ status: "closed", closed_by: officer.email });
    expect((await officer.call("GET", `/v1/transcriptions/${alice.transcription}`)).status).toBe(403);
    expect((await officer.call("DELETE", `/dashboard/api/break-glass/${first.id}`)).status).toBe(409);

    // A viewer on a support case opens one too, and then reaches that end user's recordings (not others'); an owner may close it.
    expect((await viewer.call("GET", `/v1/recordings/${alice.recording}`)).status).toBe(403);
    const support = (await viewer.call("POST", "/dashboard/api/break-glass", { end_user_id: alice.endUser, reason: "Support ticket 4411: playback" })).body;
    expect((await viewer.call("GET", `/v1/transcriptions/${alice.transcription}`)).status).toBe(200);
    expect((await viewer.call("GET", `/v1/recordings/${alice.recording}`)).status).toBe(200);
    expect((await viewer.call("GET", `/v1/recordings/${bob.recording}`)).status).toBe(404);
    expect((await viewer.call("GET", "/v1/recordings")).body.data.map((r: { id: string }) => r.id)).toEqual([alice.recording]);
    expect((await viewer.call("GET", `/v1/end-users/${alice.endUser}`)).status).toBe(200);
    expect((await owner.call("DELETE", `/dashboard/api/break-glass/${support.id}`)).body).toMatchObject({ status: "closed", closed_by: owner.email });
    expect((await viewer.call("GET", `/v1/transcriptions/${alice.transcription}`)).status).toBe(403);
    const actions = (await t.call("GET", "/v1/audit-events", { key: acme.test })).body.data.map((e: { action: string }) => e.action);
    expect(actions.filter((a: string) => a.startsWith("break_glass."))).toEqual([
      "break_glass.close",
      "break_glass.open",
      "break_glass.close",
      "break_glass.open",
    ]);
  });

  test("with several grants open, a list must name its end user", async () => {
    const { t, acme, alice, bob } = await appWithContent();
    const officer = await sessionAs(t, "compliance", acme.project.id);
    for (const who of [alice, bob]) await officer.call("POST", "/dashboard/api/break-glass", { end_user_id: who.endUser, reason: "Litigation hold review 7" });
    expect((await officer.call("GET", `/v1/transcriptions/${bob.transcription}`)).status).toBe(200);
    const unnamed = await officer.call("GET", "/v1/transcriptions");
    expect([unnamed.status, unnamed.body.error.param]).toEqual([403, "end_user_id"]);
    const named = await officer.call("GET", `/v1/ask/sessions?end_user_id=${bob.endUser}`);
    expect(named.status).toBe(200);
  });
});

describe("roles", () => {
  test("the session says its role; a role change takes effect at the next request", async () => {
    const { t, acme, alice } = await appWithContent();
    const owner = await sessionAs(t, "owner", acme.project.id);
    const staff = await sessionAs(t, "admin", acme.project.id);
    expect((await staff.call("GET", "/dashboard/api/session")).body.admin.role).toBe("admin");
    expect((await staff.call("GET", `/v1/transcriptions/${alice.transcription}`)).status).toBe(200);
    expect((await owner.call("PATCH", `/dashboard/api/administrators/${staff.id}`, { role: "viewer" })).body.role).toBe("viewer");
    expect((await staff.call("GET", "/dashboard/api/session")).body.admin.role).toBe("viewer");
    expect((await staff.call("GET", `/v1/transcriptions/${alice.transcription}`)).status).toBe(403);
    expect((await staff.call("GET", "/dashboard/api/keys")).status).toBe(403);
    // On the audit chain, organization-wide: who changed whose role.
    const changes = t.deps.db
      .query<{ actor_type: string; admin_email: string | null; resource_ids: string }, []>(
        "SELECT actor_type, admin_email, resource_ids FROM audit_events WHERE action = 'admin.role_change'",
      )
      .all();
    expect(changes).toEqual([{ actor_type: "admin", admin_email: owner.email, resource_ids: JSON.stringify([staff.id]) }]);
  });

  test("the organization's own rows (sign-ins, accounts) are read by owners and compliance at /dashboard/api/audit-events, never by a project's key", async () => {
    const { t, acme } = await appWithContent();
    const owner = await sessionAs(t, "owner", acme.project.id);
    const officer = await sessionAs(t, "compliance", acme.project.id);
    const staff = await sessionAs(t, "admin", acme.project.id);
    // No project's log shows them: they belong to no project.
    const projectLog = await t.call("GET", "/v1/audit-events?action=admin.sign_in", { key: acme.test });
    expect(projectLog.body.data).toEqual([]);
    const signIns = await officer.call("GET", "/dashboard/api/audit-events?action=admin.sign_in");
    expect(signIns.status).toBe(200);
    expect(signIns.body.data.map((e: { actor: { admin_email: string } }) => e.actor.admin_email).sort()).toEqual(
      [owner.email, officer.email, staff.email].sort(),
    );
    const aboutStaff = await owner.call("GET", `/dashboard/api/audit-events?resource_id=${staff.id}`);
    expect(aboutStaff.body.data.map((e: { action: string }) => e.action)).toContain("admin.sign_in");
    expect(aboutStaff.body.data.every((e: { resource_ids: string[] }) => e.resource_ids.includes(staff.id))).toBe(true);
    expect((await staff.call("GET", "/dashboard/api/audit-events")).status).toBe(403);
    expect((await t.call("GET", "/dashboard/api/audit-events", { key: acme.test })).status).toBe(401);
  });

  test("the last owner is never demoted or removed while others remain", async () => {
    const { t, acme } = await appWithContent();
    const owner = await sessionAs(t, "owner", acme.project.id);
    const other = await sessionAs(t, "admin", acme.project.id);
    const demoted = await owner.call("PATCH", `/dashboard/api/administrators/${owner.id}`, { role: "admin" });
    expect([demoted.status, demoted.body.error.code]).toEqual([409, "resource_conflict"]);
    expect((await owner.call("DELETE", `/dashboard/api/administrators/${owner.id}`)).status).toBe(409);
    expect((await owner.call("PATCH", `/dashboard/api/administrators/${other.id}`, { role: "owner" })).status).toBe(200);
    expect((await owner.call("PATCH", `/dashboard/api/administrators/${owner.id}`, { role: "admin" })).status).toBe(200);
    expect((await other.call("DELETE", `/dashboard/api/administrators/${owner.id}`)).status).toBe(204);
    const listed = (await other.call("GET", "/dashboard/api/administrators")).body.data;
    expect(listed.map((a: { email: string; role: string }) => [a.email, a.role])).toEqual([["admin@clinic.example", "owner"]]);
  });

  test("publishing firmware (live mode, no scope names it) is for owners and admins", async () => {
    const t = await makeTestApp();
    const acme = makeTenant(t.deps, "acme");
    const image = join(makeTempDir(), "fw.bin");
    writeFileSync(image, "firmware image");
    const draft = addFirmware(
      t.deps.db,
      t.deps.config.dataDir,
      { organizationId: acme.project.organization_id, version: "2.0.0", model: "parley_pin", file: image },
      t.clock.now(),
    );
    const live = async (role: Role) => {
      const s = await sessionAs(t, role, acme.project.id);
      await s.call("PUT", "/dashboard/api/session/tenant", { project_id: acme.project.id, mode: "live" });
      return s;
    };
    const viewer = await live("viewer");
    const refused = await viewer.call("POST", `/v1/firmware-releases/${draft.id}/publish`);
    expect([refused.status, refused.body.error.message]).toEqual([403, "The viewer role cannot publish firmware."]);
    expect((await (await live("admin")).call("POST", `/v1/firmware-releases/${draft.id}/publish`)).status).toBe(200);
  });

  test("parley admin create --role, set-role and list", async () => {
    const t = await makeTestApp();
    const admin = async (args: string[]) => {
      const log = spyOn(console, "log").mockImplementation(() => {});
      try {
        await adminCommand(t.deps, args);
        return log.mock.calls.map((c) => c.join(" ")).join("\n");
      } finally {
        log.mockRestore();
      }
    };
    process.env.PARLEY_ADMIN_PASSWORD = PASSWORD;
    try {
      expect(await admin(["create", "boss@clinic.example"])).toContain("owner");
      expect(await admin(["create", "audit@clinic.example", "--role", "compliance"])).toContain("compliance");
      await expect(admin(["create", "x@clinic.example", "--role", "janitor"])).rejects.toThrow("not janitor");
      expect(await admin(["set-role", "audit@clinic.example", "viewer"])).toContain("audit@clinic.example is now viewer");
      await expect(admin(["set-role", "boss@clinic.example", "admin"])).rejects.toThrow("last owner");
      const listed = JSON.parse(await admin(["list", "--json"]));
      expect(listed.map((a: { email: string; role: string }) => [a.email, a.role])).toEqual([
        ["boss@clinic.example", "owner"],
        ["audit@clinic.example", "viewer"],
      ]);
      expect(await admin(["list"])).toMatch(/audit@clinic\.example\s+viewer/);
    } finally {
      delete process.env.PARLEY_ADMIN_PASSWORD;
    }
  });
});
