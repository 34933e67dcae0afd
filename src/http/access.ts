import { holdsScope, type Principal } from "./auth";
import { ApiError } from "./errors";

/**
 * The one access rule within a tenant (decision 084). Tenancy itself (project and mode) is
 * the filter of every store query; what is left is who inside the tenant may see what:
 * services load a row through the tenant's store, then ask this file, and answer a hidden
 * row exactly as an unknown one (404), so the ids of others are never confirmed.
 */

/** Whose content a row is: the end user it belongs to and, for what a device captured (or a device itself), the device. */
export type Owner = { endUserId: string | null; deviceId?: string | null };

/**
 * May this principal see content of this owner? API keys see the tenant's content, a key
 * confined to an end user only that end user's. A device token sees only what its own
 * device captured. Upload and reset tokens are good for one call each and see no content.
 */
export function maySee(principal: Principal, owner: Owner): boolean {
  if (principal.endUserId && owner.endUserId !== principal.endUserId) return false;
  switch (principal.kind) {
    case "secret":
    case "restricted":
      return true;
    case "device":
      return owner.deviceId !== undefined && owner.deviceId === principal.deviceId;
    default:
      return false;
  }
}

/** The owner of an end user's own record and of what belongs to it alone (transcriptions, summaries, Ask sessions). */
export const ownedBy = (endUserId: string | null): Owner => ({ endUserId });
/** A device is owned by the end user it is bound to, and by itself. */
export const ownerOfDevice = (device: { id: string; end_user_id: string | null }): Owner => ({ endUserId: device.end_user_id, deviceId: device.id });
/** A recording is owned by its end user and the device that captured it. */
export const ownerOfRecording = (recording: { end_user_id: string | null; device_id: string | null }): Owner => ({
  endUserId: recording.end_user_id,
  deviceId: recording.device_id,
});

/** How a missing or hidden object is reported: an id in the path, or a reference in the body naming its field. */
export type Reference = { code: "not_found" | "resource_not_found"; param: string };
export const PATH_ID: Reference = { code: "not_found", param: "id" };
export const bodyField = (param: string): Reference => ({ code: "resource_not_found", param });

/**
 * `row` when it exists and the principal may see it; otherwise the 404 an unknown id gets,
 * with the same message, so a foreign id is indistinguishable from one that never existed.
 */
export function visible<Row>(principal: Principal, row: Row | null | undefined, owner: (row: Row) => Owner, message: string, ref: Reference = PATH_ID): Row {
  if (row && maySee(principal, owner(row))) return row;
  throw new ApiError(ref.code, message, { param: ref.param });
}

/**
 * The end user a request names, checked against the one an end-user-scoped key is confined
 * to (403 param end_user_id when it differs): the key's own when the request names none.
 */
export function confineToEndUser(principal: Principal, endUserId: string | null | undefined): string | null {
  if (!principal.endUserId) return endUserId ?? null;
  if (endUserId && endUserId !== principal.endUserId) {
    throw new ApiError("forbidden", "This key is scoped to another end user.", { param: "end_user_id" });
  }
  return principal.endUserId;
}

/** Project-wide actions (registering devices, creating end users, managing webhooks ...) are refused to a key confined to one end user. */
export function requireUnconfined(principal: Principal, action: string): void {
  if (principal.endUserId) throw new ApiError("forbidden", `An end-user-scoped key cannot ${action}.`);
}

/**
 * The routes only a device calls with its own token (spec 5 rule 4): another credential is
 * refused with `refusal`, another device's token with 403 too (the path names a device the
 * token holder knows; nothing is confirmed by saying it is not theirs).
 */
export function requireOwnDeviceToken(principal: Principal, deviceId: string, refusal: string): void {
  if (principal.kind !== "device") throw new ApiError("forbidden", refusal);
  if (principal.deviceId !== deviceId) throw new ApiError("forbidden", "This device token belongs to another device.");
}

/**
 * Who sees a factory reset's rct_ completion credential (spec 5, decision 022): whoever could
 * have reset the device (a key holding devices:write) and the device it is delivered to.
 */
export function mayHoldResetCredential(principal: Principal): boolean {
  return principal.kind === "device" || holdsScope(principal, "devices:write");
}
