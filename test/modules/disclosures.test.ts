import { describe, expect, test } from "bun:test";
import { sha256Hex } from "../../src/crypto";
import { createAdmin } from "../../src/modules/admins/service";
import { type AuditRow, HASHED_COLUMNS } from "../../src/modules/audit/chain";
import { verifyAuditChain } from "../../src/modules/audit/service";
import { getTranscription } from "../../src/modules/transcriptions/service";
import { createApiKey } from "../../src/modules/keys/service";
import { makeTenant, makeTestApp } from "../helpers";
import { breakGlassPrincipal, disclosureEngines, parseCsv, seedPatients } from "./disclosures-fixtures";

type T = Awaited<ReturnType<typeof makeTestApp>>;

async function disclosedApp() {
  const t = await makeTestApp({ engines: disclosureEngines(), env: { PARLEY_ASK_PROVIDER: "extractive" } });
  const tenant = makeTenant(t.deps, `disclosures-${crypto.randomUUID().slice(0, 8)}`);
  const { patient, other } = await seedPatients(t, tenant);
  const reader = createApiKey(t.deps.db, { project: tenant.project.name, mode: "test", scopes: ["recordings:read", "transcriptions:read"] }, t.clock.now());
  const auditor = tenant.key("test", { scopes: ["disclosures:read"] });
  return { t, tenant, patient, other, reader, auditor };
}

const disclosuresOf = async (t: T, key: string, endUser: string, query = "limit=100") => {
  const r = await t.call("GET", `/v1/end-users/${endUser}/disclosures?${query}`, { key });
  expect(r.status).toBe(200);
  return r.body;
};

/** A request with a dashboard session's cookie, as the dashboard makes it. */
async function sessionCookie(t: T, email: string, password: string): Promise<string> {
  const res = await t.app.handle(
    new Request("http://localhost/dashboard/api/session", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password }),
    }),
  );
  expect(res.status).toBe(200);
  return res.headers.get("set-cookie")!.split(";")[0]!;
}

