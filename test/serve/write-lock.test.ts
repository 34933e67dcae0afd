// Writes beside erasures (issue 31): every delete of an end user or a recording queues a WAL
// truncation, which the checkpoint worker runs on its own connection; a CLI process writes to
// the same database. A transaction that read before it wrote used to get SQLITE_BUSY at once
// when its snapshot went stale in between (a 500 "database is locked"): every write
// transaction now takes the write lock up front, so each waits its turn instead.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { join } from "node:path";
import { makeTempDir } from "../helpers";
import { apiClient, freePort, parley, startServer } from "../support/server-process";

const ROUNDS = 60;

test("writes from the server, a device heartbeating and a CLI process, while the worker truncates the WAL after each erasure: no request and no command fails", async () => {
  // No rate limit: the loops below go as fast as the server answers.
  const env = { PARLEY_DATA_DIR: makeTempDir(), PARLEY_PORT: String(freePort()), PARLEY_RATE_LIMIT_PER_SECOND: "0", PARLEY_RATE_LIMIT_PER_MINUTE: "0" };
  const server = await startServer(env);
  const api = await apiClient(env, server.base);
  const failures: string[] = [];
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await api(method, path, body);
    if (!r.ok) failures.push(`${method} ${path}: ${r.status} ${await r.text()}`);
    return r.ok && r.status !== 204 ? r.json() : null;
  };

  const wearer = await call("POST", "/end-users", { name: "wearer" });
  const device = await call("POST", "/devices", { serial_number: "LOCK-1", model: "parley_pin", capabilities: 1 });
  const token = (await call("POST", `/devices/${device.id}/bind`, { end_user_id: wearer.id })).device_token as string;

  let done = false;
  // The first client: create an end user, delete it (an erasure), create another.
  const endUsers = (async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const user = await call("POST", "/end-users", { name: `person ${i}` });
      if (user) await call("DELETE", `/end-users/${user.id}`);
      await call("POST", "/end-users", { name: `person ${i} again` });
    }
  })();
  // Its second: recordings created and deleted while the device heartbeats.
  const recordings = (async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const rec = await call("POST", "/recordings", { end_user_id: wearer.id });
      if (rec) await call("DELETE", `/recordings/${rec.id}`);
    }
  })();
  let heartbeats = 0;
  const device_ = (async () => {
    while (!done) {
      const r = await fetch(`${server.base}/v1/devices/${device.id}/heartbeat`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ battery_percent: 80, storage_used_mb: 1, storage_total_mb: 4096, channel: "wifi" }),
      });
      if (r.ok) heartbeats++;
      else failures.push(`heartbeat: ${r.status} ${await r.text()}`);
    }
  })();
  // A CLI process beside the server, writing to the same database.
  let commands = 0;
  const cli = (async () => {
    while (!done) {
      const out = await parley(["keys", "create", "--project", "clinic", "--mode", "test", "--name", `cli ${commands}`], env);
      if (out.code === 0) commands++;
      else failures.push(`parley keys create: exit ${out.code} ${out.stderr}`);
    }
  })();

  await Promise.all([endUsers, recordings]);
  done = true;
  await Promise.all([device_, cli]);
  expect(failures).toEqual([]);
  // The load was there: the device and the CLI wrote throughout.
  expect(heartbeats).toBeGreaterThan(0);
  expect(commands).toBeGreaterThan(0);
  expect(server.stderr()).not.toContain("database is locked");
  server.proc.kill("SIGTERM");
  expect(await server.proc.exited).toBe(0);
  // The worker truncated the WAL meanwhile, once per erasure or for several at once.
  const db = new Database(join(env.PARLEY_DATA_DIR, "parley.db"), { readonly: true });
  expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM jobs WHERE type = 'db.truncate_wal' AND state = 'done'").get()!.n).toBeGreaterThan(0);
  db.close();
}, 300_000);
