import { Elysia } from "elysia";

/**
 * Upper bounds (seconds) of the request latency histogram's buckets: Prometheus' defaults,
 * from a device heartbeat (milliseconds) to a long search or an upload (seconds), so
 * `histogram_quantile(0.95, ...)` gives a p95 per route. +Inf is implicit (the count).
 */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/** Requests of one label set: their count, total seconds, and how many fell in each bucket (not cumulative; the exposition sums them). */
type Timing = { count: number; seconds: number; buckets: number[] };

/**
 * The counters the process keeps for GET /metrics (decision 086); what the database
 * already knows (jobs, webhook deliveries) is read at scrape time instead. Labels are
 * route templates, methods, statuses: nothing that names a project, a key or a path's ids.
 */
export class Metrics {
  /** By `method route status`: one map entry per label set, so counting is a lookup, two additions and a bucket's increment. */
  readonly requests = new Map<string, Timing & { method: string; route: string; status: number }>();
  readonly transcriptions = { count: 0, audioSeconds: 0, processingSeconds: 0 };

  countRequest(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${route} ${status}`;
    let entry = this.requests.get(key);
    if (!entry) this.requests.set(key, (entry = { method, route, status, count: 0, seconds: 0, buckets: LATENCY_BUCKETS.map(() => 0) }));
    entry.count++;
    entry.seconds += seconds;
    // A plain loop, not findIndex: no closure made per request.
    for (let i = 0; i < LATENCY_BUCKETS.length; i++) {
      if (seconds <= LATENCY_BUCKETS[i]!) {
        entry.buckets[i]!++;
        break;
      }
    }
  }

  /** A completed transcription: its audio length and the wall time decoding and transcribing it took. */
  observeTranscription(audioSeconds: number, processingSeconds: number): void {
    this.transcriptions.count++;
    this.transcriptions.audioSeconds += audioSeconds;
    this.transcriptions.processingSeconds += processingSeconds;
  }
}

/**
 * Counts each request by its route template once the response is sent. Mounted only with
 * PARLEY_METRICS=1: off, the hot paths pay nothing at all. The start time is kept per
 * Request object in a WeakMap rather than derived into the context, which would make
 * Elysia build a context property on every request.
 */
export function requestMetrics(metrics: Metrics, enabled: boolean) {
  if (!enabled) return new Elysia({ name: "parley.request-metrics" });
  const startedAt = new WeakMap<Request, number>();
  return new Elysia({ name: "parley.request-metrics" })
    .onRequest(({ request }) => {
      startedAt.set(request, performance.now());
    })
    .onAfterResponse(({ request, route, set }) => {
      const started = startedAt.get(request);
      const seconds = started === undefined ? 0 : (performance.now() - started) / 1000;
      // Unrouted requests (404s for any path or method) share one label set, so a scanner cannot grow the map.
      if (route) metrics.countRequest(request.method, route, Number(set.status ?? 200), seconds);
      else metrics.countRequest("*", "unmatched", Number(set.status ?? 404), seconds);
    })
    .as("global");
}
