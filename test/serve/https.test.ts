// HTTPS served by `parley serve` itself (decision 104), on real processes: the configured
// certificate is the one presented, a device uploads over it end to end, a new certificate is
// served after SIGHUP or a file change while an upload in flight finishes on the old one,
// PARLEY_TLS=auto makes its certificate once and `parley doctor` prints its fingerprint.
import { expect, test } from "bun:test";
import { readFileSync, mkdirSync, renameSync, readdirSync, statSync, symlinkSync, copyFileSync } from "node:fs";
import { X509Certificate } from "node:crypto";
import { connect } from "node:tls";
import { join } from "node:path";
import { makeTempDir, waitFor } from "../helpers";
import { fixture, sha256 } from "../modules/recordings-support";
import { makeTestCa, type TlsFiles } from "../support/https-receiver";
import { freePort, parley, spawnServer, type ServerProcess } from "../support/server-process";

/**
 * The SHA-256 fingerprint of the certificate a server presents on a new connection, or the
 * error's code: a reload leaves the port unbound for an instant (decision 104), in which a
 * connection is refused.
 */
function presentedFingerprint(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port, rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate().fingerprint256);
      socket.end();
    });
    socket.on("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

/** The server's https base, once it answers /healthz trusting only `ca` (CAs, or a self-signed certificate as a device pins it). */
async function startHttps(env: Record<string, string>, ca: () => string[]): Promise<ServerProcess & { https: string }> {
  const server = spawnServer(env);
  const https = server.base.replace("http:", "https:");
  await waitFor(
    `parley serve on ${https}`,
    async () => {
      if (server.proc.exitCode !== null) throw new Error(`parley serve exited ${server.proc.exitCode}: ${server.stderr()}`);
      // Before the server has made its certificate there is nothing to trust yet.
      const trusted = (() => {
        try {
          return ca();
        } catch {
          return null;
        }
      })();
      return (
        trusted !== null &&
        fetch(`${https}/healthz`, { tls: { ca: trusted } }).then(
          (r) => r.ok,
          () => false,
        )
      );
    },
    60_000,
  );
  return { ...server, https };
}

/** A project, a secret test key and a JSON client over HTTPS trusting `ca`. */
async function httpsApi(env: Record<string, string>, base: string, ca: string[]) {
  await parley(["projects", "create", "clinic"], env);
  const key = JSON.parse((await parley(["keys", "create", "--project", "clinic", "--mode", "test", "--json"], env)).stdout).key as string;
  return (method: string, path: string, body?: unknown) =>
    fetch(`${base}/v1${path}`, {
      method,
      tls: { ca },
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
}

const fingerprint = (files: TlsFiles) => new X509Certificate(readFileSync(files.cert)).fingerprint256;

/** A certificate folder laid out as certbot's: live/ holds links to the files in archive folders. */
function certbotLayout(first: TlsFiles) {
  const live = join(first.dir, "live");
  mkdirSync(live);
  symlinkSync(first.cert, join(live, "cert.pem"));
  symlinkSync(first.key, join(live, "key.pem"));
  return { cert: join(live, "cert.pem"), key: join(live, "key.pem"), live };
}

test("the operator's certificate: presented as configured, HSTS, a device upload over HTTPS; SIGHUP and a file change serve a new one without cutting the upload in flight", async () => {
  // Three certificates from three CAs: the first served at start, the second after SIGHUP, the third after a renewal.
  const [first, second, third] = [makeTestCa(), makeTestCa(), makeTestCa()] as const;
  const ca = [first, second, third].map((c) => readFileSync(c.ca, "utf8"));
  const tls = { ca };
  const files = certbotLayout(first);
  const dataDir = makeTempDir();
  const env = { PARLEY_DATA_DIR: dataDir, PARLEY_PORT: String(freePort()), PARLEY_TLS_CERT_FILE: files.cert, PARLEY_TLS_KEY_FILE: files.key };
  const server = await startHttps(env, () => ca);
  const port = Number(env.PARLEY_PORT);
  expect(await presentedFingerprint(port)).toBe(fingerprint(first));
  expect(server.stderr()).toContain(fingerprint(first));
  const health = await fetch(`${server.https}/healthz`, { tls });
  expect(health.headers.get("strict-transport-security")).toBe("max-age=31536000");

  // A device uploads: the pre-signed URL is on https, the PUT and the completion go over TLS.
  const api = await httpsApi(env, server.https, ca);
  const bytes = fixture("tone-3s.wav");
  const rec = await (await api("POST", "/recordings", {})).json();
  const url = (await (await api("POST", `/recordings/${rec.id}/upload-url`, {})).json()).upload_url as string;
  expect(url.startsWith(`https://127.0.0.1:${port}/`)).toBe(true);
  expect((await fetch(url, { method: "PUT", body: bytes, tls })).status).toBe(200);
  const completion = { sha256: sha256(bytes), file_size_bytes: bytes.length };
  await waitFor("the upload verified", async () => (await api("POST", `/recordings/${rec.id}/upload-complete`, completion)).status === 200);

  // A second upload starts, and stays in flight across the reload.
  const slow = await (await api("POST", "/recordings", {})).json();
  const slowUrl = (await (await api("POST", `/recordings/${slow.id}/upload-url`, {})).json()).upload_url as string;
  let sendRest!: () => void;
  // More than one 64 KiB sealed chunk first (decision 105): a chunk reaches the disk once bytes follow it.
  const firstPart = 70_000;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(bytes.subarray(0, firstPart));
      sendRest = () => {
        c.enqueue(bytes.subarray(firstPart));
        c.close();
      };
    },
  });
  const slowPut = fetch(slowUrl, { method: "PUT", body, duplex: "half", tls } as RequestInit);
  const tmp = join(dataDir, "audio", ".tmp");
  await waitFor("the slow upload's first bytes on disk", () =>
    readdirSync(tmp, { recursive: true, encoding: "utf8" }).some((f) => statSync(join(tmp, f)).size > 0),
  );

  // SIGHUP: the files behind the links change outside the watched folder, so only the signal tells.
  copyFileSync(second.key, first.key);
  copyFileSync(second.cert, first.cert);
  server.proc.kill("SIGHUP");
  await waitFor("the new certificate after SIGHUP", async () => (await presentedFingerprint(port)) === fingerprint(second));
  expect(server.stderr()).toContain('"reason":"SIGHUP"');

  // The upload begun before the reload completes on the connection it began on.
  sendRest();
  expect((await slowPut).status).toBe(200);
  // A keep-alive connection from before the reload is closed when the retired server's last
  // request ends; a request sent on it that instant is reset and retried, as after any restart.
  await waitFor(
    "the slow upload verified",
    async () => (await api("POST", `/recordings/${slow.id}/upload-complete`, completion).catch(() => null))?.status === 200,
  );

  // A key that does not fit the certificate (a renewal half done) is refused; the last good pair stays.
  copyFileSync(third.key, first.key);
  server.proc.kill("SIGHUP");
  await waitFor("the refused pair logged", () => server.stderr().includes("TLS certificate not reloaded"));
  expect(await presentedFingerprint(port)).toBe(fingerprint(second));

  // A renewal the certbot way: new links renamed over the old ones in live/, no signal.
  for (const [name, target] of [
    ["key.pem", third.key],
    ["cert.pem", third.cert],
  ] as const) {
    symlinkSync(target, join(files.live, `${name}.new`));
    renameSync(join(files.live, `${name}.new`), join(files.live, name));
  }
  await waitFor("the renewed certificate after the file change", async () => (await presentedFingerprint(port)) === fingerprint(third));
  expect(server.stderr()).toContain('"reason":"certificate file changed"');
  expect((await fetch(`${server.https}/healthz`, { tls: { ca: ca[2] } })).status).toBe(200);

  server.proc.kill("SIGTERM");
  expect(await server.proc.exited).toBe(0);
}, 120_000);

