import { expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { EVENT_TYPES } from "../../src/events/outbox";
import { ASSETS } from "../../src/modules/dashboard/assets";
// @ts-expect-error: a plain browser module without types
import { EVENTS } from "../../web/pages/webhooks/events.js";
import { makeTestApp } from "../helpers";

const WEB = join(import.meta.dir, "../../web");

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [relative(WEB, join(dir, e.name))]));
}

// A page missing from the asset list works from a checkout and breaks only in the executable.
test("every page, component and stylesheet is embedded and served at /dashboard/<path>", async () => {
  const files = [...filesUnder(join(WEB, "pages")), ...filesUnder(join(WEB, "components")), "pages.css"];
  expect(files.length).toBeGreaterThan(20);
  expect(files.filter((f) => ASSETS[f] === undefined)).toEqual([]);
  const t = await makeTestApp();
  for (const f of ["pages/device.js", "components/transcript-player.js", "pages.css"]) {
    const res = await t.app.handle(new Request(`http://localhost/dashboard/${f}`));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith(f.endsWith(".css") ? "text/css" : "text/javascript");
    expect(await res.text()).toBe(await Bun.file(join(WEB, f)).text());
  }
});

test("the webhooks page offers exactly the API's event types", () => {
  expect(EVENTS).toEqual([...EVENT_TYPES]);
});
