// bench/audit.ts: what the access audit log costs a read-heavy route. GET
// /v1/recordings/{id}/audio (a 4 KB range, as a player seeks) on two apps in this process,
// one writing the hash-chained audit row of every read (in the group commit, decision 102)
// and one whose audit trail does nothing; measured in alternating slices, same run.
// Then "who accessed this recording" on an audit log of a million rows: the resource filter
// through its index (decision 112) vs the scan it replaced (bench/support/audit-filter.ts).
// Usage: bun bench/audit.ts [seconds per measurement, default 5] [concurrency, default 32] [audit rows, default 1000000]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../src/app";
import { buildDeps, closeDeps } from "../src/boot";
import { loadConfig } from "../src/config";
import type { Deps } from "../src/deps";
import { newId } from "../src/ids";
import type { AuditTrail } from "../src/modules/audit/service";
import { createApiKey } from "../src/modules/keys/service";
import { createProject } from "../src/modules/projects/service";
import { auditFilterTimes, fillAuditLog } from "./support/audit-filter";
import { fmt, freePort, runBeside } from "./support/load";

const seconds = Number(process.argv[2] ?? 5);
const concurrency = Number(process.argv[3] ?? 32);
const logRows = Number(process.argv[4] ?? 1_000_000);

/** The baseline: the same app with no audit log (never a configuration: production always audits). */
const noAudit: AuditTrail = { access: async () => {}, record: () => {} };

async function benchApp(audited: boolean) {
  const dataDir = mkdtempSync(join(tmpdir(), "parley-bench-audit-"));
  const deps: Deps = buildDeps(
    loadConfig({ PARLEY_DATA_DIR: dataDir, PARLEY_LOG_LEVEL: "silent", PARLEY_RATE_LIMIT_PER_SECOND: "0", PARLEY_RATE_LIMIT_PER_MINUTE: "0" }),
  );
  if (!audited) deps.audit = noAudit;
  const project = createProject(deps.db, "bench", deps.clock.now());
  const key = createApiKey(deps.db, { project: "bench", mode: "test" }, deps.clock.now()).key;
  // An uploaded recording, as upload-complete leaves it.
  const id = newId("rec_");
  const storageKey = `${project.id}/test/${id}/original`;
  const bytes = new Uint8Array(256 * 1024).fill(7);
  await deps.storage.write(
    storageKey,
    (async function* () {
      yield bytes;
    })(),
  );
  const at = new Date().toISOString();
  deps.db
    .query(
      `INSERT INTO recordings (id, project_id, mode, status, storage_key, file_size_bytes, format, sha256, metadata, source, is_streaming, chunk_count, created_at, updated_at)
       VALUES (?, ?, 'test', 'uploaded', ?, ?, 'wav', 'bench', '{}', 'api_upload', 0, 0, ?, ?)`,
    )
    .run(id, project.id, storageKey, bytes.length, at, at);
  const port = freePort();
  const server = Bun.serve({ port, hostname: "127.0.0.1", fetch: createApp(deps).fetch });
  const url = `http://127.0.0.1:${port}/v1/recordings/${id}/audio`;
  const request = () => new Request(url, { headers: { authorization: `Bearer ${key}`, range: "bytes=0-4095" } });
  return { deps, request, stop: () => (server.stop(true), closeDeps(deps), rmSync(dataDir, { recursive: true, force: true })) };
}

const audited = await benchApp(true);
const bare = await benchApp(false);
try {
  const load = { seconds, concurrency };
  await runBeside(bare.request, audited.request, { seconds: 2, concurrency });
  const rowsBefore = audited.deps.db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM audit_events").get()!.n;
  const { baseline, subject } = await runBeside(bare.request, audited.request, load);
  const rows = audited.deps.db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM audit_events").get()!.n - rowsBefore;
  console.log(`bench/audit.ts  (${seconds} s each in 5 alternating slices, ${concurrency} concurrent connections, loopback, both apps in one process)`);
  console.log(`GET audio range, audit off  ${fmt(baseline)}`);
  console.log(`GET audio range, audited    ${fmt(subject)}`);
  console.log(`audit rows written: ${rows} (one per audited read: ${rows === subject.requests ? "yes" : "NO"})`);
  console.log(
    `ratio audited / audit off: ${(subject.perSecond / baseline.perSecond).toFixed(2)}x throughput, p50 +${(subject.p50Ms - baseline.p50Ms).toFixed(2)} ms`,
  );

  const tenant = { projectId: audited.deps.db.query<{ id: string }, []>("SELECT id FROM projects WHERE name = 'bench'").get()!.id, mode: "test" as const };
  const t0 = performance.now();
  fillAuditLog(audited.deps.db, tenant, logRows);
  console.log(
    `\nwho accessed it: GET /v1/audit-events?resource_id= (a page of 50 and the total) on ${logRows} audit rows (written in ${((performance.now() - t0) / 1000).toFixed(1)} s), median of 5:`,
  );
  for (const c of auditFilterTimes(audited.deps.db, tenant)) {
    console.log(
      `  ${c.name.padEnd(24)} indexed ${c.indexed.toFixed(2)} ms   scan of the project's rows ${c.scanned.toFixed(1)} ms   ${(c.scanned / c.indexed).toFixed(0)}x faster`,
    );
  }
} finally {
  audited.stop();
  bare.stop();
}
