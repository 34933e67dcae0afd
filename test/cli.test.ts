import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { makeTempDir } from "./helpers";

const CLI = join(import.meta.dir, "..", "src", "cli.ts");

async function parley(args: string[], env: Record<string, string>) {
  const proc = Bun.spawn([process.execPath, CLI, ...args], { env: { PATH: process.env.PATH ?? "", ...env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

describe("parley CLI", () => {
  test("projects create and keys create/list/revoke, as decisions.md specifies", async () => {
    const env = { PARLEY_DATA_DIR: makeTempDir(), PARLEY_LOG_LEVEL: "silent" };
    const project = await parley(["projects", "create", "clinic", "--json"], env);
    expect(project.code).toBe(0);
    expect(JSON.parse(project.stdout)).toMatchObject({ name: "clinic" });

    const secret = JSON.parse((await parley(["keys", "create", "--project", "clinic", "--mode", "live", "--json"], env)).stdout);
    expect(Object.keys(secret).sort()).toEqual(["end_user_id", "hint", "id", "key", "mode", "scopes"]);
    expect(secret).toMatchObject({ mode: "live", scopes: null, end_user_id: null });
    expect(secret.key).toMatch(/^sk_live_/);
    expect(secret.hint).toBe(`sk_live_...${secret.key.slice(-4)}`);

    const restricted = JSON.parse(
      (await parley(["keys", "create", "--project", "clinic", "--mode", "test", "--scopes", "recordings:read,transcriptions:read", "--json"], env)).stdout,
    );
    expect(restricted.key).toMatch(/^rk_test_/);
    expect(restricted.scopes).toEqual(["recordings:read", "transcriptions:read"]);

    const list = await parley(["keys", "list", "--project", "clinic"], env);
    expect(list.stdout).toContain(secret.hint);
    expect(list.stdout).not.toContain(secret.key);

    expect((await parley(["keys", "revoke", secret.id], env)).code).toBe(0);
    expect((await parley(["keys", "list", "--project", "clinic"], env)).stdout).toContain("REVOKED");
  });

  test("the default organization exists from the first start; org update sets its plan", async () => {
    const env = { PARLEY_DATA_DIR: makeTempDir(), PARLEY_LOG_LEVEL: "silent" };
    const updated = await parley(["org", "update", "--plan", "enterprise", "--json"], env);
    expect(updated.code).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({ name: "default", plan: "enterprise" });
    const { Database } = await import("bun:sqlite");
    const db = new Database(join(env.PARLEY_DATA_DIR, "parley.db"), { readonly: true });
    expect(db.query("SELECT name, plan FROM organizations").all()).toEqual([{ name: "default", plan: "enterprise" }]);
    db.close();
    expect((await parley(["org", "update", "--plan", "gold"], env)).code).toBe(2);
  });

  test("clear errors: unknown scope, unknown project, bad usage, bad config", async () => {
    const env = { PARLEY_DATA_DIR: makeTempDir(), PARLEY_LOG_LEVEL: "silent" };
    await parley(["projects", "create", "p"], env);
    const badScope = await parley(["keys", "create", "--project", "p", "--mode", "test", "--scopes", "everything"], env);
    expect(badScope.code).toBe(1);
    expect(badScope.stderr).toContain("Unknown scope(s): everything");
    const noProject = await parley(["keys", "create", "--project", "nope", "--mode", "test"], env);
    expect(noProject.stderr).toContain("npm run parley -- projects create nope");
    expect((await parley(["keys", "create", "--project", "p"], env)).code).toBe(2);
    const emptyScopes = await parley(["keys", "create", "--project", "p", "--mode", "test", "--scopes", ","], env);
    expect(emptyScopes.code).toBe(2);
    expect(emptyScopes.stdout).not.toContain("sk_test_");
    expect((await parley(["keys", "--bogus"], env)).code).toBe(2);
    const badConfig = await parley(["projects", "list"], { ...env, PARLEY_PORT: "http" });
    expect(badConfig.code).toBe(1);
    expect(badConfig.stderr).toContain("PARLEY_PORT");
  });

  test("serve starts on its defaults, answers, and stops cleanly on SIGTERM", async () => {
    const dataDir = makeTempDir();
    const port = String(20000 + Math.floor(Math.random() * 20000));
    const proc = Bun.spawn([process.execPath, CLI], {
      env: { PATH: process.env.PATH ?? "", PARLEY_DATA_DIR: dataDir, PARLEY_PORT: port },
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      let up = false;
      for (let i = 0; i < 100 && !up; i++) {
        await Bun.sleep(100);
        up = await fetch(`http://127.0.0.1:${port}/healthz`).then(
          (r) => r.ok,
          () => false,
        );
      }
      expect(up).toBe(true);
      const r = await fetch(`http://127.0.0.1:${port}/v1/end-users`);
      expect(r.status).toBe(401);
      expect(await Bun.file(join(dataDir, "parley.db")).exists()).toBe(true);
    } finally {
      proc.kill("SIGTERM");
    }
    expect(await proc.exited).toBe(0);
  });

  test("demo starts the appliance with a key and simulated wearables that upload a conversation at once, and stops after --duration", async () => {
    const dataDir = makeTempDir();
    const port = String(20000 + Math.floor(Math.random() * 20000));
    const demo = await parley(["demo", "--devices", "2", "--duration", "10"], {
      PARLEY_DATA_DIR: dataDir,
      PARLEY_MODELS_DIR: makeTempDir(),
      PARLEY_PORT: port,
      PARLEY_LOG_LEVEL: "silent",
    });
    expect(demo.code).toBe(0);
    // No models: the first thing it says is which to install and how, and it runs on.
    expect(demo.stdout.startsWith("Models not installed")).toBe(true);
    expect(demo.stdout).toContain("models pull whisper-base.en");
    expect(demo.stdout).toContain("models import PATH");
    expect(demo.stdout).toContain(`http://127.0.0.1:${port}/dashboard`);
    const key = demo.stdout.match(/sk_test_\w+/)?.[0];
    expect(key).toBeDefined();
    expect(demo.stdout).toContain("2 devices bound");
    expect(demo.stdout).toMatch(/demo finished: heartbeats [1-9]/);
    // The first heartbeat starts a recording, the next (within one 5 s interval) uploads it.
    expect(demo.stdout).toMatch(/demo finished: .*recordings uploaded [1-9]\d* \(errors 0\)/);
  }, 30_000);
});
