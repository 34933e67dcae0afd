import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Glob } from "bun";
import { ASSETS } from "../../src/modules/dashboard/assets";
import { makeTestApp } from "../helpers";

const WEB = join(import.meta.dir, "..", "..", "web");

describe("the dashboard's embedded files", () => {
  test("every file under web/ is embedded (src/modules/dashboard/assets.ts), as it is on disk", () => {
    // web/me is the wearer's portal, embedded by its own list (test/modules/portal.test.ts checks it).
    const onDisk = [...new Glob("**/*").scanSync(WEB)]
      .map((f) => f.replaceAll("\\", "/"))
      .filter((f) => !f.startsWith("me/"))
      .sort();
    expect(Object.keys(ASSETS).sort()).toEqual(onDisk);
    for (const path of onDisk) expect(ASSETS[path]).toBe(readFileSync(join(WEB, path), "utf8"));
  });

  test("each is served under /dashboard with its type and the security headers; nothing else is", async () => {
    const t = await makeTestApp();
    for (const path of ["", "/app.js", "/pages/keys.js", "/app.css"]) {
      const res = await t.app.handle(new Request(`http://localhost/dashboard${path}`));
      expect(res.status).toBe(200);
      expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    }
    expect((await t.app.handle(new Request("http://localhost/dashboard/pages/keys.js"))).headers.get("content-type")).toContain("text/javascript");
    expect((await t.app.handle(new Request("http://localhost/dashboard/../package.json"))).status).toBe(404);
    expect((await t.app.handle(new Request("http://localhost/dashboard/pages/nope.js"))).status).toBe(404);
  });
});
