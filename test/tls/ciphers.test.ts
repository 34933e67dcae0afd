// The suites the HTTPS listener offers: AEAD only (no CBC), in the server's order, for the
// self-signed EC certificate and an operator's RSA one alike; checked with openssl s_client
// against the real listener.
import { afterAll, expect, test } from "bun:test";
import { execFile } from "node:child_process";
import { Elysia } from "elysia";
import { listenWithCertificate, type Listener } from "../../src/http/listener";
import { createLogger } from "../../src/log";
import { ensureAutoCertificate } from "../../src/tls/auto-certificate";
import { readCertificateFiles } from "../../src/tls/certificate";
import { makeTempDir } from "../helpers";
import { makeTestCa } from "../support/https-receiver";

const options = { port: 0, hostname: "127.0.0.1", maxRequestBodySize: 1024, idleTimeout: 10, reusePort: false as const };
const listeners: Listener[] = [];
afterAll(() => Promise.all(listeners.map((l) => l.drain(1000))));

function listen(load: () => ReturnType<typeof readCertificateFiles>): number {
  const listener = listenWithCertificate(
    new Elysia().get("/", () => "ok"),
    options,
    { load, watchedFiles: [] },
    createLogger("silent"),
  );
  listeners.push(listener);
  return listener.server().port!;
}

/** The protocol and suite openssl negotiates offering only `args`' suites, or "refused" when the handshake fails. */
function negotiated(port: number, args: string[]): Promise<string> {
  return new Promise((resolve) => {
    const child = execFile("openssl", ["s_client", "-connect", `127.0.0.1:${port}`, ...args], { timeout: 20_000 }, (_err, stdout) => {
      const m = /New, (TLSv[\d.]+), Cipher is (\S+)/.exec(stdout);
      resolve(m && m[2] !== "(NONE)" ? `${m[1]} ${m[2]}` : "refused");
    });
    child.stdin!.end();
  });
}

const CBC_ONLY =
  "ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA:ECDHE-ECDSA-AES128-SHA256:ECDHE-ECDSA-AES256-SHA384:ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES256-SHA:ECDHE-RSA-AES128-SHA256:ECDHE-RSA-AES256-SHA384:AES128-SHA:AES256-SHA:AES128-SHA256:AES256-SHA256";

test("PARLEY_TLS=auto's EC certificate: a CBC-only client is refused; the server's order wins over the client's; TLS 1.3 is offered", async () => {
  const { pair } = ensureAutoCertificate(makeTempDir(), { dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"] }, new Date());
  const port = listen(() => pair);
  expect(await negotiated(port, ["-tls1_2", "-cipher", CBC_ONLY])).toBe("refused");
  // A client that would rather have ChaCha20 or AES-256 gets the server's first choice it shares.
  expect(await negotiated(port, ["-tls1_2", "-cipher", "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256"])).toBe(
    "TLSv1.2 ECDHE-ECDSA-AES128-GCM-SHA256",
  );
  expect(await negotiated(port, ["-tls1_2", "-cipher", "ECDHE-ECDSA-CHACHA20-POLY1305"])).toBe("TLSv1.2 ECDHE-ECDSA-CHACHA20-POLY1305");
  expect(await negotiated(port, ["-tls1_3"])).toMatch(/^TLSv1\.3 TLS_(AES_\d+_GCM_SHA\d+|CHACHA20_POLY1305_SHA256)$/);
  expect(await negotiated(port, ["-tls1_1"])).toBe("refused");
});

test("an operator's RSA certificate: CBC refused, ECDHE-RSA with AES-GCM in the server's order", async () => {
  const ca = makeTestCa();
  const port = listen(() => readCertificateFiles(ca.cert, ca.key));
  expect(await negotiated(port, ["-tls1_2", "-cipher", CBC_ONLY])).toBe("refused");
  expect(await negotiated(port, ["-tls1_2", "-cipher", "ECDHE-RSA-CHACHA20-POLY1305:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA256"])).toBe(
    "TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256",
  );
});
