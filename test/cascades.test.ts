import { beforeAll, describe, expect, test } from "bun:test";
import { Cascades, type CascadeName } from "../src/events/cascades";
import { makeTenant, makeTestApp } from "./helpers";
import { boundDevice } from "./modules/device-runtime-fixtures";

// A lower module's change cascades into a higher module's rows through hooks in Deps
// (decision 083). What each cascade does is tested with its module (devices-unbind,
// erasure); this file holds the wiring and the transaction they share.

let t: Awaited<ReturnType<typeof makeTestApp>>;
let acme: ReturnType<typeof makeTenant>;
/** The cascade whose extra handler below throws, standing in for a failing higher module. */
let failing: CascadeName | null = null;

beforeAll(async () => {
  t = await makeTestApp();
  acme = makeTenant(t.deps, "cascades-acme");
  for (const name of ["recordingErased", "bindingEnded", "deviceDeleted", "endUserDeleted"] as const) {
    t.deps.cascades.on(name, "test", () => {
      if (failing === name) throw new Error(`${name} handler failed`);
    });
  }
});

describe("cascade hooks", () => {
  test("buildDeps registers every cascade with the module that follows it", () => {
    const registered = t.deps.cascades.registered();
    const production = Object.fromEntries(Object.entries(registered).map(([name, modules]) => [name, modules.filter((m) => m !== "test")]));
    // "legal-holds?" is a guard: asked before the change touches anything (decision 133).
    expect(production).toEqual({
      recordingErased: ["ask", "search", "voices", "legal-holds?"],
      bindingEnded: ["commands"],
      deviceDeleted: ["firmware", "legal-holds?"],
      endUserDeleted: ["devices", "voices", "portal", "legal-holds?"],
      projectDeleted: ["recordings", "legal-holds?"],
    });
  });

  test("a cascade fired with no handler throws: a missing registration cannot pass unnoticed", () => {
    const tenant = { projectId: "prj_x", mode: "test" as const };
    expect(() => new Cascades().fire("bindingEnded", { tenant, deviceId: "dev_x", now: new Date() })).toThrow("has no handler");
  });

  test("a guarded cascade fired without asking its guards first throws: no change can skip the legal holds", () => {
    const cascades = new Cascades();
    const asked: string[] = [];
    cascades.guard("deviceDeleted", "holds", () => void asked.push("guard"));
    cascades.on("deviceDeleted", "follower", () => void asked.push("handler"));
    const event = { tenant: { projectId: "prj_x", mode: "test" as const }, deviceId: "dev_x", now: new Date() };
    expect(() => cascades.fire("deviceDeleted", event)).toThrow("before its guards were asked");
    expect(asked).toEqual([]);
    cascades.check("deviceDeleted", event);
    cascades.fire("deviceDeleted", event);
    expect(asked).toEqual(["guard", "handler"]);
  });
});

describe("a cascade runs in the causing transaction: its failure undoes the change", () => {
  test("end-user deletion: the end user stays, its device stays bound", async () => {
    const d = await boundDevice(t, acme.test);
    failing = "endUserDeleted";
    try {
      expect((await t.call("DELETE", `/v1/end-users/${d.endUserId}`, { key: acme.test })).status).toBe(500);
    } finally {
      failing = null;
    }
    expect((await t.call("GET", `/v1/end-users/${d.endUserId}`, { key: acme.test })).body.deleted_at).toBeNull();
    expect((await t.call("GET", `/v1/devices/${d.id}`, { key: acme.test })).body).toMatchObject({ status: "bound", end_user_id: d.endUserId });
  });

  test("unbind and device deletion: the device stays bound and listed", async () => {
    const d = await boundDevice(t, acme.test);
    for (const [cascade, method, path] of [
      ["bindingEnded", "POST", `/v1/devices/${d.id}/unbind`],
      ["deviceDeleted", "DELETE", `/v1/devices/${d.id}`],
    ] as const) {
      failing = cascade;
      try {
        expect((await t.call(method, path, { key: acme.test })).status).toBe(500);
      } finally {
        failing = null;
      }
      expect((await t.call("GET", `/v1/devices/${d.id}`, { key: acme.test })).body).toMatchObject({ status: "bound", end_user_id: d.endUserId });
    }
  });

  test("recording deletion: the recording stays", async () => {
    const created = await t.call("POST", "/v1/recordings", { key: acme.test, body: {} });
    expect(created.status).toBe(201);
    failing = "recordingErased";
    try {
      expect((await t.call("DELETE", `/v1/recordings/${created.body.id}`, { key: acme.test })).status).toBe(500);
    } finally {
      failing = null;
    }
    expect((await t.call("GET", `/v1/recordings/${created.body.id}`, { key: acme.test })).status).toBe(200);
    expect((await t.call("DELETE", `/v1/recordings/${created.body.id}`, { key: acme.test })).status).toBe(204);
  });
});
