import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { makeTempDir } from "../helpers";

const CLI = join(import.meta.dir, "..", "..", "src", "cli.ts");

/** Runs parley with stdin from `input` (not a terminal, as in a script). */
async function parley(args: string[], env: Record<string, string>, input?: string) {
  const proc = Bun.spawn([process.execPath, CLI, ...args], {
    env: { PATH: process.env.PATH ?? "", PARLEY_LOG_LEVEL: "silent", ...env },
    stdin: input === undefined ? "ignore" : new Blob([input]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

function storedAdmins(dataDir: string) {
  const db = new Database(join(dataDir, "parley.db"), { readonly: true });
  try {
    return db.query<{ email: string; password_hash: string }, []>("SELECT email, password_hash FROM admins ORDER BY email").all();
  } finally {
    db.close();
  }
}

describe("parley admin", () => {
  test("create (password from PARLEY_ADMIN_PASSWORD or stdin), list, reset-password, remove", async () => {
    const dataDir = makeTempDir();
    const env = { PARLEY_DATA_DIR: dataDir };
    const first = await parley(["admin", "create", "Ops@Clinic.example"], { ...env, PARLEY_ADMIN_PASSWORD: "password from the environment" });
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("created administrator ops@clinic.example");
    const second = await parley(["admin", "create", "second@clinic.example"], env, "password from standard input\n");
    expect(second.code).toBe(0);

    const [ops, sec] = [storedAdmins(dataDir)[0]!, storedAdmins(dataDir)[1]!];
    expect(ops.password_hash).toStartWith("$argon2id$");
    expect(await Bun.password.verify("password from the environment", ops.password_hash)).toBe(true);
    expect(await Bun.password.verify("password from standard input", sec.password_hash)).toBe(true);

    const list = await parley(["admin", "list", "--json"], env);
    expect(JSON.parse(list.stdout).map((a: { email: string }) => a.email)).toEqual(["ops@clinic.example", "second@clinic.example"]);
    expect(list.stdout).not.toContain("argon2");

    const reset = await parley(["admin", "reset-password", "OPS@clinic.example"], env, "a replaced password\n");
    expect(reset.code).toBe(0);
    expect(await Bun.password.verify("a replaced password", storedAdmins(dataDir)[0]!.password_hash)).toBe(true);

    expect((await parley(["admin", "remove", "second@clinic.example"], env)).code).toBe(0);
    expect(storedAdmins(dataDir).map((a) => a.email)).toEqual(["ops@clinic.example"]);
    // The last one gone: the advice says how the CLI runs here, a checkout's `npm run parley --` (decision 121).
    const last = await parley(["admin", "remove", "ops@clinic.example"], env);
    expect(last.stdout).toContain("setup token: setup_");
    expect(last.stdout).toContain("(or run npm run parley -- admin create EMAIL)");
  });

  test("clear errors: short password, a second account of one email, unknown email, bad usage", async () => {
    const env = { PARLEY_DATA_DIR: makeTempDir() };
    const short = await parley(["admin", "create", "a@clinic.example"], env, "short\n");
    expect(short.code).toBe(1);
    expect(short.stderr).toContain("at least 12 characters");
    await parley(["admin", "create", "a@clinic.example"], env, "long enough password\n");
    const twice = await parley(["admin", "create", "A@clinic.example"], env, "long enough password\n");
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain("already exists");
    const unknown = await parley(["admin", "remove", "nobody@clinic.example"], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("No administrator nobody@clinic.example");
    expect((await parley(["admin", "create"], env)).code).toBe(2);
    expect((await parley(["admin", "frobnicate"], env)).code).toBe(2);
  });
});

describe("parley serve with no administrator", () => {
  test("logs a one-time setup token that opens setup from elsewhere, once", async () => {
    const dataDir = makeTempDir();
    const port = String(20000 + Math.floor(Math.random() * 20000));
    const proc = Bun.spawn([process.execPath, CLI], {
      env: { PATH: process.env.PATH ?? "", PARLEY_DATA_DIR: dataDir, PARLEY_MODELS_DIR: makeTempDir(), PARLEY_PORT: port },
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      const reader = proc.stderr.getReader();
      let log = "";
      while (!/"setup_token":"setup_\w+"/.test(log)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`serve stopped before logging a setup token:\n${log}`);
        log += new TextDecoder().decode(value);
      }
      const token = log.match(/"setup_token":"(setup_\w+)"/)![1]!;
      // Advice the operator can follow as written: in a checkout `parley` is no command of the shell (decision 121).
      expect(log).toContain("or run `npm run parley -- admin create EMAIL`");
      const setup = (body: Record<string, string>) =>
        fetch(`http://127.0.0.1:${port}/dashboard/api/setup`, {
          method: "POST",
          // As relayed by a proxy: not the box itself, so the token is what lets it in.
          headers: { "content-type": "application/json", "x-forwarded-for": "198.51.100.7" },
          body: JSON.stringify({ email: "remote@clinic.example", password: "set up from afar", ...body }),
        });
      expect((await setup({})).status).toBe(403);
      expect((await setup({ token })).status).toBe(201);
      expect((await setup({ token, email: "again@clinic.example" })).status).toBe(409);
      expect(storedAdmins(dataDir).map((a) => a.email)).toEqual(["remote@clinic.example"]);
    } finally {
      proc.kill("SIGTERM");
    }
    expect(await proc.exited).toBe(0);
  }, 30_000);
});
