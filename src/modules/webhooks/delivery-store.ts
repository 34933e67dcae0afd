import type { Database } from "bun:sqlite";
import { DEVICE_EVENT_TYPES, type EventType, markEventDispatched } from "../../events/outbox";
import { newId } from "../../ids";
import { type Offer, pickFairly, type ShareLimits } from "./fair-share";
import type { DeliveryAttempt } from "./schema";
import type { DeliveryRow, EndpointRow } from "./store";

/** How many attempts a delivery's log keeps (manual retries can add to the automatic six). */
const ATTEMPT_LOG_SIZE = 20;
const FAN_OUT_BATCH = 500;

type EventRow = { id: string; project_id: string; mode: string; type: string; data: string; created_at: string };
type SubscriberRow = Pick<EndpointRow, "id" | "events" | "include_device_events"> & { plan: string };
type Subscriber = { id: string; types: Set<string>; deviceEvents: boolean };

function toSubscriber(row: SubscriberRow): Subscriber {
  // Device events also need the opt-in and the enterprise plan, checked again at fan-out
  // so a downgraded organization stops receiving them.
  return { id: row.id, types: new Set(JSON.parse(row.events) as string[]), deviceEvents: row.include_device_events === 1 && row.plan === "enterprise" };
}

function subscribes(endpoint: Subscriber, type: string): boolean {
  if (!endpoint.types.has("*") && !endpoint.types.has(type)) return false;
  return endpoint.deviceEvents || !DEVICE_EVENT_TYPES.includes(type as EventType);
}

/**
 * Fans a batch of undispatched outbox events out into delivery rows and marks them
 * dispatched, in one transaction: a crash leaves either both or neither, so an event is
 * never lost nor fanned out twice. Returns how many events it handled.
 */
export function fanOutEvents(db: Database, now: Date): number {
  return db.transaction(() => {
    const events = db.query<EventRow, [number]>("SELECT * FROM events WHERE dispatched_at IS NULL ORDER BY created_at, id LIMIT ?").all(FAN_OUT_BATCH);
    const subscribers = new Map<string, Subscriber[]>();
    const at = now.toISOString();
    const insert = db.query(
      `INSERT INTO webhook_deliveries (id, project_id, mode, endpoint_id, event_id, event_type, status, next_attempt_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?) ON CONFLICT (endpoint_id, event_id) DO NOTHING`,
    );
    for (const event of events) {
      const tenantKey = `${event.project_id}:${event.mode}`;
      let endpoints = subscribers.get(tenantKey);
      if (!endpoints) {
        endpoints = db
          .query<SubscriberRow, [string, string]>(
            `SELECT e.id, e.events, e.include_device_events, o.plan FROM webhook_endpoints e
             JOIN projects p ON p.id = e.project_id JOIN organizations o ON o.id = p.organization_id
             WHERE e.project_id = ? AND e.mode = ? AND e.disabled_at IS NULL`,
          )
          .all(event.project_id, event.mode)
          .map(toSubscriber);
        subscribers.set(tenantKey, endpoints);
      }
      for (const endpoint of endpoints) {
        if (subscribes(endpoint, event.type))
          insert.run(newId("whd_", now.getTime()), event.project_id, event.mode, endpoint.id, event.id, event.type, at, at, at);
      }
      markEventDispatched(db, event.id, at);
    }
    return events.length;
  })();
}

export type DueDelivery = Offer;

/**
 * Due deliveries, picked fairly between projects and endpoints (`pickFairly`), so no
 * backlog, nor attempts hanging on dead endpoints, holds the slots another project
 * needs. Each endpoint offers its oldest due deliveries (up to perEndpoint); saturated
 * endpoints and projects offer none. One index probe per endpoint, so a large backlog
 * costs no more per call than a small one. A disabled endpoint has no pending delivery
 * except one an operator retried by hand, which is meant to run.
 */
