// How the checkout installs (decision 125, issue #31 item 14): no project .npmrc key npm does
// not know, and onnxruntime-node's install script (CUDA libraries from api.nuget.org) denied
// by package.json's allowScripts, which an npm the checkout requires reads.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));

describe("npm in the checkout", () => {
  test("an npm command prints no 'Unknown project config' warning", async () => {
    const proc = Bun.spawn(["npm", "pkg", "get", "name"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect({ code, stdout: stdout.trim(), stderr }).toEqual({ code: 0, stdout: '"parley"', stderr: "" });
    expect(existsSync(join(ROOT, ".npmrc"))).toBe(false);
  });

  test("onnxruntime-node's install script is denied, and an npm older than one honouring that is warned, not refused", () => {
    expect(pkg.allowScripts["onnxruntime-node"]).toBe(false);
    expect(pkg.devEngines.packageManager).toEqual({ name: "npm", version: ">=11.19.1", onFail: "warn" });
    expect(pkg.engines.npm).toBe(pkg.devEngines.packageManager.version);
  });
});
