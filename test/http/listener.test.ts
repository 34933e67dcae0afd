// The listener behind `parley serve` (decision 104): under TLS the request URL is https (what
// Secure cookies and redirects key on), an unchanged certificate is not re-listened on, a bad
// one keeps the old, and a request on a server a reload retired still finishes at shutdown.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { Elysia } from "elysia";
import { listenWithCertificate } from "../../src/http/listener";
import { createLogger } from "../../src/log";
import { CertificateError, readCertificateFiles, type CertificatePair } from "../../src/tls/certificate";
import { makeTestCa } from "../support/https-receiver";

const options = { port: 0, hostname: "127.0.0.1", maxRequestBodySize: 1024, idleTimeout: 10, reusePort: false as const };

test("https request URLs; unchanged or bad certificates leave the server as it is; a retired server's request finishes in drain", async () => {
  const [a, b] = [makeTestCa(), makeTestCa()];
  const ca = [readFileSync(a.ca, "utf8"), readFileSync(b.ca, "utf8")];
  let serving: () => CertificatePair = () => readCertificateFiles(a.cert, a.key);
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const app = new Elysia().get("/url", ({ request }) => request.url).get("/held", async () => (await held, "finished"));
  const listener = listenWithCertificate(app, options, { load: () => serving(), watchedFiles: [] }, createLogger("silent"));
  expect(listener.url).toStartWith("https://127.0.0.1:");
  expect(await (await fetch(`${listener.url}/url`, { tls: { ca } })).text()).toBe(`${listener.url}/url`);

  const first = listener.server();
  listener.reload("test: unchanged");
  expect(listener.server()).toBe(first);
  serving = () => {
    throw new CertificateError("half written");
  };
  listener.reload("test: bad");
  expect(listener.server()).toBe(first);
  expect(listener.certificate()?.fingerprint256).toBe(readCertificateFiles(a.cert, a.key).fingerprint256);

  const port = first.port;
  const slow = fetch(`${listener.url}/held`, { tls: { ca } }).then((r) => r.text());
  while (first.pendingRequests === 0) await Bun.sleep(5); // the request is in, on the first server
  serving = () => readCertificateFiles(b.cert, b.key);
  listener.reload("test: new");
  expect(listener.server()).not.toBe(first);
  expect(listener.server().port).toBe(port);
  expect(listener.certificate()?.fingerprint256).toBe(readCertificateFiles(b.cert, b.key).fingerprint256);

  const drained = listener.drain(5000);
  release();
  expect(await slow).toBe("finished");
  await drained;
  expect(
    await fetch(`${listener.url}/url`, { tls: { ca } }).then(
      () => "answered",
      () => "refused",
    ),
  ).toBe("refused");
});
