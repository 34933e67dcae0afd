import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { ApiError } from "../../http/errors";
import { renderMetrics } from "./metrics-text";
import { healthSchema } from "./schema";
import { healthReport } from "./service";

const PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

/**
 * The operator's view of the box (decision 086), without a key: GET /v1/health always,
 * GET /metrics only with PARLEY_METRICS=1. /healthz stays the bare liveness probe.
 */
export function healthRoutes(deps: Deps) {
  return new Elysia({ name: "parley.health", detail: { tags: ["Operations"], security: [] } })
    .get(
      "/v1/health",
      ({ set }) => {
        const report = healthReport(deps);
        // A monitor that reads only the status sees the one failure the box cannot serve through.
        if (!report.database.ok) set.status = 503;
        return report;
      },
      {
        response: { 200: healthSchema, 503: healthSchema },
        detail: {
          summary: "Health",
          description:
            "No key. Version, whether the database answers, free space per volume, each engine's configured model (installed, bundled, missing or partial, with the command that installs it), and the job queue's depth and oldest job's age. status is degraded when something needs the operator; 503 only when the database does not answer. Nothing secret: no paths, keys, projects or content.",
        },
      },
    )
    .get(
      "/metrics",
      () => {
        if (!deps.config.metrics)
          throw new ApiError("not_found", "Metrics are off: start the server with PARLEY_METRICS=1 to count requests and serve /metrics.");
        return new Response(renderMetrics(deps), { headers: { "content-type": PROMETHEUS_TEXT } });
      },
      {
        detail: {
          summary: "Prometheus metrics",
          description:
            "No key; 404 unless the server runs with PARLEY_METRICS=1. Requests by method, route template and status (count and seconds), jobs by type and state, the oldest unfinished job's age, transcription real-time factor, webhook deliveries by outcome, free bytes per volume. Labels never name a project, key or id.",
          responses: {
            200: {
              description: "The Prometheus text exposition format, version 0.0.4",
              content: { [PROMETHEUS_TEXT]: { schema: { type: "string" as const } } },
            },
          },
        },
      },
    );
}
