import type { Deps } from "../../deps";
import { LATENCY_BUCKETS } from "../../http/metrics";
import { applianceVolumes } from "../../storage";
import { spaceReport } from "../../storage/volumes";
import { VERSION } from "./service";
import { countDeliveries, countJobs, oldestUnfinishedJob } from "./store";

/** A label value in the exposition format: backslash, quote and newline escaped. */
const label = (v: string | number) => `"${String(v).replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
const labels = (l: Record<string, string | number>) =>
  `{${Object.entries(l)
    .map(([k, v]) => `${k}=${label(v)}`)
    .join(",")}}`;

/** One metric family: its HELP and TYPE lines, then its samples. */
function family(
  name: string,
  type: "counter" | "gauge" | "histogram",
  help: string,
  samples: [suffix: string, labels: Record<string, string | number>, value: number][],
): string {
  const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`];
  for (const [suffix, l, value] of samples) lines.push(`${name}${suffix}${Object.keys(l).length ? labels(l) : ""} ${value}`);
  return lines.join("\n");
}

/**
 * GET /metrics in the Prometheus text format (version 0.0.4), decision 086: requests and
 * transcription speed from the process's counters (since it started), jobs and webhook
 * deliveries from the database (so they survive a restart), free space from the volumes.
 */
export function renderMetrics(deps: Deps): string {
  const requests = [...deps.metrics.requests.values()];
  const t = deps.metrics.transcriptions;
  const oldest = oldestUnfinishedJob(deps.db);
  const families = [
    family("parley_info", "gauge", "The running version.", [["", { version: VERSION }, 1]]),
    family(
      "parley_http_request_duration_seconds",
      "histogram",
      "Requests answered and the time they took, by method, route template and status (_count is the request count).",
      requests.flatMap((r) => {
        const l = { method: r.method, route: r.route, status: r.status };
        let below = 0;
        const buckets = LATENCY_BUCKETS.map((le, i) => ["_bucket", { ...l, le }, (below += r.buckets[i]!)]);
        return [...buckets, ["_bucket", { ...l, le: "+Inf" }, r.count], ["_sum", l, r.seconds], ["_count", l, r.count]] as [
          string,
          Record<string, string | number>,
          number,
        ][];
      }),
    ),
    family(
      "parley_jobs",
      "gauge",
      "Jobs queued, running or dead, by type.",
      countJobs(deps.db).map((j) => ["", { type: j.type, state: j.state }, j.count]),
    ),
    family("parley_job_oldest_unfinished_age_seconds", "gauge", "Age of the oldest queued or running job (0 when none).", [
      ["", {}, oldest === null ? 0 : Math.max(0, (deps.clock.now().getTime() - Date.parse(oldest)) / 1000)],
    ]),
    family("parley_transcriptions_completed_total", "counter", "Transcriptions completed since the process started.", [["", {}, t.count]]),
    family("parley_transcription_audio_seconds_total", "counter", "Audio transcribed since the process started, in seconds.", [["", {}, t.audioSeconds]]),
    family("parley_transcription_processing_seconds_total", "counter", "Wall time spent decoding and transcribing it, in seconds.", [
      ["", {}, t.processingSeconds],
    ]),
    family(
      "parley_transcription_real_time_factor",
      "gauge",
      "Processing time over audio time since the process started (below 1: faster than real time; 0 before the first).",
      [["", {}, t.audioSeconds > 0 ? t.processingSeconds / t.audioSeconds : 0]],
    ),
    family(
      "parley_webhook_deliveries",
      "gauge",
      "Webhook deliveries kept, by outcome: pending (being retried), succeeded, failed (gave up).",
      countDeliveries(deps.db).map((d) => ["", { outcome: d.status }, d.count]),
    ),
    family(
      "parley_volume_free_bytes",
      "gauge",
      "Free bytes of each data volume.",
      spaceReport(applianceVolumes(deps.config), deps.config.minFreeBytes).map((v) => ["", { volume: v.volume }, v.free_bytes]),
    ),
  ];
  return `${families.join("\n")}\n`;
}