test("PARLEY_TLS=auto: a self-signed certificate made on first start, logged, printed by doctor, pinned by a device, and the same after a restart", async () => {
  const dataDir = makeTempDir();
  const env = { PARLEY_DATA_DIR: dataDir, PARLEY_MODELS_DIR: join(dataDir, "models"), PARLEY_PORT: String(freePort()), PARLEY_TLS: "auto" };
  const certFile = join(dataDir, "tls", "self-signed.crt");
  // A device pins the certificate itself: it trusts that one certificate and nothing else.
  const pinned = () => [readFileSync(certFile, "utf8")];
  const server = await startHttps(env, pinned);
  const made = new X509Certificate(readFileSync(certFile)).fingerprint256;
  expect(await presentedFingerprint(Number(env.PARLEY_PORT))).toBe(made);
  expect(server.stderr()).toContain("made a self-signed TLS key and certificate in the data dir");
  expect(server.stderr()).toContain(`"fingerprint_sha256":"${made}"`);

  const doctor = await parley(["doctor", "--json"], env);
  const pin = (JSON.parse(doctor.stdout) as { check: string; detail: string }[]).find((c) => c.check === "tls pin");
  expect(pin?.detail).toContain(`SHA-256 fingerprint ${made}`);

  server.proc.kill("SIGTERM");
  expect(await server.proc.exited).toBe(0);
  const again = await startHttps(env, pinned);
  expect(await presentedFingerprint(Number(env.PARLEY_PORT))).toBe(made);
  expect(again.stderr()).not.toContain("made a self-signed");
  again.proc.kill("SIGTERM");
  expect(await again.proc.exited).toBe(0);
}, 120_000);

test("plain HTTP on 0.0.0.0: the start log warns that the network sees everything unencrypted", async () => {
  const env = { PARLEY_DATA_DIR: makeTempDir(), PARLEY_PORT: String(freePort()), PARLEY_HOST: "0.0.0.0" };
  const server = spawnServer(env);
  await waitFor(
    "the warning",
    () => {
      if (server.proc.exitCode !== null) throw new Error(`parley serve exited: ${server.stderr()}`);
      return server.stderr().includes("listens beyond loopback on plain HTTP");
    },
    60_000,
  );
  server.proc.kill("SIGTERM");
  expect(await server.proc.exited).toBe(0);
}, 60_000);
