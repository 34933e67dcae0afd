import type { Database, SQLQueryBindings } from "bun:sqlite";
import type { Tenant } from "../../tenancy";
import { type Page, type PageRequest, paginate } from "../../http/pagination";
import type { DeliveryAttempt, WebhookDelivery, WebhookEndpoint } from "./schema";

export type EndpointRow = {
  id: string;
  project_id: string;
  mode: string;
  url: string;
  events: string;
  include_device_events: number;
  secret_sealed: string;
  failing_since: string | null;
  /** The latest failed attempt: how far apart failures are decides whether they form one streak. */
  last_failed_at: string | null;
  disabled_at: string | null;
  created_at: string;
  updated_at: string;
};

export type DeliveryRow = {
  id: string;
  project_id: string;
  mode: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: WebhookDelivery["status"];
  attempt_count: number;
  attempts: string;
  next_attempt_at: string | null;
  lease_until: string | null;
  leased_by: string | null;
  completed_at: string | null;
  created_at: string;
  updated_at: string;
};

export function toEndpoint(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events),
    include_device_events: row.include_device_events === 1,
    status: row.disabled_at ? "disabled" : "enabled",
    disabled_at: row.disabled_at,
    failing_since: row.failing_since,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function toDelivery(row: DeliveryRow): WebhookDelivery {
  const attempts = JSON.parse(row.attempts) as DeliveryAttempt[];
  return {
    id: row.id,
    webhook_id: row.endpoint_id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    attempt_count: row.attempt_count,
    next_attempt_at: row.next_attempt_at,
    last_attempt: attempts[attempts.length - 1] ?? null,
    attempts,
    completed_at: row.completed_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function insertEndpoint(db: Database, tenant: Tenant, row: Omit<EndpointRow, "project_id" | "mode" | "last_failed_at">): void {
  db.query(
    `INSERT INTO webhook_endpoints (id, project_id, mode, url, events, include_device_events, secret_sealed, failing_since, disabled_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    row.id,
    tenant.projectId,
    tenant.mode,
    row.url,
    row.events,
    row.include_device_events,
    row.secret_sealed,
    row.failing_since,
    row.disabled_at,
    row.created_at,
    row.updated_at,
  );
}

export function findEndpoint(db: Database, tenant: Tenant, id: string): EndpointRow | null {
  return db
    .query<EndpointRow, [string, string, string]>("SELECT * FROM webhook_endpoints WHERE id = ? AND project_id = ? AND mode = ?")
    .get(id, tenant.projectId, tenant.mode);
}

export function listEndpointRows(db: Database, tenant: Tenant, page: PageRequest): Page<WebhookEndpoint> {
  return paginate<EndpointRow, WebhookEndpoint>(
    db,
    { table: "webhook_endpoints", where: ["project_id = ?", "mode = ?"], params: [tenant.projectId, tenant.mode] },
    page,
    toEndpoint,
  );
}

/** Deleting an endpoint deletes its deliveries (CASCADE): pending ones are never attempted again. */
export function deleteEndpointRow(db: Database, tenant: Tenant, id: string): boolean {
  return db.query("DELETE FROM webhook_endpoints WHERE id = ? AND project_id = ? AND mode = ?").run(id, tenant.projectId, tenant.mode).changes > 0;
}

export function findDelivery(db: Database, tenant: Tenant, endpointId: string, id: string): DeliveryRow | null {
  return db
    .query<DeliveryRow, [string, string, string, string]>("SELECT * FROM webhook_deliveries WHERE id = ? AND endpoint_id = ? AND project_id = ? AND mode = ?")
    .get(id, endpointId, tenant.projectId, tenant.mode);
}

export function listDeliveryRows(db: Database, tenant: Tenant, endpointId: string, status: string | undefined, page: PageRequest): Page<WebhookDelivery> {
  const where = ["endpoint_id = ?", "project_id = ?", "mode = ?"];
  const params: SQLQueryBindings[] = [endpointId, tenant.projectId, tenant.mode];
  if (status) {
    where.push("status = ?");
    params.push(status);
  }
  return paginate<DeliveryRow, WebhookDelivery>(db, { table: "webhook_deliveries", where, params }, page, toDelivery);
}

/** A manual retry: the delivery is due now, whatever its state, and keeps its attempt log. */
export function scheduleDeliveryNow(db: Database, tenant: Tenant, id: string, now: string): void {
  db.query(
    `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?, completed_at = NULL, updated_at = ?
     WHERE id = ? AND project_id = ? AND mode = ?`,
  ).run(now, now, id, tenant.projectId, tenant.mode);
}
