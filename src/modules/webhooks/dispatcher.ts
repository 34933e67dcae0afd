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
import { signatureHeaders } from "./signing";
import { checkWebhookUrl } from "./url-policy";

/** Attempts in flight at once across all endpoints, and per endpoint: a slow endpoint holds at most its own slots. */
const MAX_IN_FLIGHT = 64;
const PER_ENDPOINT = 4;
/** An endpoint failing without a single success for this long is disabled. */
export const DISABLE_AFTER_MS = 3 * 86_400_000;
const SNIPPET_BYTES = 500;
/** The lease outlives the attempt's timeout, so only a dead process loses one (and it is retried). */
const LEASE_MARGIN_MS = 30_000;

type PostResult = { ok: boolean; status: number | null; snippet: string | null; error: string | null };

async function readSnippet(res: Response): Promise<string | null> {
  if (!res.body) return null;
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < SNIPPET_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } catch {
    // The status decides the outcome; a body cut short only shortens the snippet.
  } finally {
    void reader.cancel().catch(() => {});
  }
  const text = new TextDecoder().decode(Buffer.concat(chunks).subarray(0, SNIPPET_BYTES));
  return text || null;
}

/** One POST: success is a 2xx within the timeout; redirects are not followed (a 3xx is a failure). */
async function post(url: string, body: string, headers: Record<string, string>, timeoutMs: number): Promise<PostResult> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const res = await fetch(url, { method: "POST", body, headers, signal, redirect: "manual" });
    const ok = res.status >= 200 && res.status < 300;
    return { ok, status: res.status, snippet: await readSnippet(res), error: ok ? null : `HTTP ${res.status}` };
  } catch (err) {
    const error = signal.aborted ? `timed out after ${timeoutMs} ms` : err instanceof Error ? err.message : String(err);
    return { ok: false, status: null, snippet: null, error };
  }
}

/**
 * Fans outbox events out to endpoints and runs due delivery attempts, concurrently and
 * bounded. Everything it needs to resume is in the database (deliveries with a due time
 * and a lease), so a restart picks up where the last process stopped.
 */
export class WebhookDispatcher {
  readonly workerId = newId("whw_");
  private inFlight = new Map<string, Promise<void>>();
  private perEndpoint = new Map<string, number>();
  private active = false;
  private started = false;
  private kickPending = false;

  constructor(private deps: Deps) {}

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
      const free = MAX_IN_FLIGHT - this.inFlight.size;
      // One transaction for the fan-out and all the leases of this turn: one commit, not one per delivery.
      const leased = db.transaction(() => {
        while (fanOutEvents(db, now) > 0);
        if (free <= 0) return [];
        const busy = new Map(this.perEndpoint);
        const saturated = [...busy].filter(([, n]) => n >= PER_ENDPOINT).map(([id]) => id);
        const leaseMs = this.deps.config.webhooks.timeoutMs + LEASE_MARGIN_MS;
        return dueDeliveries(db, now, PER_ENDPOINT, free, saturated).filter((due) => {
          const n = busy.get(due.endpoint_id) ?? 0;
          if (n >= PER_ENDPOINT || this.inFlight.has(due.id) || !leaseDelivery(db, due.id, this.workerId, now, leaseMs)) return false;
          busy.set(due.endpoint_id, n + 1);
          return true;
        });
      })();
      for (const due of leased) this.launch(due);
    } catch (err) {
      log.error("webhook dispatch failed", { error: String(err) });
    }
  }

  private launch(due: DueDelivery): void {
    this.perEndpoint.set(due.endpoint_id, (this.perEndpoint.get(due.endpoint_id) ?? 0) + 1);
    const p = this.attempt(due.id)
      .catch((err) => this.deps.log.error("webhook attempt crashed", { delivery_id: due.id, error: String(err) }))
      .finally(() => {
        this.inFlight.delete(due.id);
        const left = (this.perEndpoint.get(due.endpoint_id) ?? 1) - 1;
        if (left > 0) this.perEndpoint.set(due.endpoint_id, left);
        else this.perEndpoint.delete(due.endpoint_id);
        this.kick();
      });
    this.inFlight.set(due.id, p);
  }

  private async attempt(deliveryId: string): Promise<void> {
    const { db, clock, config, log } = this.deps;
    const target = loadAttemptTarget(db, deliveryId);
    if (!target) return; // endpoint or event deleted: the delivery row went with it
    const result = await this.send(target);
    const { delivery, endpoint } = target;
    if (!result.outcome.ok) log.warn("webhook attempt failed", { delivery_id: delivery.id, webhook_id: endpoint.id, attempt: delivery.attempt_count + 1, error: result.outcome.error });
    recordAttempt(
      db,
      delivery,
      this.workerId,
      {
        ok: result.outcome.ok,
        attempt: { attempted_at: result.at, latency_ms: result.latencyMs, response_status: result.outcome.status, response_snippet: result.outcome.snippet, error: result.outcome.error },
        retryDelaysSeconds: config.webhooks.retryDelaysSeconds,
        disableAfterMs: DISABLE_AFTER_MS,
      },
      clock.now(),
    );
  }

  private async send({ endpoint, event }: AttemptTarget): Promise<{ at: string; latencyMs: number; outcome: PostResult }> {
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
    // The creation check can be outlived by DNS changes; refuse again at send time.
    const verdict = config.webhooks.denyPrivate ? await checkWebhookUrl(endpoint.url, true) : null;
    if (verdict) return refused(verdict.message);
    const headers = {
      "content-type": "application/json",
      "user-agent": "Parley-Webhooks/1",
      ...signatureHeaders(secret, event.id, Math.floor(now.getTime() / 1000), body),
    };
    const outcome = await post(endpoint.url, body, headers, config.webhooks.timeoutMs);
    return { at: now.toISOString(), latencyMs: Math.round(performance.now() - started), outcome };
  }
}

const dispatchers = new WeakMap<Deps, WebhookDispatcher>();

/** The one dispatcher of a Deps (a process serves one database). */
export function webhookDispatcher(deps: Deps): WebhookDispatcher {
  let d = dispatchers.get(deps);
  if (!d) dispatchers.set(deps, (d = new WebhookDispatcher(deps)));
  return d;
}
