// bench/api.ts: GET /v1/end-users/{id} and POST /v1/end-users against a bare Elysia
// hello-world measured in the same run. Target: GET >= 0.5x of hello-world.
// Usage: bun bench/api.ts [seconds per measurement, default 5] [concurrency, default 32]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildDeps } from "../src/boot";
import { loadConfig } from "../src/config";
import { createApiKey } from "../src/modules/keys/service";
import { createProject } from "../src/modules/projects/service";
import { fmt, runBeside, runLoad, startBenchServers } from "./support/load";

const seconds = Number(process.argv[2] ?? 5);
const concurrency = Number(process.argv[3] ?? 32);
const dataDir = mkdtempSync(join(tmpdir(), "parley-bench-api-"));

// Seed a project, a key and an end user straight into the database the server will open.
const deps = buildDeps(loadConfig({ PARLEY_DATA_DIR: dataDir, PARLEY_LOG_LEVEL: "silent" }));
createProject(deps.db, "bench", deps.clock.now());
const key = createApiKey(deps.db, { project: "bench", mode: "test" }, deps.clock.now()).key;
deps.db.close();

const servers = await startBenchServers(dataDir);

try {
  const base = servers.parleyUrl;
  const auth = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const created = await (await fetch(`${base}/end-users`, { method: "POST", headers: auth, body: JSON.stringify({ name: "Bench" }) })).json();
  const load = { seconds, concurrency };

  // Warm both servers so JIT and caches are in the same state.
  await runLoad(() => new Request(servers.helloUrl), { seconds: 1, concurrency });
  await runLoad(() => new Request(`${base}/end-users/${created.id}`, { headers: auth }), { seconds: 1, concurrency });

  // Each endpoint beside its baseline in alternating slices, so machine drift hits both alike.
  const get = await runBeside(
    () => new Request(servers.helloUrl),
    () => new Request(`${base}/end-users/${created.id}`, { headers: auth }),
    load,
  );
  const post = await runBeside(
    () => new Request(servers.helloUrl, { method: "POST", headers: { "content-type": "application/json" }, body: '{"name":"Bench"}' }),
    () => new Request(`${base}/end-users`, { method: "POST", headers: auth, body: JSON.stringify({ name: "Bench", metadata: { n: 1 } }) }),
    load,
  );
  const [helloGet, getUser, helloPost, postUser] = [get.baseline, get.subject, post.baseline, post.subject];

  console.log(`bench/api.ts  (${seconds} s each in 5 alternating slices beside its baseline, ${concurrency} concurrent connections, loopback, 2-core machine)`);
  console.log(`hello-world GET           ${fmt(helloGet)}`);
  console.log(`GET /v1/end-users/{id}    ${fmt(getUser)}`);
  console.log(`hello-world POST (echo)   ${fmt(helloPost)}`);
  console.log(`POST /v1/end-users        ${fmt(postUser)}`);
  console.log(`ratio GET  end user / hello-world: ${(getUser.perSecond / helloGet.perSecond).toFixed(2)}x  (target >= 0.5x)`);
  console.log(`ratio POST end user / hello-world: ${(postUser.perSecond / helloPost.perSecond).toFixed(2)}x`);
} finally {
  await servers.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
