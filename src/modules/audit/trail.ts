import type { Database } from "bun:sqlite";
import { userInfo } from "node:os";
import type { Clock } from "../../clock";
import type { GroupCommitter } from "../../db/group-commit";
import type { Principal, RequestOrigin } from "../../http/auth";
import { newId } from "../../ids";
import type { Tenant } from "../../tenancy";
import type { AuditAction } from "./actions";
import type { Subject } from "./chain";
import { type AuditFields, appendAuditRows } from "./store";

/**
 * Who acted: a credential (its kind and id, the device of a device token, and an
 * administrator's id and email when an admin session's Principal carries them), the
 * operator at the CLI, or the appliance itself (retention).
 */
export type Actor = {
  type: string;
  id: string | null;
  adminEmail?: string | null;
  deviceId?: string | null;
  origin?: RequestOrigin;
  /** The key, token or session it acted with (for an admin session, `id` is the person's). */
  credential?: string | null;
};

/**
 * Whose content an access disclosed (decision 140): the end users it belongs to (null, for
 * content of no end user, is dropped), and the reason for the whole access when there is
 * one (an export's matter); without it, each end user's open break-glass reason.
 */
export type Disclosed = { endUsers: readonly (string | null)[]; reason?: string | null };

/** An administrator acting through a dashboard session (decision 094). */
export const adminActor = (admin: { adminId: string; adminEmail: string }): Actor => ({ type: "admin", id: admin.adminId, adminEmail: admin.adminEmail });

export function actorOf(principal: Principal): Actor {
  return {
    type: principal.adminId ? "admin" : principal.wearer ? "wearer" : principal.kind,
    id: principal.adminId ?? (principal.wearer ? principal.endUserId : null) ?? principal.credentialId,
    adminEmail: principal.adminEmail ?? null,
    deviceId: principal.deviceId,
    origin: principal.origin,
    credential: principal.credentialId,
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
  access(principal: Principal, action: AuditAction, resourceIds: readonly string[], disclosed: Disclosed): Promise<void>;
  /** A change, recorded inside the caller's transaction: both commit, or neither. `disclosed` when it releases content (an export). */
  record(who: Principal | Actor, tenant: Tenant | null, action: AuditAction, resourceIds: readonly string[], disclosed?: Disclosed): void;
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

  access(principal: Principal, action: AuditAction, resourceIds: readonly string[], disclosed: Disclosed): Promise<void> {
    this.pending.push(auditFields(actorOf(principal), principal, action, resourceIds, this.clock.now(), subjectsOf(principal, disclosed)));
    // One unit for the turn's reads: one savepoint and one head lookup, however many rows (decision 102).
    this.batch ??= this.groupCommit.run(() => {
      const rows = this.pending;
      this.pending = [];
      this.batch = null;
      appendAuditRows(this.db, rows);
    });
    return this.batch;
  }

  record(who: Principal | Actor, tenant: Tenant | null, action: AuditAction, resourceIds: readonly string[], disclosed?: Disclosed): void {
    const principal = "credentialId" in who ? who : null;
    const subjects = disclosed ? subjectsOf(principal, disclosed) : null;
    appendAuditRows(this.db, [auditFields(principal ? actorOf(principal) : (who as Actor), tenant, action, resourceIds, this.clock.now(), subjects)]);
  }
}

/**
 * Appends one row inside the caller's transaction: for code that holds no Deps (the keys
 * and projects services the CLI and an admin session share). Modules with Deps use deps.audit.
 */
export function recordAudit(db: Database, actor: Actor, tenant: Tenant | null, action: AuditAction, resourceIds: readonly string[], now: Date): void {
  appendAuditRows(db, [auditFields(actor, tenant, action, resourceIds, now)]);
}

/** Each end user once, with the reason: the access's own, else the break-glass grant the person holds for that end user. */
function subjectsOf(principal: Principal | null, disclosed: Disclosed): Subject[] | null {
  const endUsers = [...new Set(disclosed.endUsers)].filter((id): id is string => id !== null);
  if (endUsers.length === 0) return null;
  return endUsers.map((endUserId) => {
    const grant = principal?.breakGlass?.get(endUserId);
    return { end_user_id: endUserId, reason: disclosed.reason ?? grant?.reason ?? null, break_glass_id: grant?.id ?? null };
  });
}

function auditFields(
  actor: Actor,
  tenant: Tenant | null,
  action: AuditAction,
  resourceIds: readonly string[],
  now: Date,
  subjects: Subject[] | null = null,
): AuditFields {
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
    credential_id: actor.credential ?? null,
    subjects: subjects && JSON.stringify(subjects),
  };
}