export function dueDeliveries(db: Database, now: Date, limits: ShareLimits): DueDelivery[] {
  const saturated = (busy: Record<string, number>, cap: number) => JSON.stringify(Object.keys(busy).filter((k) => busy[k]! >= cap));
  // No endpoint can use more offers than there are free slots; usually few are free (attempts finish one by one), so fewer rows.
  const offers = db
    .query<Offer, [string, string, string, number]>(
      `SELECT d.id, d.endpoint_id, d.project_id, d.next_attempt_at FROM webhook_endpoints e JOIN webhook_deliveries d ON d.id IN (
         SELECT id FROM webhook_deliveries
         WHERE endpoint_id = e.id AND status = 'pending' AND next_attempt_at <= ?1 AND (lease_until IS NULL OR lease_until <= ?1)
         ORDER BY next_attempt_at LIMIT ?4)
       WHERE e.id NOT IN (SELECT value FROM json_each(?2)) AND e.project_id NOT IN (SELECT value FROM json_each(?3))`,
    )
    .all(
      now.toISOString(),
      saturated(limits.busyEndpoints, limits.perEndpoint),
      saturated(limits.busyProjects, limits.perProject),
      Math.min(limits.perEndpoint, limits.limit),
    );
  return pickFairly(offers, limits);
}

/** Takes a delivery for one attempt; false when another worker holds it or it is no longer due. */
export function leaseDelivery(db: Database, id: string, workerId: string, now: Date, leaseMs: number): boolean {
  const at = now.toISOString();
  return (
    db
      .query(
        `UPDATE webhook_deliveries SET lease_until = ?, leased_by = ?
         WHERE id = ? AND status = 'pending' AND (lease_until IS NULL OR lease_until <= ?)`,
      )
      .run(new Date(now.getTime() + leaseMs).toISOString(), workerId, id, at).changes === 1
  );
}

/** Leases held by an earlier process are void once this one starts (one dispatcher per database, like the job queue). */
export function releaseForeignLeases(db: Database, workerId: string): void {
  db.query("UPDATE webhook_deliveries SET lease_until = NULL, leased_by = NULL WHERE leased_by IS NOT NULL AND leased_by != ?").run(workerId);
}

export type AttemptTarget = { delivery: DeliveryRow; endpoint: EndpointRow; event: EventRow };

export function loadAttemptTarget(db: Database, id: string): AttemptTarget | null {
  const delivery = db.query<DeliveryRow, [string]>("SELECT * FROM webhook_deliveries WHERE id = ?").get(id);
  if (!delivery) return null;
  const endpoint = db.query<EndpointRow, [string]>("SELECT * FROM webhook_endpoints WHERE id = ?").get(delivery.endpoint_id);
  const event = db.query<EventRow, [string]>("SELECT * FROM events WHERE id = ?").get(delivery.event_id);
  return endpoint && event ? { delivery, endpoint, event } : null;
}

export type AttemptOutcome = {
  attempt: DeliveryAttempt;
  ok: boolean;
  retryDelaysSeconds: readonly number[];
  disableAfterMs: number;
  /** A failure this long after the previous one starts a new streak instead of extending it. */
  streakGapMs: number;
};

type StreakRow = Pick<EndpointRow, "failing_since" | "last_failed_at" | "disabled_at" | "updated_at">;

/**
 * Extends or restarts the endpoint's failure streak and disables it once the streak is
 * disableAfterMs long. Returns whether the endpoint is (now) disabled. A streak spans
 * only failures close together: one failure, days without traffic and another failure
 * are two short streaks, not days of continuous failure.
 */
function recordFailure(db: Database, endpointId: string, outcome: AttemptOutcome, now: Date): boolean {
  const at = now.toISOString();
  const ep = db.query<StreakRow, [string]>("SELECT failing_since, last_failed_at, disabled_at, updated_at FROM webhook_endpoints WHERE id = ?").get(endpointId);
  if (!ep) return false;
  const stale = !ep.last_failed_at || now.getTime() - Date.parse(ep.last_failed_at) > outcome.streakGapMs;
  // A disabled endpoint keeps the streak that disabled it (a failed manual retry changes nothing).
  const restart = !ep.disabled_at && (!ep.failing_since || stale);
  const failingSince = restart ? at : ep.failing_since!;
  const disable = !ep.disabled_at && now.getTime() - Date.parse(failingSince) >= outcome.disableAfterMs;
  db.query("UPDATE webhook_endpoints SET failing_since = ?, last_failed_at = ?, disabled_at = ?, updated_at = ? WHERE id = ?").run(
    failingSince,
    at,
    disable ? at : ep.disabled_at,
    restart || disable ? at : ep.updated_at, // updated_at tracks what the API shows, not last_failed_at
    endpointId,
  );
  return disable || ep.disabled_at !== null;
}

