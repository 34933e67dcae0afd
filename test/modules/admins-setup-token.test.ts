import { describe, expect, spyOn, test } from "bun:test";
import { adminCommand } from "../../src/modules/admins/cli";
import { createAdmin } from "../../src/modules/admins/service";
import { makeTestApp } from "../helpers";

// Issue 29, item 3 (decision 115): the setup token is spent whenever an administrator comes
// to exist, however made, and setup reopening makes a new one.

type T = Awaited<ReturnType<typeof makeTestApp>>;
const PASSWORD = "correct horse battery staple";

/** POST /dashboard/api/setup from away from the box (app.handle has no loopback socket). */
const setup = (t: T, token: string, email = "again@clinic.example") =>
  t.app.handle(
    new Request("http://localhost/dashboard/api/setup", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: PASSWORD, token }),
    }),
  );

/** Runs `parley admin ARGS` in this process against the test app's database; returns what it printed. */
async function parleyAdmin(t: T, args: string[]): Promise<string> {
  const log = spyOn(console, "log").mockImplementation(() => {});
  try {
    await adminCommand(t.deps, args);
    return log.mock.calls.map((c) => c.join(" ")).join("\n");
  } finally {
    log.mockRestore();
  }
}

describe("the setup token", () => {
  test("an administrator made with `parley admin create` spends the printed token; removing the last one reopens setup with a new token", async () => {
    const t = await makeTestApp();
    const printed = t.deps.dashboardSessions.setupTokenToPrint()!;
    expect(printed).toMatch(/^setup_/);
    expect(t.deps.dashboardSessions.setupTokenToPrint()).toBe(printed);

    process.env.PARLEY_ADMIN_PASSWORD = PASSWORD;
    try {
      await parleyAdmin(t, ["create", "ops@clinic.example"]);
    } finally {
      delete process.env.PARLEY_ADMIN_PASSWORD;
    }
    const removed = await parleyAdmin(t, ["remove", "ops@clinic.example"]);
    const reopened = removed.match(/setup_[\w-]+/)?.[0];
    expect(reopened).toBeDefined();
    expect(reopened).not.toBe(printed);

    const stale = await setup(t, printed);
    expect(stale.status).toBe(403);
    expect((await stale.json()).error.param).toBe("token");
    expect((await setup(t, reopened!)).status).toBe(201);
    // Spent by that setup in turn.
    await parleyAdmin(t, ["remove", "again@clinic.example"]);
    expect((await setup(t, reopened!, "third@clinic.example")).status).toBe(403);
  });

  test("an administrator made any other way spends it too, and the server's next token is a new one", async () => {
    const t = await makeTestApp();
    const printed = t.deps.dashboardSessions.setupTokenToPrint()!;
    await createAdmin(t.deps.db, "ops@clinic.example", PASSWORD, "owner", t.clock.now());
    expect(t.deps.dashboardSessions.setupTokenToPrint()).toBeNull();
    t.deps.db.query("DELETE FROM admins").run();
    expect((await setup(t, printed)).status).toBe(403);
    const next = t.deps.dashboardSessions.setupTokenToPrint()!;
    expect(next).not.toBe(printed);
    expect((await setup(t, next)).status).toBe(201);
  });

  test("the database keeps the token's hash only", async () => {
    const t = await makeTestApp();
    const printed = t.deps.dashboardSessions.setupTokenToPrint()!;
    expect(JSON.stringify(t.deps.db.query("SELECT * FROM setup_token").all())).not.toContain(printed);
  });
});
