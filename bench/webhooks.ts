// bench/webhooks.ts: webhook deliveries per second to a local HTTPS receiver (in its own
// process) with 1 and with 50 endpoints, and the delay from event to first attempt
// (p50/p95, target p95 < 1 s), against a baseline of bare signed POSTs to the same
// receiver measured in the same run. Loopback only, bounded sizes.
// Usage: bun bench/webhooks.ts [events for the 1-endpoint burst, default 1000]
// (It re-runs itself with NODE_EXTRA_CA_CERTS pointing at a throwaway CA: Bun reads that
// variable only at process start.)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../src/app";
import { buildDeps } from "../src/boot";
import { loadConfig } from "../src/config";
import { recordEvent } from "../src/events/outbox";
import { createApiKey } from "../src/modules/keys/service";
import { createProject } from "../src/modules/projects/service";
import { dispatchWebhooks, wakeOnEvents } from "../src/modules/webhooks/background";
import { CONCURRENCY } from "../src/modules/webhooks/dispatcher";
import { rerunTrustingCa, startReceiver, TLS_DIR_ENV, tlsFilesIn, trustedTlsFiles } from "../test/support/https-receiver";

const tls = trustedTlsFiles();

if (process.argv[2] === "--receiver") {
  // The receiver process: answers 200 and remembers when each (path, webhook-id) first arrived.
  const first = new Map<string, number>();
  const receiver = startReceiver(tlsFilesIn(process.env[TLS_DIR_ENV]!), (r) => {
    const k = `${r.path} ${r.headers.get("webhook-id")}`;
    if (!first.has(k)) first.set(k, r.receivedAt);
    return { status: 200 };
  });
  const control = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (req) => {
      if (new URL(req.url).pathname === "/reset") first.clear();
      return Response.json({ count: first.size, first: Object.fromEntries(first) });
    },
  });
  console.log(JSON.stringify({ url: receiver.url, control: `http://127.0.0.1:${control.port}` }));
} else if (!tls) {
  const { code, output } = await rerunTrustingCa([import.meta.path, ...process.argv.slice(2)]);
  process.stdout.write(output);
  process.exit(code);
} else {
  await bench(Number(process.argv[2] ?? 1000));
}