describe("accounting of disclosures", () => {
  test("reads by a key, by an admin session, under break-glass, and an export naming the end user each show, newest first, with who and why", async () => {
    const { t, tenant, patient, other, reader, auditor } = await disclosedApp();
    const step = () => t.clock.advance(1000); // distinct times: the order below is the API's, not chance

    step();
    const keyRead = await t.call("GET", `/v1/transcriptions/${patient.transcription}`, { key: reader.key });
    expect(keyRead.status).toBe(200);
    step();
    expect((await t.call("GET", `/v1/recordings/${patient.recording}/audio`, { key: reader.key, headers: { range: "bytes=0-9" } })).status).toBe(206);

    step();
    await createAdmin(t.deps.db, "owner@clinic.example", "correct horse battery staple", "owner", t.clock.now());
    const cookie = await sessionCookie(t, "owner@clinic.example", "correct horse battery staple");
    const sessionRead = await t.app.handle(new Request(`http://localhost/v1/transcriptions/${patient.transcription}`, { headers: { cookie } }));
    expect(sessionRead.status).toBe(200);

    step();
    const officer = breakGlassPrincipal(tenant, patient.endUser, { id: "bg_1", reason: "Complaint 42: the patient disputes the visit note" });
    await getTranscription(t.deps, officer, patient.transcription);

    step();
    const created = await t.call("POST", "/v1/exports", { key: tenant.test, body: { end_user_id: patient.endUser, matter: "Smith v. Clinic" } });
    expect(created.status).toBe(202);
    await t.deps.queue.drain();
    step();
    const download = await t.app.handle(
      new Request(`http://localhost/v1/exports/${created.body.id}/download`, { headers: { authorization: `Bearer ${tenant.test}` } }),
    );
    expect(download.status).toBe(200);
    await download.arrayBuffer();

    // A page of transcriptions holds both end users' content: each is disclosed.
    step();
    const listed = await t.call("GET", "/v1/transcriptions?limit=10", { key: reader.key });
    expect(listed.body.data.length).toBe(2);

    const page = await disclosuresOf(t, auditor, patient.endUser);
    expect(page.data.map((d: { action: string }) => d.action)).toEqual([
      "transcription.read",
      "export.download",
      "export.create",
      "transcription.read",
      "transcription.read",
      "recording.audio.read",
      "transcription.read",
    ]);
    const [list, exportDownload, exportCreate, breakGlass, session, audio, key] = page.data;
    expect(key).toMatchObject({
      actor: { type: "restricted", id: reader.id, email: null },
      credential_id: reader.id,
      reason: null,
      resource_ids: [patient.transcription, patient.recording],
      request_id: keyRead.headers.get("request-id"),
    });
    expect(audio).toMatchObject({ resource_ids: [patient.recording], credential_id: reader.id });
    expect(session).toMatchObject({ actor: { type: "admin", email: "owner@clinic.example" }, reason: null, request_id: sessionRead.headers.get("request-id") });
    expect(session.credential_id).toMatch(/\S/);
    expect(session.credential_id).not.toBe(session.actor.id); // the session, beside the person
    expect(breakGlass).toMatchObject({
      actor: { type: "admin", id: "adm_compliance", email: "compliance@clinic.example" },
      credential_id: "ses_compliance",
      reason: "Complaint 42: the patient disputes the visit note",
      break_glass_id: "bg_1",
    });
    expect(exportCreate).toMatchObject({ reason: "Smith v. Clinic", resource_ids: [created.body.id, patient.recording] });
    expect(exportDownload).toMatchObject({ reason: "Smith v. Clinic", resource_ids: [created.body.id] });
    expect(list.resource_ids).toContain(other.transcription);

    // The audit log shows the same, beside every other column the row's hash covers.
    const logged = await t.call("GET", `/v1/audit-events?resource_id=${patient.transcription}&actor_id=adm_compliance`, { key: tenant.test });
    expect(logged.body.data[0]).toMatchObject({
      credential_id: "ses_compliance",
      subjects: [{ end_user_id: patient.endUser, reason: "Complaint 42: the patient disputes the visit note", break_glass_id: "bg_1" }],
    });

    // The other end user's accounting has only what touched them: the list.
    const theirs = await disclosuresOf(t, auditor, other.endUser);
    expect(theirs.data.map((d: { id: string }) => d.id)).toEqual([list.id]);
    // And the chain with its new columns verifies, the index by end user included.
    expect(verifyAuditChain(t.deps.db)).toMatchObject({ ok: true });
  });

  test("summaries, search results, Ask's passages and an Ask conversation each disclose their end user, and only theirs", async () => {
    const { t, tenant, patient, other, auditor } = await disclosedApp();
    const key = tenant.test;
    const summaries = await t.call("GET", `/v1/summaries?transcription_id=${patient.transcription}`, { key });
    expect(summaries.body.data).toHaveLength(1);
    t.clock.advance(1000);
    expect((await t.call("GET", `/v1/summaries/${summaries.body.data[0].id}`, { key })).status).toBe(200);
    t.clock.advance(1000);
    const search = await t.call("POST", "/v1/recordings/search", { key, body: { query: "headache", end_user_id: patient.endUser } });
    expect(search.body.results.length).toBeGreaterThan(0);
    t.clock.advance(1000);
    const ask = await t.call("POST", "/v1/ask/sessions", {
      key,
      body: { scope: { type: "library" }, end_user_id: patient.endUser, initial_message: { content: "Since when the headache?" } },
    });
    expect(ask.status).toBe(200);
    t.clock.advance(1000);
    expect((await t.call("GET", `/v1/ask/sessions/${ask.body.session_id}/messages`, { key })).body.data.length).toBeGreaterThan(0);

    const actions = (await disclosuresOf(t, auditor, patient.endUser)).data.map((d: { action: string }) => d.action);
    expect(actions).toEqual(["ask.messages.read", "ask.context.read", "search.results.read", "summary.read", "summary.read"]);
    expect((await disclosuresOf(t, auditor, other.endUser)).total).toBe(0);
  });

  test("pages with a cursor, newest first; a deleted end user's accounting stays", async () => {
    const { t, tenant, patient, reader, auditor } = await disclosedApp();
    for (let i = 0; i < 5; i++) {
      t.clock.advance(1000);
      expect((await t.call("GET", `/v1/transcriptions/${patient.transcription}`, { key: reader.key })).status).toBe(200);
    }
    const first = await disclosuresOf(t, auditor, patient.endUser, "limit=2");
    expect(first).toMatchObject({ has_more: true, total: 5 });
    const second = await disclosuresOf(t, auditor, patient.endUser, `limit=2&cursor=${first.next_cursor}`);
    const third = await disclosuresOf(t, auditor, patient.endUser, `limit=2&cursor=${second.next_cursor}`);
    expect(third.has_more).toBe(false);
    const times = [...first.data, ...second.data, ...third.data].map((d: { created_at: string }) => d.created_at);
    expect(times).toEqual([...times].sort().reverse());
    expect(new Set(times).size).toBe(5);

    expect((await t.call("DELETE", `/v1/end-users/${patient.endUser}`, { key: tenant.test })).status).toBe(204);
    expect((await disclosuresOf(t, auditor, patient.endUser)).total).toBe(5);
  });

  test("scope disclosures:read; an end-user-scoped key sees only its own; other projects and unknown ids are 404; bad input is the spec's error", async () => {
    const { t, tenant, patient, other, reader, auditor } = await disclosedApp();
    await t.call("GET", `/v1/transcriptions/${patient.transcription}`, { key: reader.key });

    const noScope = await t.call("GET", `/v1/end-users/${patient.endUser}/disclosures`, { key: reader.key });
    expect(noScope.status).toBe(403);
    expect(noScope.body.error.code).toBe("forbidden");

    const own = tenant.key("test", { scopes: ["disclosures:read"], endUserId: patient.endUser });
    expect((await disclosuresOf(t, own, patient.endUser)).total).toBe(1);
    expect((await t.call("GET", `/v1/end-users/${other.endUser}/disclosures`, { key: own })).status).toBe(404);

    const elsewhere = makeTenant(t.deps);
    const foreign = await t.call("GET", `/v1/end-users/${patient.endUser}/disclosures`, { key: elsewhere.test });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toMatchObject({ code: "not_found", param: "id" });
    // Live mode is another world.
    expect((await t.call("GET", `/v1/end-users/${patient.endUser}/disclosures`, { key: tenant.live })).status).toBe(404);
    expect((await t.call("GET", "/v1/end-users/eu_nope/disclosures", { key: auditor })).status).toBe(404);

    const badCursor = await t.call("GET", `/v1/end-users/${patient.endUser}/disclosures?cursor=nonsense`, { key: auditor });
    expect(badCursor.status).toBe(400);
    expect(badCursor.body.error.param).toBe("cursor");
    const badFormat = await t.call("GET", `/v1/end-users/${patient.endUser}/disclosures?format=xml`, { key: auditor });
    expect(badFormat.status).toBe(422);
    expect(badFormat.body.error).toMatchObject({ code: "validation_error", param: "format" });
    expect((await t.call("GET", `/v1/end-users/${patient.endUser}/disclosures?limit=0`, { key: auditor })).status).toBe(422);
  });

  test("format=csv: every disclosure as an attachment, a formula in a reason defused", async () => {
    const { t, tenant, patient, reader, auditor } = await disclosedApp();
    await t.call("GET", `/v1/transcriptions/${patient.transcription}`, { key: reader.key });
    t.clock.advance(1000);
    const matter = '=HYPERLINK("http://evil.example","Smith, "quoted"")';
    expect((await t.call("POST", "/v1/exports", { key: tenant.test, body: { end_user_id: patient.endUser, matter } })).status).toBe(202);

    // Through the contract check: the document declares text/csv beside the JSON page.
    const res = await t.call("GET", `/v1/end-users/${patient.endUser}/disclosures?format=csv`, { key: auditor });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/csv");
    expect(res.headers.get("content-disposition")).toStartWith(`attachment; filename="disclosures-${patient.endUser}.csv"`);
    const rows = parseCsv(res.body as string);
    expect(rows[0]).toEqual([
      "created_at",
      "action",
      "actor_type",
      "actor_id",
      "actor_email",
      "credential_id",
      "reason",
      "break_glass_id",
      "resource_ids",
      "request_id",
      "client_address",
      "id",
    ]);
    expect(rows.slice(1).map((r) => r[1])).toEqual(["export.create", "transcription.read"]);
    expect(rows[1]![6]).toBe(`'${matter}`);
    expect(rows[2]![3]).toBe(reader.id);
  });

  test("the chain covers who was disclosed and why: a reason rewritten or an entry of the index removed fails verify; rows of the old form verify as before", async () => {
    const { t, tenant, patient } = await disclosedApp();
    const officer = breakGlassPrincipal(tenant, patient.endUser, { id: "bg_7", reason: "Audit of record access, ticket 7" });
    await getTranscription(t.deps, officer, patient.transcription);
    const { db } = t.deps;
    const row = db.query<AuditRow, []>("SELECT * FROM audit_events WHERE subjects IS NOT NULL ORDER BY seq DESC LIMIT 1").get()!;
    expect(verifyAuditChain(db)).toMatchObject({ ok: true });
    expect(() => db.run("DELETE FROM audit_event_subjects")).toThrow(/append-only/);

    // A row without the new columns (every row before migration 0025, and the operator's) hashes in the old form.
    const legacy = db.query<AuditRow, []>("SELECT * FROM audit_events WHERE credential_id IS NULL AND subjects IS NULL ORDER BY seq LIMIT 1").get()!;
    expect(legacy.hash).toBe(sha256Hex(JSON.stringify(HASHED_COLUMNS.map((c) => legacy[c]))));

    // Someone with the database file hides the break-glass reason.
    db.run("DROP TRIGGER audit_events_no_update");
    db.query("UPDATE audit_events SET subjects = replace(subjects, 'ticket 7', 'routine') WHERE seq = ?").run(row.seq);
    expect(verifyAuditChain(db)).toMatchObject({ ok: false, seq: row.seq });
    db.query("UPDATE audit_events SET subjects = ? WHERE seq = ?").run(row.subjects, row.seq);
    // Or clears who was disclosed, hoping the row then reads as one of the old form.
    db.query("UPDATE audit_events SET subjects = NULL, credential_id = NULL WHERE seq = ?").run(row.seq);
    expect(verifyAuditChain(db)).toMatchObject({ ok: false, seq: row.seq });
    db.query("UPDATE audit_events SET subjects = ?, credential_id = ? WHERE seq = ?").run(row.subjects, row.credential_id, row.seq);
    expect(verifyAuditChain(db)).toMatchObject({ ok: true });

    // Or takes the read off the end user's accounting.
    db.run("DROP TRIGGER audit_event_subjects_no_delete");
    db.query("DELETE FROM audit_event_subjects WHERE end_user_id = ? AND seq = ?").run(patient.endUser, row.seq);
    expect(await disclosuresOf(t, tenant.test, patient.endUser)).toMatchObject({ total: 0 });
    const hidden = verifyAuditChain(db);
    expect(hidden).toMatchObject({ ok: false, seq: row.seq });
    expect(hidden.ok || hidden.reason).toContain(`subject index lacks its ${patient.endUser}`);
  });
});
