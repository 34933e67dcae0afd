// What an operator reads and types at the CLI (issue #31 item 13): keys named the way an
// operator holds them, create and list in one vocabulary, a missing password explained,
// and tables whose columns line up.
import { describe, expect, test } from "bun:test";
import { makeTempDir } from "../helpers";
import { parley } from "../support/server-process";

const env = () => ({ PARLEY_DATA_DIR: makeTempDir(), PARLEY_MODELS_DIR: makeTempDir(), PARLEY_LOG_LEVEL: "silent" });

/** The column each line's `cell` starts at; one number when the column is aligned. */
const startsOf = (lines: string[], cell: (line: string) => string) => new Set(lines.map((line) => line.indexOf(cell(line))));

describe("parley keys, as an operator holds them", () => {
  test("revoke takes the full leaked value or its hint, and never prints the value back", async () => {
    const e = env();
    await parley(["projects", "create", "clinic"], e);
    const create = async () => JSON.parse((await parley(["keys", "create", "--project", "clinic", "--mode", "test", "--json"], e)).stdout);
    const leaked = await create();
    const byValue = await parley(["keys", "revoke", leaked.key], e);
    expect(byValue.stderr).toBe("");
    expect(byValue.code).toBe(0);
    expect(byValue.stdout).toBe(`revoked ${leaked.id} (${leaked.hint})\n`);
    expect(byValue.stdout + byValue.stderr).not.toContain(leaked.key);
    // Revoked means refused: the same value again is no live key, still without echoing it.
    const again = await parley(["keys", "revoke", leaked.key], e);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("No live API key has the value given");
    expect(again.stdout + again.stderr).not.toContain(leaked.key);

    const hinted = await create();
    const byHint = await parley(["keys", "revoke", hinted.hint], e);
    expect(byHint.code).toBe(0);
    expect(byHint.stdout).toContain(`revoked ${hinted.id}`);
    const list = (await parley(["keys", "list", "--project", "clinic", "--json"], e)).stdout;
    expect(
      JSON.parse(list)
        .filter((k: { revoked_at: string | null }) => k.revoked_at)
        .map((k: { id: string }) => k.id)
        .sort(),
    ).toEqual([leaked.id, hinted.id].sort());
  });

  test("create and list say the same of a key with no scope restriction", async () => {
    const e = env();
    await parley(["projects", "create", "clinic"], e);
    const created = await parley(["keys", "create", "--project", "clinic", "--mode", "live"], e);
    expect(created.stdout).toMatch(/^scopes\s+all scopes$/m);
    expect((await parley(["keys", "list", "--project", "clinic"], e)).stdout).toContain("all scopes");
  });
});

describe("parley admin reset-password without a password", () => {
  test("empty stdin says how to give one, not that it is too short", async () => {
    const e = env();
    await parley(["admin", "create", "ops@clinic.example"], { ...e, PARLEY_ADMIN_PASSWORD: "a long enough password" });
    const reset = await parley(["admin", "reset-password", "ops@clinic.example"], e);
    expect(reset.code).toBe(2);
    expect(reset.stderr).toContain("No password given");
    expect(reset.stderr).toContain("PARLEY_ADMIN_PASSWORD");
    expect(reset.stderr).toContain("stdin");
  });
});

describe("CLI tables line up", () => {
  test("help: every command's description starts in one column", async () => {
    const help = await parley(["help"], env());
    expect(help.code).toBe(0);
    const rows = help.stdout.split("\n").filter((l) => /^(usage: |\s+)parley /.test(l));
    expect(rows.length).toBeGreaterThan(10);
    // The description is what follows the command's run of two or more spaces.
    expect(
      startsOf(
        rows,
        (l) =>
          l
            .replace(/^usage: /, "")
            .trim()
            .split(/\s{2,}/)[1]!,
      ).size,
    ).toBe(1);
  });

  test("models list: name, kind, status, role and description each start in one column", async () => {
    const e = env();
    const rows = JSON.parse((await parley(["models", "list", "--json"], e)).stdout) as { name: string; kind: string; status: string; description: string }[];
    const lines = (await parley(["models", "list"], e)).stdout.trimEnd().split("\n");
    expect(lines.length).toBe(rows.length);
    // Searched after the name, so a status word inside a name cannot match.
    for (const column of ["kind", "status", "description"] as const) {
      const starts = new Set(lines.map((l, i) => l.indexOf(rows[i]![column], rows[i]!.name.length)));
      expect({ column, starts: starts.size }).toEqual({ column, starts: 1 });
    }
  });
});
