import { holdsScope, type Principal } from "./auth";
import { ApiError } from "./errors";
import { roleHoldsAll } from "./roles";

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
 * A role reaching content through break-glass (decision 137) sees only the content of the
 * end users its open grants name; what a role may do at all is authorize()'s (auth.ts).
 */
export function maySee(principal: Principal, owner: Owner): boolean {
  if (principal.endUserId && owner.endUserId !== principal.endUserId) return false;
  if (principal.viaBreakGlass && !(owner.endUserId && principal.breakGlass?.has(owner.endUserId))) return false;
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

/** "This principal may see this end user's content", in one call: everything the end user owns, whatever device captured it. */
export function maySeeEndUser(principal: Principal, endUserId: string): boolean {
  return maySee(principal, ownedBy(endUserId));
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
 * The one wording of "not found" per resource (decision 131), for an unknown id and a hidden
 * one alike. Device and FirmwareRelease keep the spec's own messages (spec 4.2).
 */
export const notFound = {
  endUser: (id: string) => `No end user ${id}.`,
  device: (_id: string) => "Device not found",
  recording: (id: string) => `No recording ${id}.`,
  transcription: (id: string) => `No transcription ${id}.`,
  summary: (id: string) => `No summary ${id}.`,
  voice: (id: string) => `No voice ${id}.`,
  askSession: (id: string) => `No Ask session ${id}.`,
  firmwareRelease: (_id: string) => "FirmwareRelease not found",
} as const;

/**
 * The end user a request names (a list's `end_user_id` filter or a body's field), checked
 * against the one an end-user-scoped key is confined to: naming another is 403 `forbidden`,
 * param `end_user_id`, whether that end user exists or not (decision 131); naming none means
 * the key's own. One behaviour for every route: lists, creates and searches alike. Content
 * read through break-glass is confined alike to its grants' end users (decision 137).
 */
export function confineToEndUser(principal: Principal, endUserId?: string | null): string | null {
  if (principal.viaBreakGlass) return confineToBreakGlass(principal, endUserId);
  if (!principal.endUserId) return endUserId ?? null;
  if (endUserId && endUserId !== principal.endUserId) {
    throw new ApiError("forbidden", "This key is scoped to another end user.", { param: "end_user_id" });
  }
  return principal.endUserId;
}

/** The end user named, when break-glass is open for them; naming none means the one it is open for, when there is one. */
function confineToBreakGlass(principal: Principal, endUserId?: string | null): string {
  const open = [...(principal.breakGlass?.keys() ?? [])];
  if (endUserId) {
    if (!open.includes(endUserId))
      throw new ApiError("forbidden", "Break-glass is not open for this end user: open it, with a reason, first.", { param: "end_user_id" });
    return endUserId;
  }
  if (open.length !== 1) throw new ApiError("forbidden", "Break-glass is open for several end users: name one (end_user_id).", { param: "end_user_id" });
  return open[0]!;
}

/** Project-wide actions (registering devices, creating end users, managing webhooks ...) are refused to a key confined to one end user. */
export function requireUnconfined(principal: Principal, action: string): void {
  if (principal.endUserId || principal.viaBreakGlass) throw new ApiError("forbidden", `An end-user-scoped key cannot ${action}.`);
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
 * Who may write what belongs to the whole organization and both modes (firmware releases):
 * only a live secret key not confined to an end user, or a session whose role may do
 * everything under /v1; a test key must not put firmware in front of live devices (spec 5 rule 1).
 */
export function requireOrganizationWriter(principal: Principal, refusal: string): void {
  if (principal.kind !== "secret" || principal.mode !== "live" || principal.endUserId) throw new ApiError("forbidden", refusal);
  if (principal.role && !roleHoldsAll(principal.role)) throw new ApiError("forbidden", `The ${principal.role} role cannot publish firmware.`);
}

/** The one call a reset completion credential (rct_) makes, for its own command of its own device (decision 022). */
export function requireOwnResetCredential(principal: Principal, deviceId: string, commandId: string): void {
  if (principal.kind !== "reset") throw new ApiError("forbidden", "Only the command's reset completion credential (rct_) can acknowledge a factory reset.");
  if (principal.commandId !== commandId || principal.deviceId !== deviceId)
    throw new ApiError("forbidden", "This reset completion credential belongs to another command.");
}

/** Whether a device itself calls (its own token): a device's writes fix the end user and device to its own (spec 4.3). */
export const isDevice = (principal: Principal): boolean => principal.kind === "device";

/** Whether an API key (secret or restricted) calls: the only credentials an assistant connects with (decision 166). */
export const isApiKey = (principal: Principal): boolean => principal.kind === "secret" || principal.kind === "restricted";

/**
 * Who sees a factory reset's rct_ completion credential (spec 5, decision 022): whoever could
 * have reset the device (a key holding devices:write) and the device it is delivered to.
 */
export function mayHoldResetCredential(principal: Principal): boolean {
  return principal.kind === "device" || holdsScope(principal, "devices:write");
}