function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function bench(burst: number) {
  const child = Bun.spawn([process.execPath, import.meta.path, "--receiver"], { env: process.env, stdout: "pipe", stderr: "inherit" });
  const reader = child.stdout.getReader();
  const line = new TextDecoder().decode((await reader.read()).value);
  const { url, control } = JSON.parse(line) as { url: string; control: string };
  const stats = async (path = "/") => (await (await fetch(`${control}${path}`)).json()) as { count: number; first: Record<string, number> };
  const dataDir = mkdtempSync(join(tmpdir(), "parley-bench-webhooks-"));
  const deps = buildDeps(
    loadConfig({
      PARLEY_DATA_DIR: dataDir,
      PARLEY_LOG_LEVEL: "error",
      PARLEY_RATE_LIMIT_PER_SECOND: "0",
      PARLEY_RATE_LIMIT_PER_MINUTE: "0",
      PARLEY_WEBHOOK_ALLOW_HOSTS: "127.0.0.1",
    }),
  );
  wakeOnEvents(deps);
  const sweep = setInterval(dispatchWebhooks(deps), 1000);
  deps.webhooks.tick();
  const app = createApp(deps);

  async function project(endpoints: number) {
    const p = createProject(deps.db, `bench-${Math.random().toString(36).slice(2)}`, deps.clock.now());
    const key = createApiKey(deps.db, { project: p.name, mode: "test" }, deps.clock.now()).key;
    for (let i = 0; i < endpoints; i++) {
      const res = await app.handle(
        new Request("http://localhost/v1/webhooks", {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ url: `${url}/e${i}`, events: ["*"] }),
        }),
      );
      if (res.status !== 201) throw new Error(`webhook create failed: ${res.status} ${await res.text()}`);
    }
    return { projectId: p.id, mode: "test" as const };
  }

  /** Emits `events` events (paced at `perSecond`, or all at once) and waits for every first delivery. */
  async function run(endpoints: number, events: number, perSecond: number | null) {
    const tenant = await project(endpoints);
    await stats("/reset");
    const emittedAt = new Map<string, number>();
    const started = performance.now();
    for (let i = 0; i < events; i++) {
      const e = deps.db.transaction(() => recordEvent(deps, tenant, "recording.created", { id: `rec_${i}`, status: "created" }, deps.clock.now()))();
      emittedAt.set(e.id, Date.now());
      if (perSecond) await Bun.sleep(1000 / perSecond);
    }
    const expected = events * endpoints;
    const deadline = Date.now() + 120_000;
    let s = await stats();
    while (s.count < expected && Date.now() < deadline) {
      await Bun.sleep(20);
      s = await stats();
    }
    const seconds = (performance.now() - started) / 1000;
    const delays = Object.entries(s.first).map(([k, t]) => t - emittedAt.get(k.split(" ")[1]!)!);
    return { delivered: s.count, expected, perSecond: s.count / seconds, p50: pct(delays, 50), p95: pct(delays, 95) };
  }

  /** Baseline: bare POSTs of the same size to the same receiver, `concurrency` at a time (the dispatcher's bounds: per endpoint, and per project, which one project's 50 endpoints share). */
  async function baseline(requests: number, concurrency: number) {
    await stats("/reset");
    const body = JSON.stringify({ id: "evt_x", type: "recording.created", created_at: new Date().toISOString(), data: { id: "rec_1", status: "created" } });
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < requests) {
          const i = next++;
          await (
            await fetch(`${url}/base${i % 50}`, { method: "POST", body, headers: { "content-type": "application/json", "webhook-id": `evt_${i}` } })
          ).text();
        }
      }),
    );
    return requests / ((performance.now() - started) / 1000);
  }

  try {
    await run(1, 50, null); // warm-up: TLS sessions, JIT
    const base4 = await baseline(1000, CONCURRENCY.perEndpoint);
    const base = await baseline(2000, CONCURRENCY.perProject);
    const one = await run(1, burst, null);
    const fifty = await run(50, Math.max(1, Math.round(burst / 10)), null);
    const paced1 = await run(1, 200, 50);
    const paced50 = await run(50, 40, 10);
    const f = (n: number) => n.toFixed(0).padStart(6);
    console.log("bench/webhooks.ts  (loopback HTTPS receiver in its own process, 2-core machine)");
    console.log(`baseline: bare POSTs, ${CONCURRENCY.perEndpoint} concurrent           ${f(base4)} req/s`);
    console.log(`baseline: bare POSTs, ${CONCURRENCY.perProject} concurrent          ${f(base)} req/s`);
    console.log(
      `burst, 1 endpoint   (${one.expected} deliveries)     ${f(one.perSecond)} deliveries/s  (${(one.perSecond / base4).toFixed(2)}x the ${CONCURRENCY.perEndpoint}-concurrent baseline; ${one.delivered}/${one.expected})`,
    );
    console.log(
      `burst, 50 endpoints (${fifty.expected} deliveries)    ${f(fifty.perSecond)} deliveries/s  (${(fifty.perSecond / base).toFixed(2)}x the ${CONCURRENCY.perProject}-concurrent baseline; ${fifty.delivered}/${fifty.expected})`,
    );
    console.log(`event -> first attempt, 1 endpoint, 50 events/s:  p50 ${paced1.p50} ms  p95 ${paced1.p95} ms  (target p95 < 1000 ms)`);
    console.log(`event -> first attempt, 50 endpoints, 10 events/s: p50 ${paced50.p50} ms  p95 ${paced50.p95} ms  (target p95 < 1000 ms)`);
    console.log(`event -> first attempt during the 1-endpoint burst: p50 ${one.p50} ms  p95 ${one.p95} ms (queueing included)`);
  } finally {
    clearInterval(sweep);
    await deps.webhooks.drain();
    child.kill();
    await child.exited;
    deps.db.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
