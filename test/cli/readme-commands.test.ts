// The README's CLI table says `parley help` lists every command: each command and action the
// table names appears in the help a newcomer reads, so neither drifts from the other.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir } from "../helpers";
import { parley } from "../support/server-process";

/** `[command, action]` for each `parley ...` the README's CLI table shows; action "" for none. */
function readmeCommands(): [string, string][] {
  const readme = readFileSync(join(import.meta.dir, "../../README.md"), "utf8");
  const table = readme.split("\n## CLI\n")[1]?.split("\n## ")[0] ?? "";
  const found: [string, string][] = [];
  for (const row of table.split("\n").filter((line) => line.startsWith("| `parley"))) {
    const firstCell = row.split(/(?<!\\)\|/)[1] ?? "";
    for (const [, span = ""] of firstCell.matchAll(/`parley ([^`]*)`/g)) {
      const [command = "", ...rest] = span.replaceAll("\\|", "|").split(/\s+/);
      // Actions come before the first flag; NAME, PATH and ids are placeholders.
      const flag = rest.findIndex((token) => token.startsWith("-") || token.startsWith("[-"));
      const actions = (flag < 0 ? rest : rest.slice(0, flag)).flatMap((token) => token.split(/[|[\]]/)).filter((word) => /^[a-z][a-z-]+$/.test(word));
      if (actions.length === 0) found.push([command, ""]);
      for (const action of actions) found.push([command, action]);
    }
  }
  return found;
}

describe("parley help", () => {
  test("names every command and action of the README's CLI table", async () => {
    const commands = readmeCommands();
    // The parse itself: the table's commands, actions of several forms among them.
    expect(commands).toContainEqual(["admin", "set-role"]);
    expect(commands).toContainEqual(["models", "verify"]);
    expect(commands).toContainEqual(["firmware", "publish"]);
    const help = await parley(["help"], { PARLEY_DATA_DIR: makeTempDir(), PARLEY_MODELS_DIR: makeTempDir(), PARLEY_LOG_LEVEL: "silent" });
    expect(help.code).toBe(0);
    const missing = commands.filter(([command, action]) => {
      // `parley [serve]`: the default command is shown in brackets.
      const lines = help.stdout.split("\n").filter((line) => line.trim().replace(/[[\]]/g, "").startsWith(`parley ${command}`));
      return lines.length === 0 || (action !== "" && !new RegExp(`(^|[^a-z-])${action}([^a-z-]|$)`).test(lines.join("\n")));
    });
    expect(missing).toEqual([]);
  }, 60_000);

  test("`parley COMMAND --help` shows that command's usage and runs nothing: `serve --help` starts no server", async () => {
    const env = { PARLEY_DATA_DIR: makeTempDir(), PARLEY_MODELS_DIR: makeTempDir(), PARLEY_LOG_LEVEL: "silent", PARLEY_PORT: "0" };
    // A server it started would never exit; the test's own timeout would then fail it.
    const serve = await parley(["serve", "--help"], env);
    expect(serve.code).toBe(0);
    expect(serve.stdout).toContain("parley [serve]");
    expect(serve.stdout).toContain("parley help");
    for (const args of [
      ["keys", "create", "--help"],
      ["admin", "-h"],
      ["backup", "--help"],
    ]) {
      const help = await parley(args, env);
      expect({ args, code: help.code, stderr: help.stderr }).toEqual({ args, code: 0, stderr: "" });
      expect(help.stdout).toContain(`parley ${args[0]} `);
    }
  }, 60_000);

  test("`parley serve` with an argument it does not take says so instead of starting", async () => {
    const env = { PARLEY_DATA_DIR: makeTempDir(), PARLEY_MODELS_DIR: makeTempDir(), PARLEY_LOG_LEVEL: "silent", PARLEY_PORT: "0" };
    const stray = await parley(["serve", "--port", "9000"], env);
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain("serve takes no arguments");
    expect(stray.stderr).toContain("PARLEY_PORT");
  }, 60_000);
});
