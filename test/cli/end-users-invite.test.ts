import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createApp } from "../../src/app";
import { buildDeps, closeDeps } from "../../src/boot";
import { loadConfig } from "../../src/config";
import type { Deps } from "../../src/deps";
import { makeTempDir } from "../helpers";

const CLI = join(import.meta.dir, "..", "..", "src", "cli.ts");

async function parley(args: string[], env: Record<string, string>) {
  const proc = Bun.spawn([process.execPath, CLI, ...args], {
    env: { PATH: process.env.PATH ?? "", PARLEY_LOG_LEVEL: "silent", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

let deps: Deps | undefined;
afterAll(() => deps && closeDeps(deps));

describe("parley end-users invite", () => {
  test("prints a one-time link on PARLEY_PUBLIC_URL that signs the wearer in to /me once", async () => {
    const env = { PARLEY_DATA_DIR: makeTempDir(), PARLEY_PUBLIC_URL: "https://parley.clinic.example" };
    expect((await parley(["projects", "create", "clinic"], env)).code).toBe(0);
    const key = JSON.parse((await parley(["keys", "create", "--project", "clinic", "--mode", "live", "--json"], env)).stdout).key;

    deps = buildDeps(loadConfig({ ...env, PARLEY_LOG_LEVEL: "silent", PARLEY_MODELS_DIR: join(env.PARLEY_DATA_DIR, "models") }));
    const app = createApp(deps);
    const created = await app.handle(
      new Request("http://localhost/v1/end-users", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "Dr. Ana Weber" }),
      }),
    );
    const endUser = ((await created.json()) as { id: string }).id;

    const printed = await parley(["end-users", "invite", endUser, "--json"], env);
    expect(printed.code).toBe(0);
    const invite = JSON.parse(printed.stdout);
    expect(invite.end_user_id).toBe(endUser);
    expect(invite.url).toMatch(/^https:\/\/parley\.clinic\.example\/me\/invite#inv_\w+$/);

    const redeem = () =>
      app.handle(
        new Request("http://localhost/me/api/invite", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ token: invite.url.split("#")[1] }),
        }),
      );
    expect((await redeem()).status).toBe(200);
    expect((await redeem()).status).toBe(401);

    const unknown = await parley(["end-users", "invite", "eu_nobody"], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("No end user eu_nobody.");
    expect((await parley(["end-users", "frobnicate"], env)).code).toBe(2);
  });
});