/**
 * Records one attempt: success ends the delivery and clears the endpoint's failure
 * streak (re-enabling it if disabled: a manual retry is how an operator revives one). A
 * failure schedules the next retry or fails the delivery, and disables an endpoint that
 * has failed without a success for disableAfterMs; a disabled endpoint gets no retries.
 */
export function recordAttempt(db: Database, delivery: DeliveryRow, workerId: string, outcome: AttemptOutcome, now: Date): void {
  const at = now.toISOString();
  db.transaction(() => {
    const current = db.query<DeliveryRow, [string, string]>("SELECT * FROM webhook_deliveries WHERE id = ? AND leased_by = ?").get(delivery.id, workerId);
    if (!current) return; // endpoint deleted meanwhile, or the lease was lost
    let disabled = false;
    if (outcome.ok) {
      db.query(
        "UPDATE webhook_endpoints SET failing_since = NULL, disabled_at = NULL, updated_at = ? WHERE id = ? AND (failing_since IS NOT NULL OR disabled_at IS NOT NULL)",
      ).run(at, current.endpoint_id);
    } else {
      disabled = recordFailure(db, current.endpoint_id, outcome, now);
      // Nothing else of a disabled endpoint stays scheduled (attempts in flight finish and stop here).
      if (disabled) {
        db.query(
          `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, completed_at = ?, updated_at = ?
           WHERE endpoint_id = ? AND status = 'pending' AND leased_by IS NULL`,
        ).run(at, at, current.endpoint_id);
      }
    }
    const attempts = [...(JSON.parse(current.attempts) as DeliveryAttempt[]), outcome.attempt].slice(-ATTEMPT_LOG_SIZE);
    const count = current.attempt_count + 1;
    const delay = disabled ? undefined : outcome.retryDelaysSeconds[count - 1];
    const status = outcome.ok ? "succeeded" : delay === undefined ? "failed" : "pending";
    const nextAt = delay === undefined || outcome.ok ? null : new Date(now.getTime() + delay * 1000).toISOString();
    db.query(
      `UPDATE webhook_deliveries SET status = ?, attempt_count = ?, attempts = ?, next_attempt_at = ?, completed_at = ?,
       lease_until = NULL, leased_by = NULL, updated_at = ? WHERE id = ?`,
    ).run(status, count, JSON.stringify(attempts), nextAt, status === "pending" ? null : at, at, current.id);
  })();
}

/** Gives a lease back without recording an attempt (the endpoint went away mid-flight). */
export function releaseLease(db: Database, id: string, workerId: string): void {
  db.query("UPDATE webhook_deliveries SET lease_until = NULL, leased_by = NULL WHERE id = ? AND leased_by = ?").run(id, workerId);
}

/** Clears the response snippets in the attempt logs of these events' deliveries (a receiver may echo what it was sent). */
export function clearResponseSnippets(db: Database, eventIds: string[]): void {
  const clear = db.query(
    `UPDATE webhook_deliveries SET attempts = (SELECT json_group_array(json_set(value, '$.response_snippet', NULL)) FROM json_each(attempts))
     WHERE event_id = ?`,
  );
  for (const id of eventIds) clear.run(id);
}

/** The delivery log is kept for 30 days after a delivery ends; pending ones are never purged. */
export const DELIVERY_RETENTION_MS = 30 * 86_400_000;

export function purgeFinishedDeliveries(db: Database, now: Date): number {
  return db
    .query("DELETE FROM webhook_deliveries WHERE status != 'pending' AND completed_at <= ?")
    .run(new Date(now.getTime() - DELIVERY_RETENTION_MS).toISOString()).changes;
}
