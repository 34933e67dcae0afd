import { decryptWithServerSecret } from "../../crypto";
import type { Deps } from "../../deps";
import { newId } from "../../ids";
import {
  type AttemptTarget,
  type DueDelivery,
  dueDeliveries,
  fanOutEvents,
  leaseDelivery,
  loadAttemptTarget,
  recordAttempt,
  releaseForeignLeases,
} from "./delivery-store";
import { type PostResult, postWebhook } from "./http-post";
import { signatureHeaders } from "./signing";
import { resolveWebhookTarget } from "./url-policy";

/**
 * Attempts in flight at once: in all, per project and per endpoint. A dead endpoint holds
 * at most its own slots, and a project with many dead endpoints at most its own: with the
 * project cap a quarter of the total, it takes four projects full of dead endpoints at
 * once to fill every slot, and a slot that frees goes to the least busy project first.
 */
export const CONCURRENCY = { total: 64, perProject: 16, perEndpoint: 4 } as const;
/** An endpoint failing without a single success for this long is disabled. */
export const DISABLE_AFTER_MS = 3 * 86_400_000;
/**
 * Failures further apart than this are separate streaks: at least the whole retry
 * schedule (a dead endpoint with one event fails that often) and at least a day, so an
 * endpoint that fails each day's only event still counts as continuously failing.
 */
export function streakGapMs(retryDelaysSeconds: readonly number[]): number {
  return Math.max(86_400_000, retryDelaysSeconds.reduce((sum, s) => sum + s, 0) * 1000);
}
/** The lease outlives the attempt's timeout, so only a dead process loses one (and it is retried). */
const LEASE_MARGIN_MS = 30_000;

/** What the dispatcher works with: the rest of Deps, which holds the dispatcher itself. */
export type DispatcherDeps = Pick<Deps, "db" | "clock" | "log" | "config" | "dns" | "serverSecret">;

/**
 * Fans outbox events out to endpoints and runs due delivery attempts, concurrently and
 * bounded. Everything it needs to resume is in the database (deliveries with a due time
 * and a lease), so a restart picks up where the last process stopped. One per Deps
 * (boot.ts), woken by that Deps' event bus only.
 */
export class WebhookDispatcher {
  readonly workerId = newId("whw_");
  private inFlight = new Map<string, Promise<void>>();
  /** Per endpoint with attempts in flight: how many, and the switch that cancels them when it is deleted. */
  private endpoints = new Map<string, { running: number; cancel: AbortController }>();
  private perProject = new Map<string, number>();
  private active = false;
  private started = false;
  private kickPending = false;

  constructor(private deps: DispatcherDeps) {}

  /** The periodic sweep (serve): from the first tick on, new events and finished attempts also wake it at once. */
  tick(): void {
    this.active = true;
    this.pump();
  }

  /** Wakes the dispatcher soon; a no-op until the scheduler runs it, so tests drive it with drain(). */
  kick(): void {
    if (!this.active || this.kickPending) return;
    this.kickPending = true;
    // setImmediate, not setTimeout(0): it coalesces the wake-ups of one turn without the
    // timer's minimum delay, which bounded one endpoint's throughput.
    setImmediate(() => {
      this.kickPending = false;
      this.pump();
    });
  }

  /** Shutdown: no new attempts; the ones under way finish and are recorded, so a restart does not send them again. */
  async stop(): Promise<void> {
    this.active = false;
    await Promise.allSettled(this.inFlight.values());
  }

  /** Fans out and attempts everything due now, waiting for the attempts (tests and benches; serve uses tick and kick). */
  async drain(): Promise<void> {
    for (;;) {
      this.pump();
      if (this.inFlight.size === 0) return;
      await Promise.race(this.inFlight.values());
    }
  }

  private pump(): void {
    const { db, clock, log } = this.deps;
    try {
      if (!this.started) {
        releaseForeignLeases(db, this.workerId);
        this.started = true;
      }
      const now = clock.now();
      const free = CONCURRENCY.total - this.inFlight.size;
      // One transaction for the fan-out and all the leases of this turn: one commit, not one per delivery.
      const leased = db.transaction(() => {
        while (fanOutEvents(db, now) > 0);
        if (free <= 0) return [];
        const leaseMs = this.deps.config.webhooks.timeoutMs + LEASE_MARGIN_MS;
        const busyEndpoints = Object.fromEntries([...this.endpoints].map(([id, e]) => [id, e.running]));
        const due = dueDeliveries(db, now, { ...CONCURRENCY, limit: free, busyEndpoints, busyProjects: Object.fromEntries(this.perProject) });
        return due.filter((d) => !this.inFlight.has(d.id) && leaseDelivery(db, d.id, this.workerId, now, leaseMs));
      })();
      for (const due of leased) this.launch(due);
    } catch (err) {
      log.error("webhook dispatch failed", { error: String(err) });
    }
  }

