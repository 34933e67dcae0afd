import { describe, expect, test } from "bun:test";
import { ApiError } from "../../src/http/errors";
import { eraseRecording, findRecording } from "../../src/modules/recordings/service";
import { makeTenant, makeTestApp } from "../helpers";
import { eventsOf, seedRecording, voiced, wav } from "./pipeline-fixtures";

/**
 * The one erasure of a recording (decision 133) asks the legal holds before it touches
 * anything, for the whole recording and for its audio alone: every path (DELETE, retention,
 * project deletion) goes through it, so none can erase held audio by another way.
 */
describe("the erasure service and legal holds", () => {
  test("a held recording is refused whole and audio alike, nothing touched; released, it goes", async () => {
    const t = await makeTestApp();
    const acme = makeTenant(t.deps, "erasure-holds");
    const tenant = { projectId: acme.project.id, mode: "test" as const };
    const person = (await t.call("POST", "/v1/end-users", { key: acme.test, body: { name: "Held person" } })).body.id;
    const id = await seedRecording(t.deps, tenant, wav(voiced(1)), { endUserId: person });
    const hold = (await t.call("POST", "/v1/legal-holds", { key: acme.test, body: { matter: "Held v. Erased", end_user_id: person } })).body;
    const erase = (part: "whole" | "audio") => {
      try {
        t.deps.db.transaction(() => eraseRecording(t.deps, tenant, findRecording(t.deps.db, tenant, id)!, part, t.clock.now()))();
        return "erased";
      } catch (err) {
        return err instanceof ApiError ? err.code : String(err);
      }
    };

    for (const part of ["audio", "whole"] as const) expect({ part, outcome: erase(part) }).toEqual({ part, outcome: "legal_hold_active" });
    await t.deps.queue.drain();
    expect(findRecording(t.deps.db, tenant, id)?.audio_erased_at).toBeNull();
    expect((await t.call("GET", `/v1/recordings/${id}/audio`, { key: acme.test })).status).toBe(200);
    expect(eventsOf(t.deps, "recording.deleted")).toEqual([]);

    expect((await t.call("POST", `/v1/legal-holds/${hold.id}/release`, { key: acme.test })).status).toBe(200);
    expect(erase("audio")).toBe("erased");
    await t.deps.queue.drain();
    expect(findRecording(t.deps.db, tenant, id)?.audio_erased_at).not.toBeNull();
    expect(await t.deps.storage.size(`${tenant.projectId}/test/${id}/original`)).toBeNull();
    expect(erase("whole")).toBe("erased");
    expect(eventsOf(t.deps, "recording.deleted").map((e) => e.data.id)).toEqual([id]);
  });
});
