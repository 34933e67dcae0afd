import type { Database } from "bun:sqlite";
import { userInfo } from "node:os";
import type { Clock } from "../../clock";
import type { GroupCommitter } from "../../db/group-commit";
import type { Principal, RequestOrigin } from "../../http/auth";
import { newId } from "../../ids";
import type { Tenant } from "../../tenancy";
import type { AuditAction } from "./actions";
import { type AuditFields, appendAuditRows } from "./store";

/**
 * Who acted: a credential (its kind and id, the device of a device token, and an
 * administrator's id and email when an admin session's Principal carries them), the
 * operator at the CLI, or the appliance itself (retention).
 */
export type Actor = { type: string; id: string | null; adminEmail?: string | null; deviceId?: string | null; origin?: RequestOrigin };

/** An administrator acting through a dashboard session (decision 094). */
export const adminActor = (admin: { adminId: string; adminEmail: string }): Actor => ({ type: "admin", id: admin.adminId, adminEmail: admin.adminEmail });

export function actorOf(principal: Principal): Actor {
  return {
    type: principal.adminId ? "admin" : principal.kind,
    id: principal.adminId ?? principal.credentialId,
    adminEmail: principal.adminEmail ?? null,
    deviceId: principal.deviceId,
    origin: principal.origin,
  };
}

/** The person at the CLI, by their login name (the CLI has no credential: shell access to the data dir is the authority). */
export function operatorActor(): Actor {
  let name: string | null;
  try {
    name = userInfo().username;
  } catch {
    name = process.env.USER ?? null;
  }
  return { type: "operator", id: name };
}

/** The appliance's own scheduled work. */
export const systemActor = (task: string): Actor => ({ type: "system", id: task });

/** The access audit log as modules use it (decision 102); on Deps as `audit`. */
export interface AuditTrail {
  /**
   * A read of content on a hot path: the row joins the group commit, and the promise settles
   * once it is committed, so no content leaves before its record is durable.
   */
  access(principal: Principal, action: AuditAction, resourceIds: readonly string[]): Promise<void>;
  /** A change, recorded inside the caller's transaction: both commit, or neither. */
  record(who: Principal | Actor, tenant: Tenant | null, action: AuditAction, resourceIds: readonly string[]): void;
}

/** The hash-chained audit log in audit_events. */
export class ChainedAuditTrail implements AuditTrail {
  constructor(
    private readonly db: Database,
    private readonly groupCommit: GroupCommitter,
    private readonly clock: Clock,
  ) {}

  /** Reads of this event-loop turn, written as one unit of the next group commit. */
  private pending: AuditFields[] = [];
  private batch: Promise<void> | null = null;

  access(principal: Principal, action: AuditAction, resourceIds: readonly string[]): Promise<void> {
    this.pending.push(auditFields(actorOf(principal), principal, action, resourceIds, this.clock.now()));
    // One unit for the turn's reads: one savepoint and one head lookup, however many rows (decision 102).
    this.batch ??= this.groupCommit.run(() => {
      const rows = this.pending;
      this.pending = [];
      this.batch = null;
      appendAuditRows(this.db, rows);
    });
    return this.batch;
  }

  record(who: Principal | Actor, tenant: Tenant | null, action: AuditAction, resourceIds: readonly string[]): void {
    recordAudit(this.db, "credentialId" in who ? actorOf(who) : who, tenant, action, resourceIds, this.clock.now());
  }
}

/**
 * Appends one row inside the caller's transaction: for code that holds no Deps (the keys
 * and projects services the CLI and an admin session share). Modules with Deps use deps.audit.
 */
export function recordAudit(db: Database, actor: Actor, tenant: Tenant | null, action: AuditAction, resourceIds: readonly string[], now: Date): void {
  appendAuditRows(db, [auditFields(actor, tenant, action, resourceIds, now)]);
}

function auditFields(actor: Actor, tenant: Tenant | null, action: AuditAction, resourceIds: readonly string[], now: Date): AuditFields {
  return {
    id: newId("aud_", now.getTime()),
    created_at: now.toISOString(),
    project_id: tenant?.projectId ?? null,
    mode: tenant?.mode ?? null,
    actor_type: actor.type,
    actor_id: actor.id,
    admin_email: actor.adminEmail ?? null,
    device_id: actor.deviceId ?? null,
    action,
    resource_ids: JSON.stringify([...new Set(resourceIds)]),
    request_id: actor.origin?.requestId ?? null,
    client_address: actor.origin?.clientAddress ?? null,
  };
}
