// bench/response-validation.ts: what validating a response against its declared schema
// costs on the two hottest routes, GET /devices/{id}/state and POST /devices/{id}/heartbeat
// (decision 006). Each route is mounted twice in one process, with and without its
// `response` schema, and the two are timed in alternating slices through app.handle, so
// machine drift hits both alike. No HTTP: the difference is not lost in the socket's cost.
// Usage: bun bench/response-validation.ts [slices, default 60] [requests per slice, default 500]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Elysia } from "elysia";
import { createApp } from "../src/app";
import { buildDeps } from "../src/boot";
import { loadConfig } from "../src/config";
import { authentication, authorize } from "../src/http/auth";
import { idParam } from "../src/http/schemas";
import { deviceStateSchema } from "../src/modules/devices/schema";
import { getDeviceState } from "../src/modules/devices/service";
import { heartbeatBody, heartbeatResponseSchema } from "../src/modules/heartbeats/schema";
import { recordHeartbeat } from "../src/modules/heartbeats/service";
import { createApiKey } from "../src/modules/keys/service";
import { createProject } from "../src/modules/projects/service";

const slices = Number(process.argv[2] ?? 60);
const perSlice = Number(process.argv[3] ?? 500);
const dataDir = mkdtempSync(join(tmpdir(), "parley-bench-response-"));
const deps = buildDeps(
  loadConfig({ PARLEY_DATA_DIR: dataDir, PARLEY_LOG_LEVEL: "silent", PARLEY_RATE_LIMIT_PER_SECOND: "0", PARLEY_RATE_LIMIT_PER_MINUTE: "0" }),
);

createProject(deps.db, "bench", deps.clock.now());
const key = createApiKey(deps.db, { project: "bench", mode: "test" }, deps.clock.now()).key;

// One bound device, set up through the API as a client would.
const api = createApp(deps);
async function post(path: string, body: unknown) {
  const res = await api.handle(
    new Request(`http://localhost/v1${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  );
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
}
const user = await post("/end-users", { name: "wearer" });
const device = await post("/devices", { serial_number: "BENCH-RV-1", model: "parley_pin" });
const token: string = (await post(`/devices/${device.id}/bind`, { end_user_id: user.id })).device_token;

/** The two routes as their modules declare them, with or without the response schema. */
const routes = (validated: boolean) =>
  new Elysia()
    .use(authentication(deps))
    .get("/state/:id", ({ principal, params }) => getDeviceState(deps, authorize(principal, "devices:read"), params.id), {
      params: idParam,
      ...(validated ? { response: { 200: deviceStateSchema } } : {}),
    })
    .post("/heartbeat/:id", ({ principal, params, body }) => recordHeartbeat(deps, principal, params.id, body, deps.clock.now()), {
      params: idParam,
      body: heartbeatBody,
      ...(validated ? { response: { 200: heartbeatResponseSchema } } : {}),
    });

const requests = {
  state: () => new Request(`http://localhost/state/${device.id}`, { headers: { authorization: `Bearer ${key}` } }),
  heartbeat: () =>
    new Request(`http://localhost/heartbeat/${device.id}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ battery_percent: 70, channel: "wifi", recording_state: { device_state: "idle" } }),
    }),
};
const apps = { without: routes(false), with: routes(true) };
const timings: Record<string, number[]> = {};
const warmup = Math.min(10, Math.floor(slices / 5));

try {
  for (let slice = 0; slice < slices; slice++) {
    for (const [variant, app] of Object.entries(apps)) {
      for (const [route, make] of Object.entries(requests)) {
        const start = performance.now();
        for (let i = 0; i < perSlice; i++) {
          const res = await app.handle(make());
          if (res.status !== 200) throw new Error(`${route}: ${res.status} ${await res.text()}`);
          await res.arrayBuffer();
        }
        if (slice >= warmup) (timings[`${route} ${variant} schema`] ??= []).push(((performance.now() - start) * 1000) / perSlice);
      }
    }
  }
  const at = (sorted: number[], q: number) => sorted[Math.floor(q * (sorted.length - 1))]!.toFixed(1);
  console.log(`bench/response-validation.ts  (${slices - warmup} slices of ${perSlice} requests each, through app.handle; µs per request)`);
  for (const [name, values] of Object.entries(timings).sort(([a], [b]) => a.localeCompare(b))) {
    const sorted = [...values].sort((a, b) => a - b);
    console.log(`${name.padEnd(28)} p10 ${at(sorted, 0.1)}  median ${at(sorted, 0.5)}`);
  }
} finally {
  deps.db.close();
  rmSync(dataDir, { recursive: true, force: true });
}