  /**
   * Cancels the attempts in flight to a deleted endpoint, so nothing reaches it after
   * DELETE returns (its deliveries went with it, so none is attempted again).
   */
  cancelEndpoint(endpointId: string): void {
    this.endpoints.get(endpointId)?.cancel.abort();
  }

  private launch(due: DueDelivery): void {
    const slot = this.endpoints.get(due.endpoint_id) ?? { running: 0, cancel: new AbortController() };
    slot.running++;
    this.endpoints.set(due.endpoint_id, slot);
    this.perProject.set(due.project_id, (this.perProject.get(due.project_id) ?? 0) + 1);
    const p = this.attempt(due.id, slot.cancel.signal)
      .catch((err) => this.deps.log.error("webhook attempt crashed", { delivery_id: due.id, error: String(err) }))
      .finally(() => {
        this.inFlight.delete(due.id);
        if (--slot.running === 0) this.endpoints.delete(due.endpoint_id);
        const left = (this.perProject.get(due.project_id) ?? 1) - 1;
        if (left > 0) this.perProject.set(due.project_id, left);
        else this.perProject.delete(due.project_id);
        this.kick();
      });
    this.inFlight.set(due.id, p);
  }

  private async attempt(deliveryId: string, cancel: AbortSignal): Promise<void> {
    const { db, clock, config, log } = this.deps;
    const target = loadAttemptTarget(db, deliveryId);
    if (!target) return; // endpoint or event deleted: the delivery row went with it
    const result = await this.send(target, cancel);
    if (cancel.aborted) return; // the endpoint was deleted, and its deliveries with it: nothing to record
    const { delivery, endpoint } = target;
    if (!result.outcome.ok)
      log.warn("webhook attempt failed", {
        delivery_id: delivery.id,
        webhook_id: endpoint.id,
        attempt: delivery.attempt_count + 1,
        error: result.outcome.error,
      });
    recordAttempt(
      db,
      delivery,
      this.workerId,
      {
        ok: result.outcome.ok,
        attempt: {
          attempted_at: result.at,
          latency_ms: result.latencyMs,
          response_status: result.outcome.status,
          response_snippet: result.outcome.snippet,
          error: result.outcome.error,
        },
        retryDelaysSeconds: config.webhooks.retryDelaysSeconds,
        disableAfterMs: DISABLE_AFTER_MS,
        streakGapMs: streakGapMs(config.webhooks.retryDelaysSeconds),
      },
      clock.now(),
    );
  }

  private async send({ endpoint, event }: AttemptTarget, cancel: AbortSignal): Promise<{ at: string; latencyMs: number; outcome: PostResult }> {
    const { clock, config, serverSecret } = this.deps;
    const now = clock.now();
    const started = performance.now();
    const body = JSON.stringify({ id: event.id, type: event.type, created_at: event.created_at, data: JSON.parse(event.data) });
    const refused = (error: string) => ({ at: now.toISOString(), latencyMs: 0, outcome: { ok: false, status: null, snippet: null, error } });
    let secret: string;
    try {
      secret = decryptWithServerSecret(serverSecret, endpoint.secret_sealed);
    } catch {
      // A failed attempt, not a crash: otherwise the lease would lapse and it would loop unrecorded.
      return refused("the signing secret cannot be unsealed: the server secret changed; recreate the endpoint");
    }
    // The creation check can be outlived by DNS changes: check again now, and connect to the addresses checked.
    const target = await resolveWebhookTarget(new URL(endpoint.url), config.webhooks, { resolve: this.deps.dns });
    if (target.kind !== "connect") return refused(target.message);
    const headers = {
      "content-type": "application/json",
      "user-agent": "Parley-Webhooks/1",
      ...signatureHeaders(secret, event.id, Math.floor(now.getTime() / 1000), body),
    };
    const outcome = await postWebhook({ url: endpoint.url, addresses: target.addresses }, body, headers, config.webhooks.timeoutMs, cancel);
    return { at: now.toISOString(), latencyMs: Math.round(performance.now() - started), outcome };
  }
}
