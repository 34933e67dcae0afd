import type { Database } from "bun:sqlite";
import type { Clock } from "../../clock";
import type { Config } from "../../config";
import { sha256Hex } from "../../crypto";
import type { Scope } from "../../http/scopes";
import { csrfTokenOf, SessionLifetime } from "../../http/sessions";
import { portalTokenOf, type WearerSession, type WearerSessions } from "../../http/wearer-sessions";
import { newId, newSecret } from "../../ids";
import { resolveLoadedConfig } from "../config/service";
import { endPortalSession, findPortalSession, insertPortalSession, type PortalSessionRow, purgePortalSessions, touchPortalSession } from "./store";

/**
 * What a wearer may do (decision 147): read their own content, name their speakers and
 * voices, and ask about their library. Never keys, webhooks, devices, configuration, exports
 * or the audit log; those routes answer 403 for want of the scope.
 */
export const WEARER_SCOPES: readonly Scope[] = [
  "end_users:read",
  "recordings:read",
  "transcriptions:read",
  "transcriptions:write",
  "summaries:read",
  "ask:read",
  "ask:write",
  "voices:read",
  "voices:write",
];

/** Added where the configuration's allow_wearer_delete is on (decision 148): DELETE /recordings/{id} needs it. */
const DELETE_SCOPES: readonly Scope[] = [...WEARER_SCOPES, "recordings:write"];

type SessionDeps = { db: Database; clock: Clock; config: Config };

/** A session just started: the token goes into the cookie and nowhere else. */
export type StartedWearerSession = { token: string; session: WearerSession };

/**
 * Wearers' portal sessions (decision 147): a random token kept only as its SHA-256, ending
 * when idle or old (the dashboard's PARLEY_SESSION_IDLE_MINUTES and PARLEY_SESSION_MAX_HOURS),
 * at sign-out, or when the end user is deleted. One per Deps (decision 085).
 */
export class PortalSessions implements WearerSessions {
  private readonly byRequest = new WeakMap<Request, WearerSession | null>();

  private readonly lifetime: SessionLifetime;

  constructor(private readonly deps: SessionDeps) {
    this.lifetime = new SessionLifetime(deps.config.admins);
  }

  /** How long the browser keeps the cookie: the absolute timeout (the server ends it sooner when idle). */
  get cookieMaxAgeSeconds(): number {
    return this.lifetime.cookieMaxAgeSeconds;
  }

  ofRequest(request: Request, now: Date): WearerSession | null {
    const known = this.byRequest.get(request);
    if (known !== undefined) return known;
    const token = portalTokenOf(request);
    const session = token ? this.find(token, now) : null;
    this.byRequest.set(request, session);
    return session;
  }

  private find(token: string, now: Date): WearerSession | null {
    const row = findPortalSession(this.deps.db, sha256Hex(token));
    if (!row) return null;
    if (this.lifetime.isOver(row, now)) return null;
    if (this.lifetime.dueForTouch(row, now)) touchPortalSession(this.deps.db, row.id, now);
    return this.toSession(row, csrfTokenOf(token));
  }

  /** Whether the configuration lets this wearer delete their recordings: read on every request, so a change applies at once. */
  private toSession(row: PortalSessionRow, csrfToken: string): WearerSession {
    const tenant = { projectId: row.project_id, organizationId: row.organization_id, mode: row.mode };
    const { allow_wearer_delete } = resolveLoadedConfig(this.deps.db, tenant, { endUserId: row.end_user_id });
    return { id: row.id, endUserId: row.end_user_id, tenant, scopes: allow_wearer_delete ? DELETE_SCOPES : WEARER_SCOPES, csrfToken };
  }

  /** A new session for an end user (an invite redeemed, or SSO matched their email); call inside the caller's transaction. */
  start(endUserId: string): StartedWearerSession {
    const { db, clock } = this.deps;
    const now = clock.now();
    purgePortalSessions(db, this.lifetime.purgeBefore(now));
    const token = newSecret("wst_");
    insertPortalSession(db, newId("wse_", now.getTime()), endUserId, sha256Hex(token), now.toISOString());
    return { token, session: this.find(token, now)! };
  }

  end(session: WearerSession): void {
    endPortalSession(this.deps.db, session.id, this.deps.clock.now());
  }
}
