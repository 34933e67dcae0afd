import type { Deps } from "../../deps";
import { sha256Hex } from "../../crypto";
import type { RequestOrigin } from "../../http/auth";
import { ApiError } from "../../http/errors";
import { newId, newSecret } from "../../ids";
import type { Tenant } from "../../tenancy";
import { type Actor, recordAudit } from "../audit/service";
import { findEndUser } from "../end-users/service";
import type { StartedWearerSession } from "./sessions";
import { findInviteByHash, findLiveEndUsersByEmail, insertInvite, spendInvite } from "./store";

type InviteDeps = Pick<Deps, "db" | "clock" | "config" | "portalSessions">;

/** An issued link: shown once (only its hash is kept) and good until expires_at. */
export type IssuedInvite = { url: string; end_user_id: string; expires_at: string };

/**
 * A one-time sign-in link to the portal for an end user of `tenant` (decision 147). The token
 * rides in the URL's fragment, which browsers never send to a server or in a Referer, so it
 * stays out of access logs and proxies. 404 for an unknown end user, 409 for a deleted one.
 */
export function issueInvite(deps: InviteDeps, tenant: Tenant, endUserId: string, who: Actor, baseUrl: string): IssuedInvite {
  const { db, clock, config } = deps;
  const now = clock.now();
  const expiresAt = new Date(now.getTime() + config.inviteHours * 3_600_000).toISOString();
  const token = newSecret("inv_");
  db.transaction(() => {
    const user = findEndUser(db, tenant, endUserId);
    if (!user) throw new ApiError("not_found", `No end user ${endUserId}.`, { param: "id" });
    if (user.deleted_at) throw new ApiError("resource_conflict", `End user ${endUserId} is deleted: there is no one to invite.`);
    const id = newId("inv_", now.getTime());
    insertInvite(db, { id, endUserId, tokenHash: sha256Hex(token), createdAt: now.toISOString(), expiresAt });
    recordAudit(db, who, tenant, "portal.invite.create", [id, endUserId], now);
  })();
  return { url: `${baseUrl.replace(/\/$/, "")}/me/invite#${token}`, end_user_id: endUserId, expires_at: expiresAt };
}

/** Why a link was refused, in words for the person holding it. */
const REFUSALS = {
  unknown: "This sign-in link is not valid. Ask your administrator for a new one.",
  used: "This sign-in link has already been used: each link works once. Ask your administrator for a new one.",
  expired: "This sign-in link has expired. Ask your administrator for a new one.",
  deleted: "This sign-in link is for an account that no longer exists.",
} as const;

/**
 * Redeems a link: a new wearer session, the link spent. An unknown, used or expired link
 * (or one for a deleted end user) is 401 with a message that says which, and never a
 * session; a known one's refusal is audited, committed apart from the refusal itself.
 */
export function redeemInvite(deps: InviteDeps, token: string, origin: RequestOrigin): StartedWearerSession {
  const { db, clock, portalSessions } = deps;
  const now = clock.now();
  const outcome = db.transaction((): StartedWearerSession | keyof typeof REFUSALS => {
    const invite = findInviteByHash(db, sha256Hex(token));
    if (!invite) return "unknown";
    const tenant = { projectId: invite.project_id, mode: invite.mode };
    const refusal = invite.used_at ? "used" : Date.parse(invite.expires_at) <= now.getTime() ? "expired" : invite.end_user_deleted_at ? "deleted" : null;
    if (refusal || !spendInvite(db, invite.id, now.toISOString())) {
      const reason = refusal ?? "used";
      recordAudit(db, { type: "anonymous", id: null, origin }, tenant, "portal.sign_in.refused", [invite.id, invite.end_user_id], now);
      return reason;
    }
    const started = portalSessions.start(invite.end_user_id);
    recordAudit(db, wearerActor(invite.end_user_id, origin), tenant, "portal.sign_in", [invite.id, invite.end_user_id, started.session.id], now);
    return started;
  })();
  if (typeof outcome === "string") throw new ApiError("unauthorized", REFUSALS[outcome], { param: "token" });
  return outcome;
}

/** A wearer acting for themselves, for the audit log: by their end user id. */
export const wearerActor = (endUserId: string, origin?: RequestOrigin): Actor => ({ type: "wearer", id: endUserId, origin });

/**
 * The single sign-on hook (decision 147): the portal's single sign-on (./sso.ts, decision
 * 170) calls this with an ID token's verified email claim once the provider's answer passed
 * its checks. The email must name exactly one live end user (case-insensitive); none or
 * several is 403, which the caller turns into its audited refusal.
 */
export function startWearerSessionByEmail(deps: InviteDeps, email: string, origin: RequestOrigin): StartedWearerSession {
  const { db, clock, portalSessions } = deps;
  const [user, other] = findLiveEndUsersByEmail(db, email);
  if (!user || other)
    throw new ApiError(
      "forbidden",
      other ? "This email belongs to more than one person here: ask your administrator for a sign-in link." : "No wearer here has this email.",
    );
  return db.transaction(() => {
    const started = portalSessions.start(user.id);
    recordAudit(
      db,
      wearerActor(user.id, origin),
      { projectId: user.project_id, mode: user.mode },
      "portal.sign_in",
      [user.id, started.session.id],
      clock.now(),
    );
    return started;
  })();
}
