import type { Database } from "bun:sqlite";
import type { Deps } from "../../deps";
import { bodyField, requireUnconfined } from "../../http/access";
import type { Principal } from "../../http/auth";
import { ApiError } from "../../http/errors";
import type { Page } from "../../http/pagination";
import { newId } from "../../ids";
import type { Tenant } from "../../tenancy";
import { loadDeviceRow } from "../devices/service";
import { loadEndUser } from "../end-users/service";
import { loadRecording } from "../recordings/service";
import type { CreateLegalHoldBody, LegalHold, ListLegalHoldsQuery } from "./schema";
import {
  activeHoldCovering,
  findLegalHold,
  type HoldScope,
  insertLegalHold,
  listActiveHoldsOfProject,
  listLegalHoldRows,
  markReleased,
  toLegalHold,
} from "./store";

type HoldDeps = Pick<Deps, "db" | "clock" | "audit">;

const TARGETS = ["end_user_id", "device_id", "recording_id"] as const;

/** The hold's target, loaded as the caller may see it (404 resource_not_found naming the field otherwise). */
function locateTarget(db: Database, principal: Principal, body: CreateLegalHoldBody) {
  const named = TARGETS.filter((field) => body[field] !== undefined);
  if (named.length !== 1)
    throw new ApiError("validation_error", "Name exactly one of end_user_id, device_id or recording_id.", { param: named[1] ?? "end_user_id" });
  if (body.recording_id) {
    const r = loadRecording(db, principal, body.recording_id, bodyField("recording_id"));
    return { recording_id: r.id, recording_end_user_id: r.end_user_id, recording_device_id: r.device_id, end_user_id: null, device_id: null };
  }
  if (body.device_id) {
    const device = loadDeviceRow(db, principal, body.device_id, bodyField("device_id"));
    return { device_id: device.id, end_user_id: null, recording_id: null, recording_end_user_id: null, recording_device_id: null };
  }
  const endUser = loadEndUser(db, principal, body.end_user_id!, bodyField("end_user_id"));
  return { end_user_id: endUser.id, device_id: null, recording_id: null, recording_end_user_id: null, recording_device_id: null };
}

const targetOf = (hold: LegalHold) => hold.recording_id ?? hold.end_user_id ?? hold.device_id!;

/** POST /legal-holds: compliance work for the whole project, so never for a key confined to one end user. */
export function createLegalHold(deps: HoldDeps, principal: Principal, body: CreateLegalHoldBody): LegalHold {
  const { db } = deps;
  requireUnconfined(principal, "place legal holds");
  const now = deps.clock.now().toISOString();
  return db.transaction(() => {
    const target = locateTarget(db, principal, body);
    const id = newId("lh_", Date.parse(now));
    insertLegalHold(db, principal, { id, matter: body.matter, note: body.note ?? null, ...target, created_by: principal.credentialId, created_at: now });
    const hold = toLegalHold(findLegalHold(db, principal, id)!);
    deps.audit.record(principal, principal, "legal_hold.create", [hold.id, targetOf(hold)]);
    return hold;
  })();
}

export function getLegalHold(db: Database, principal: Principal, id: string): LegalHold {
  requireUnconfined(principal, "read legal holds");
  const row = findLegalHold(db, principal, id);
  if (!row) throw new ApiError("not_found", `No legal hold ${id}.`, { param: "id" });
  return toLegalHold(row);
}

export function listLegalHolds(db: Database, principal: Principal, q: ListLegalHoldsQuery): Page<LegalHold> {
  requireUnconfined(principal, "read legal holds");
  return listLegalHoldRows(db, principal, q.status, { limit: q.limit, cursor: q.cursor });
}

/** POST /legal-holds/{id}/release: the hold stays on record, released; a second release is 409. */
export function releaseLegalHold(deps: HoldDeps, principal: Principal, id: string): LegalHold {
  const { db } = deps;
  return db.transaction(() => {
    const hold = getLegalHold(db, principal, id);
    if (hold.status === "released") throw new ApiError("resource_conflict", `Legal hold ${id} was already released at ${hold.released_at}.`);
    markReleased(db, principal, id, deps.clock.now().toISOString(), principal.credentialId);
    deps.audit.record(principal, principal, "legal_hold.release", [id, targetOf(hold)]);
    return toLegalHold(findLegalHold(db, principal, id)!);
  })();
}

function refuseIfHeld(db: Database, tenant: Tenant, scope: HoldScope, what: string): void {
  const hold = activeHoldCovering(db, tenant, scope);
  if (hold)
    throw new ApiError(
      "legal_hold_active",
      `${what} is under legal hold ${hold.id}; nothing was deleted. Release the hold first (POST /v1/legal-holds/${hold.id}/release).`,
    );
}

/** Holds freeze a recording's transcripts too (issue 25): a correction to one is refused, naming the hold. */
export function refuseCorrectionIfHeld(db: Database, tenant: Tenant, recording: { id: string; end_user_id: string | null; device_id: string | null }): void {
  const hold = activeHoldCovering(db, tenant, { recording });
  if (hold)
    throw new ApiError(
      "legal_hold_active",
      `Recording ${recording.id} is under legal hold ${hold.id}: its transcripts are frozen and nothing was changed. Release the hold first (POST /v1/legal-holds/${hold.id}/release).`,
    );
}

/** A project under any active hold, in either mode, is not deleted (decision 107): the refusal names every hold. */
function refuseProjectIfHeld(db: Database, projectId: string): void {
  const holds = listActiveHoldsOfProject(db, projectId);
  if (holds.length === 0) return;
  const named = holds.map((h) => `${h.id} (${h.mode}, matter ${JSON.stringify(h.matter)})`).join(", ");
  throw new ApiError(
    "legal_hold_active",
    `Project ${projectId} is under legal hold: ${named}; nothing was deleted. Release the hold${holds.length > 1 ? "s" : ""} first (POST /v1/legal-holds/{id}/release).`,
  );
}

/**
 * Holds stop every deletion (decisions 103, 133): they guard the cascades of the deleting
 * modules, which ask their guards before touching anything, so a 409 leaves everything as
 * it was and the modules below need not know about holds (decision 083). Whole and audio-only
 * erasure alike. Registered on every Deps by buildDeps.
 */
export function registerLegalHoldCascades(deps: Pick<Deps, "db" | "cascades">): void {
  const { db } = deps;
  deps.cascades.guard("recordingErased", "legal-holds", ({ tenant, recording }) => refuseIfHeld(db, tenant, { recording }, `Recording ${recording.id}`));
  deps.cascades.guard("endUserDeleted", "legal-holds", ({ tenant, endUserId }) =>
    refuseIfHeld(db, tenant, { endUserId }, `End user ${endUserId} (or one of their recordings)`),
  );
  deps.cascades.guard("deviceDeleted", "legal-holds", ({ tenant, deviceId }) =>
    refuseIfHeld(db, tenant, { deviceId }, `Device ${deviceId} (or one of its recordings)`),
  );
  deps.cascades.guard("projectDeleted", "legal-holds", ({ projectId }) => refuseProjectIfHeld(db, projectId));
}
