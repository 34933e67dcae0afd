import type { Database } from "bun:sqlite";
import type { Tenant } from "../tenancy";
import { newId } from "../ids";

/** Event types of spec section 6. */
export const EVENT_TYPES = [
  "recording.created",
  "recording.uploaded",
  "recording.deleted",
  "transcription.started",
  "transcription.completed",
  "transcription.failed",
  "summary.started",
  "summary.completed",
  "summary.failed",
  "device.low_battery",
  "device.offline",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
export const DEVICE_EVENT_TYPES: readonly EventType[] = ["device.low_battery", "device.offline"];

export type EventEnvelope = { id: string; type: EventType; created_at: string; data: Record<string, unknown> };

type Listener = () => void;

/**
 * Who hears that an event was committed, so delivery can start without waiting for a poll.
 * One per Deps (boot.ts): an event recorded through one app's Deps wakes that app's
 * dispatcher only.
 */
export class EventBus {
  private readonly listeners = new Set<Listener>();

  /** Calls `listener` after each event is committed; returns the unsubscribe. */
  onRecorded(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Listeners run after the current transaction commits (microtask), never inside it. */
  recorded(): void {
    queueMicrotask(() => {
      for (const l of this.listeners) l();
    });
  }

  /** Shutdown: nothing is woken any more. */
  close(): void {
    this.listeners.clear();
  }
}

/** Where an event goes: the database it is written to, and the bus of the same Deps. */
export type Outbox = { db: Database; events: EventBus };

/**
 * Writes an event to the outbox. Call it inside the transaction that makes the change it
 * reports: the event exists exactly when the change does, whatever crashes after.
 */
export function recordEvent({ db, events }: Outbox, tenant: Tenant, type: EventType, data: Record<string, unknown>, now: Date): EventEnvelope {
  const event: EventEnvelope = { id: newId("evt_", now.getTime()), type, created_at: now.toISOString(), data };
  db.query("INSERT INTO events (id, project_id, mode, type, data, created_at) VALUES (?, ?, ?, ?, ?, ?)").run(
    event.id,
    tenant.projectId,
    tenant.mode,
    type,
    JSON.stringify(data),
    event.created_at,
  );
  events.recorded();
  return event;
}

/** The event was fanned out into webhook deliveries (webhooks' dispatcher, in the same transaction as the delivery rows). */
export function markEventDispatched(db: Database, id: string, at: string): void {
  db.query("UPDATE events SET dispatched_at = ? WHERE id = ?").run(at, id);
}

/** What an erased event keeps of its data: ids, status, template and timestamps; text, segments, metadata and the rest go. */
const keptAfterErasure = (field: string) => field === "id" || field.endsWith("_id") || field === "status" || field === "template" || field.endsWith("_at");

/**
 * Cuts the tenant's events about a resource (data.id or data.recording_id) down to what
 * keptAfterErasure allows, delivered or not: a pending delivery then sends only that
 * (decision 078). `since` is the resource's creation; no event about it is older. Call
 * inside the erasing transaction. Returns the ids of the events it cut.
 */
export function eraseEventData(db: Database, tenant: Tenant, resourceId: string, since: string): string[] {
  const events = db
    .query<{ id: string; data: string }, [string, string, string, string, string]>(
      `SELECT id, data FROM events WHERE project_id = ? AND mode = ? AND created_at >= ?
       AND (json_extract(data, '$.id') = ? OR json_extract(data, '$.recording_id') = ?)`,
    )
    .all(tenant.projectId, tenant.mode, since, resourceId, resourceId);
  const update = db.query("UPDATE events SET data = ? WHERE id = ?");
  for (const event of events) {
    const kept = Object.entries(JSON.parse(event.data) as Record<string, unknown>).filter(([field]) => keptAfterErasure(field));
    update.run(JSON.stringify(Object.fromEntries(kept)), event.id);
  }
  return events.map((e) => e.id);
}

export const EVENT_RETENTION_DAYS = 30;

/**
 * Scheduled purge of fanned-out events past their retention. Deleting an event deletes
 * its webhook deliveries (ON DELETE CASCADE), so an event is kept while any delivery of
 * it is pending (a manual retry can revive a month-old one) or has ended within the
 * delivery log's own retention (the same 30 days, counted from when it ended).
 */
export function purgeOldEvents(db: Database, now: Date): number {
  const cutoff = new Date(now.getTime() - EVENT_RETENTION_DAYS * 86_400_000).toISOString();
  return db
    .query(
      `DELETE FROM events WHERE created_at <= ?1 AND dispatched_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = events.id AND (d.status = 'pending' OR d.completed_at > ?1))`,
    )
    .run(cutoff).changes;
}
