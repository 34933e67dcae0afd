import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { boundDevice } from "../modules/device-runtime-fixtures";
import { type Dashboard, hasChromium, onPage, startDashboard } from "./support";

const SAMPLE = new Uint8Array(readFileSync(join(import.meta.dir, "../../src/simulator/samples/team-standup.opus")));
const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

/**
 * Issue 29's attack, as filed: a device token stores an HTML page as a recording's audio,
 * and a signed-in administrator opens its download URL. The page tries what the filed page
 * did (read the CSRF token, create a live key), and first fetches a marker URL, so any script
 * that runs at all is seen.
 */
const ATTACK = `<!doctype html><title>From device</title><script>
fetch("/ran-marker");
(async () => {
  const s = await (await fetch("/dashboard/api/session")).json();
  await fetch("/dashboard/api/keys", { method: "POST", headers: { "content-type": "application/json", "x-csrf-token": s.csrf_token }, body: JSON.stringify({ kind: "secret", name: "planted" }) });
  fetch("/ran-marker-done");
})();
</script><p>Recording</p>`;

describe.skipIf(!hasChromium)("stored bytes in the administrator's browser (issue 29)", () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard();
    // The pipeline is not under test: a verified upload starts no transcription here.
    d.deps.queue.register("transcriptions.auto", () => {});
  });
  afterAll(() => d?.stop());

  /** What a device does: create, upload-url, PUT, upload-complete (verification included). */
  async function deviceUpload(token: string, body: Record<string, unknown>, contentType: string, bytes: Uint8Array<ArrayBuffer>) {
    const rec = await d.call("POST", "/v1/recordings", { key: token, body });
    expect(rec.status).toBe(201);
    const target = await d.call("POST", `/v1/recordings/${rec.body.id}/upload-url`, { key: token, body: { content_type: contentType } });
    expect(target.status).toBe(200);
    const put = await fetch(`${d.base}${new URL(target.body.upload_url).pathname}`, { method: "PUT", headers: target.body.headers, body: bytes });
    expect(put.status).toBe(200);
    const completion = { sha256: sha256(bytes), file_size_bytes: bytes.length };
    await d.call("POST", `/v1/recordings/${rec.body.id}/upload-complete`, { key: token, body: completion });
    await d.deps.queue.drain();
    expect((await d.call("POST", `/v1/recordings/${rec.body.id}/upload-complete`, { key: token, body: completion })).status).toBe(200);
    return rec.body.id as string;
  }

  const keyCount = () => d.deps.db.query<{ n: number }, []>("SELECT count(*) AS n FROM credentials WHERE kind IN ('secret', 'restricted')").get()!.n;

  test("a page a device planted, opened by a signed-in administrator, is a download: no script runs and no key is made", async () => {
    const device = await boundDevice(d, d.tenant!.test);
    // As filed: a text/html mime_type is refused at creation now.
    const asFiled = await d.call("POST", "/v1/recordings", { key: device.token, body: { name: "From device", mime_type: "text/html" } });
    expect([asFiled.status, asFiled.body.error.param]).toEqual([422, "mime_type"]);
    // The PUT's own Content-Type is the other way a type reached the recording.
    const id = await deviceUpload(device.token, { name: "From device" }, "text/html", new TextEncoder().encode(ATTACK));
    const keysBefore = keyCount();

    await onPage(await d.newSignedInPage(), "stored-xss", async (page) => {
      const ran: string[] = [];
      page.on("request", (r) => {
        if (r.url().includes("/ran-marker")) ran.push(r.url());
      });
      // Open the Download link's URL as a tab would: the browser saves it instead of showing it.
      const download = page.waitForEvent("download");
      await page.goto(`${d.base}/v1/recordings/${id}/audio`).catch(() => {}); // "Download is starting" ends the navigation
      const saved = await download;
      expect(saved.suggestedFilename()).toBe(id);
      expect(new TextDecoder().decode(readFileSync((await saved.path())!))).toBe(ATTACK);
      // The same URL fetched by the page itself (what a sniffing browser would render) is inert.
      const seen = await page.evaluate(async (url) => {
        const r = await fetch(url);
        return {
          type: r.headers.get("content-type"),
          nosniff: r.headers.get("x-content-type-options"),
          csp: r.headers.get("content-security-policy"),
          disposition: r.headers.get("content-disposition"),
        };
      }, `/v1/recordings/${id}/audio`);
      expect(seen).toEqual({
        type: "application/octet-stream",
        nosniff: "nosniff",
        csp: "sandbox",
        disposition: `attachment; filename="${id}"; filename*=UTF-8''${id}`,
      });
      expect(ran).toEqual([]);
    });
    expect(keyCount()).toBe(keysBefore);
  }, 60_000);

  test("the recording page's player still loads and seeks real audio sent as an attachment", async () => {
    const device = await boundDevice(d, d.tenant!.test);
    const id = await deviceUpload(device.token, { name: "Standup", mime_type: "audio/ogg; codecs=opus" }, "audio/ogg", SAMPLE);
    expect((await d.call("GET", `/v1/recordings/${id}`, { key: d.tenant!.test })).body.format).toBe("ogg");
    await onPage(await d.newSignedInPage(), "attachment-audio-plays", async (page) => {
      await page.goto(`${d.base}/dashboard#/recordings/${id}`);
      await page.waitForFunction(() => {
        const audio = document.querySelector("audio");
        return audio !== null && audio.readyState >= 1 && audio.duration > 1;
      });
      const seeked = await page.evaluate(
        () =>
          new Promise<number>((done) => {
            const audio = document.querySelector("audio")!;
            audio.addEventListener("seeked", () => done(audio.currentTime), { once: true });
            audio.currentTime = 1;
          }),
      );
      expect(seeked).toBeCloseTo(1, 1);
    });
  }, 60_000);
});
