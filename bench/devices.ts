// bench/devices.ts: POST /v1/devices/{id}/heartbeat and GET /v1/devices/{id}/state across
// 10,000 bound devices, beside a bare Elysia hello-world measured in the same run.
// Targets: heartbeat >= 0.25x and state >= 0.5x of hello-world, p99 < 10 ms.
// Usage: bun bench/devices.ts [seconds per measurement, default 5] [concurrency, default 32] [devices, default 10000]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildDeps } from "../src/boot";
import { loadConfig } from "../src/config";
import type { Principal } from "../src/http/auth";
import { bindDevice, createDevice } from "../src/modules/devices/service";
import { createEndUser } from "../src/modules/end-users/service";
import { createApiKey } from "../src/modules/keys/service";
import { createProject } from "../src/modules/projects/service";
import { fmt, runBeside, runLoad, startBenchServers } from "./support/load";

const seconds = Number(process.argv[2] ?? 5);
const concurrency = Number(process.argv[3] ?? 32);
const deviceCount = Number(process.argv[4] ?? 10_000);
const dataDir = mkdtempSync(join(tmpdir(), "parley-bench-devices-"));

// Seed the fleet straight into the database the server will open, through the services.
const deps = buildDeps(loadConfig({ PARLEY_DATA_DIR: dataDir, PARLEY_LOG_LEVEL: "silent" }));
const now = deps.clock.now();
const project = createProject(deps.db, "bench", now);
const key = createApiKey(deps.db, { project: "bench", mode: "test" }, now).key;
const principal: Principal = {
  credentialId: "bench",
  kind: "secret",
  projectId: project.id,
  organizationId: project.organization_id,
  mode: "test",
  scopes: null,
  endUserId: null,
  deviceId: null,
  recordingId: null,
  commandId: null,
};
const fleet: { id: string; token: string }[] = [];
const seedStart = performance.now();
deps.db.transaction(() => {
  for (let i = 0; i < deviceCount; i++) {
    const user = createEndUser(deps.db, principal, { name: `wearer ${i}` }, now);
    const device = createDevice(deps.db, principal, { serial_number: `BENCH-${i}`, model: "parley_pin", capabilities: 0x07 }, now);
    fleet.push({ id: device.id, token: bindDevice(deps.db, principal, device.id, user.id, now).device_token });
  }
})();
const seedSeconds = (performance.now() - seedStart) / 1000;
deps.db.close();

const servers = await startBenchServers(dataDir);

try {
  const base = servers.parleyUrl;
  const pick = () => fleet[Math.floor(Math.random() * fleet.length)]!;
  const heartbeatBody = () =>
    JSON.stringify({
      battery_percent: 50 + Math.floor(Math.random() * 50),
      storage_used_mb: 100,
      storage_total_mb: 4096,
      signal_strength_dbm: -60,
      channel: "wifi",
      recording_state: { device_state: "idle", pending_recordings: 0, flags: 0x08, connection_type: ["wifi"], wifi_status: "connected" },
    });
  const heartbeat = () => {
    const d = pick();
    return new Request(`${base}/devices/${d.id}/heartbeat`, {
      method: "POST",
      headers: { authorization: `Bearer ${d.token}`, "content-type": "application/json" },
      body: heartbeatBody(),
    });
  };
  const state = () => new Request(`${base}/devices/${pick().id}/state`, { headers: { authorization: `Bearer ${key}` } });
  const helloGetReq = () => new Request(servers.helloUrl);
  const helloPostReq = () => new Request(servers.helloUrl, { method: "POST", headers: { "content-type": "application/json" }, body: heartbeatBody() });
  const load = { seconds, concurrency };

  // Warm both servers so JIT and caches are in the same state.
  for (const make of [helloGetReq, helloPostReq, heartbeat, state]) await runLoad(make, { seconds: 1, concurrency });

  // Each endpoint beside its baseline in alternating slices, so machine drift hits both alike.
  const { baseline: helloGet, subject: getState } = await runBeside(helloGetReq, state, load);
  const { baseline: helloPost, subject: postHeartbeat } = await runBeside(helloPostReq, heartbeat, load);

  // p99 under light load too: at 32 connections on a shared 2-core box even hello-world's p99 is queueing.
  const light = { seconds, concurrency: 4 };
  const helloLight = await runLoad(helloPostReq, light);
  const stateLight = await runLoad(state, light);
  const heartbeatLight = await runLoad(heartbeat, light);

  console.log(
    `bench/devices.ts  (${deviceCount} bound devices seeded in ${seedSeconds.toFixed(1)} s; ${seconds} s each in 5 alternating slices beside its baseline, ${concurrency} concurrent connections, loopback)`,
  );
  console.log(`hello-world GET                  ${fmt(helloGet)}`);
  console.log(`GET /v1/devices/{id}/state       ${fmt(getState)}`);
  console.log(`hello-world POST (echo)          ${fmt(helloPost)}`);
  console.log(`POST /v1/devices/{id}/heartbeat  ${fmt(postHeartbeat)}`);
  console.log(
    `ratio state     / hello-world GET:  ${(getState.perSecond / helloGet.perSecond).toFixed(2)}x  (target >= 0.5x)   p99 ${getState.p99Ms.toFixed(2)} ms (target < 10 ms)`,
  );
  console.log(
    `ratio heartbeat / hello-world POST: ${(postHeartbeat.perSecond / helloPost.perSecond).toFixed(2)}x  (target >= 0.25x)  p99 ${postHeartbeat.p99Ms.toFixed(2)} ms (target < 10 ms)`,
  );
  console.log(
    `at 4 connections: hello-world POST p99 ${helloLight.p99Ms.toFixed(2)} ms, state p99 ${stateLight.p99Ms.toFixed(2)} ms (${stateLight.perSecond.toFixed(0)} req/s), heartbeat p99 ${heartbeatLight.p99Ms.toFixed(2)} ms (${heartbeatLight.perSecond.toFixed(0)} req/s)  (target < 10 ms)`,
  );
} finally {
  await servers.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
