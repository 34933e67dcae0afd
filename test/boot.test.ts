import { describe, expect, test } from "bun:test";
import { closeDeps, stopDeps } from "../src/boot";
import { createApiKey, revokeApiKey } from "../src/modules/keys/service";
import { makeTenant, makeTestApp, waitFor } from "./helpers";
import { boundDevice } from "./modules/device-runtime-fixtures";

// Every piece of state is built with its Deps (decision 085): two apps in one process, as
// the tests build them, share nothing observable.

type App = Awaited<ReturnType<typeof makeTestApp>>;

async function twoApps() {
  const apps: [App, App] = [await makeTestApp(), await makeTestApp()];
  return apps.map((t) => ({ t, tenant: makeTenant(t.deps, "share-nothing") }));
}

/** An outbox row written straight to the table, as another process would: it wakes no one in this one. */
function eventWrittenElsewhere(t: App, projectId: string, id: string): void {
  t.deps.db
    .query("INSERT INTO events (id, project_id, mode, type, data, created_at) VALUES (?, ?, 'test', 'recording.created', '{}', ?)")
    .run(id, projectId, t.clock.now().toISOString());
}

const dispatched = (t: App, id: string) =>
  t.deps.db.query<{ dispatched_at: string | null }, [string]>("SELECT dispatched_at FROM events WHERE id = ?").get(id)!.dispatched_at;

describe("two apps in one process share nothing", () => {
  test("an event recorded in one app wakes its own webhook dispatcher, never the other's", async () => {
    const [a, b] = await twoApps();
    // Both dispatchers running, as after serve's first sweep.
    await a!.t.runTask("webhooks-dispatch");
    await b!.t.runTask("webhooks-dispatch");
    eventWrittenElsewhere(b!.t, b!.tenant.project.id, "evt_b_elsewhere");

    expect((await a!.t.call("POST", "/v1/recordings", { key: a!.tenant.test, body: {} })).status).toBe(201);
    const ownEvent = () =>
      a!.t.deps.db.query<{ dispatched_at: string | null }, []>("SELECT dispatched_at FROM events WHERE type = 'recording.created'").get()?.dispatched_at;
    await waitFor("a's own event dispatched", ownEvent);
    // Woken by a's event, b's dispatcher would have fanned its pending event out.
    expect(dispatched(b!.t, "evt_b_elsewhere")).toBeNull();

    // b's own events still wake b.
    expect((await b!.t.call("POST", "/v1/recordings", { key: b!.tenant.test, body: {} })).status).toBe(201);
    await waitFor("b's pending event dispatched", () => dispatched(b!.t, "evt_b_elsewhere"));
  });

  test("a credential one app looked up is never the other's, even for the same Request", async () => {
    const [a, b] = await twoApps();
    const request = new Request("http://localhost/v1/end-users", { headers: { authorization: `Bearer ${a!.tenant.test}` } });
    expect((await a!.t.app.handle(request)).status).toBe(200);
    expect((await b!.t.app.handle(request)).status).toBe(401);
  });

  test("revoking a key in one app's database leaves the other's cached keys as they were", async () => {
    const [a, b] = await twoApps();
    const list = (app: App, key: string) => app.call("GET", "/v1/end-users", { key });
    const [keyA, keyB] = [a!, b!].map(({ t }) => createApiKey(t.deps.db, { project: "share-nothing", mode: "test" }, t.clock.now()));
    expect((await list(a!.t, keyA!.key)).status).toBe(200);
    expect((await list(b!.t, keyB!.key)).status).toBe(200);
    revokeApiKey(a!.t.deps, keyA!.id, a!.t.clock.now());
    expect((await list(a!.t, keyA!.key)).status).toBe(401);
    expect((await list(b!.t, keyB!.key)).status).toBe(200);
  });

  test("holding one app's group commit (its checkpointer catching up) holds none of the other's heartbeats", async () => {
    const [a, b] = await twoApps();
    const [deviceA, deviceB] = [await boundDevice(a!.t, a!.tenant.test), await boundDevice(b!.t, b!.tenant.test)];
    a!.t.deps.groupCommit.pause();
    let heldSettled = false;
    const held = deviceA.heartbeat().then((r) => ((heldSettled = true), r));
    expect((await deviceB.heartbeat()).status).toBe(200);
    expect((await b!.t.call("GET", `/v1/devices/${deviceB.id}/state`, { key: b!.tenant.test })).status).toBe(200);
    expect(heldSettled).toBe(false);
    a!.t.deps.groupCommit.resume();
    expect((await held).status).toBe(200);
  });

  test("closing one app leaves the other serving, its events still waking its dispatcher", async () => {
    const [a, b] = await twoApps();
    await b!.t.runTask("webhooks-dispatch");
    await stopDeps(a!.t.deps, 1_000);
    closeDeps(a!.t.deps);
    expect((await b!.t.call("GET", "/v1/end-users", { key: b!.tenant.test })).status).toBe(200);
    eventWrittenElsewhere(b!.t, b!.tenant.project.id, "evt_b_after_close");
    expect((await b!.t.call("POST", "/v1/recordings", { key: b!.tenant.test, body: {} })).status).toBe(201);
    await waitFor("b's pending event dispatched", () => dispatched(b!.t, "evt_b_after_close"));
  });
});
