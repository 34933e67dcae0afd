import { execFileSync } from "node:child_process";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo, connect, createServer, type Socket } from "node:net";
import { join } from "node:path";
import { makeTempDir } from "../helpers";

/**
 * A real HTTPS webhook receiver for tests and benches: a throwaway CA and a server
 * certificate for 127.0.0.1 made with openssl, and Bun.serve({tls}) on a free port.
 *
 * Bun reads NODE_EXTRA_CA_CERTS only when the process starts (setting it later, even
 * before the first fetch, is ignored), so code that must trust the CA runs in a child
 * process started with it: see `rerunTrustingCa`.
 */

/** Where the parent tells the child its certificates are (not PARLEY_*: test/preload.ts clears those). */
export const TLS_DIR_ENV = "WEBHOOK_TEST_TLS_DIR";

export type TlsFiles = { dir: string; ca: string; cert: string; key: string };

function openssl(args: string[], cwd: string): void {
  execFileSync("openssl", args, { cwd, stdio: "pipe" });
}

/** A CA and a server certificate for 127.0.0.1, localhost and receiver.test (a name only a stand-in DNS knows), signed by it. */
export function makeTestCa(dir = makeTempDir("parley-tls-"), name = "Parley Test CA"): TlsFiles {
  writeFileSync(join(dir, "ext.cnf"), "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:receiver.test\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n");
  openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", `/CN=${name}`], dir);
  openssl(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"], dir);
  openssl(
    ["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf"],
    dir,
  );
  return tlsFilesIn(dir);
}

export function tlsFilesIn(dir: string): TlsFiles {
  return { dir, ca: join(dir, "ca.pem"), cert: join(dir, "server.pem"), key: join(dir, "server.key") };
}

/** The certificates the parent made, when this process is the child that trusts them. */
export function trustedTlsFiles(): TlsFiles | null {
  const dir = process.env[TLS_DIR_ENV];
  return dir && existsSync(join(dir, "ca.pem")) && process.env.NODE_EXTRA_CA_CERTS === join(dir, "ca.pem") ? tlsFilesIn(dir) : null;
}

/** Runs `command` (a bun argv, e.g. ["test", file]) in a child that trusts a fresh test CA; resolves with its exit code and output. */
export async function rerunTrustingCa(args: string[]): Promise<{ code: number; output: string }> {
  const tls = makeTestCa();
  const child = Bun.spawn([process.execPath, ...args], {
    env: { ...process.env, NODE_EXTRA_CA_CERTS: tls.ca, [TLS_DIR_ENV]: tls.dir },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  rmSync(tls.dir, { recursive: true, force: true });
  return { code, output: out + err };
}

export type Received = { path: string; headers: Headers; body: string; receivedAt: number };
/** What the receiver answers: a status, after an optional delay in ms or once `until` settles. */
export type Behavior = (req: Received) => { status: number; delayMs?: number; until?: Promise<unknown>; body?: string };

export type Receiver = {
  url: string;
  received: Received[];
  behave(b: Behavior): void;
  stop(): void;
};

/** An HTTPS server on 127.0.0.1:0 that records every request (raw body kept for signature checks). */
export function startReceiver(tls: TlsFiles, behavior: Behavior = () => ({ status: 200 })): Receiver {
  let current = behavior;
  const received: Received[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: Bun.file(tls.cert), key: Bun.file(tls.key) },
    async fetch(req) {
      const r: Received = { path: new URL(req.url).pathname, headers: req.headers, body: await req.text(), receivedAt: Date.now() };
      received.push(r);
      const { status, delayMs, until, body } = current(r);
      if (delayMs) await Bun.sleep(delayMs);
      if (until) await until;
      return new Response(body ?? "ok", { status });
    },
  });
  return {
    url: `https://127.0.0.1:${server.port}/hooks`,
    received,
    behave: (b) => {
      current = b;
    },
    stop: () => void server.stop(true),
  };
}

export type Relay = { url: string; connections(): number; open(): void; stop(): void };

/**
 * A TCP relay in front of a receiver that holds every connection's bytes until `open()`:
 * an attempt stays on its way (connected, TLS not yet done, nothing received) for as
 * long as a test needs. A client that hangs up before then is never passed on.
 */
export async function startGatedRelay(targetUrl: string): Promise<Relay> {
  const target = new URL(targetUrl);
  const sockets = new Set<Socket>();
  const held: (() => void)[] = [];
  let opened = false;
  let connections = 0;
  const track = (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => s.destroy());
  };
  const server = createServer((client) => {
    connections++;
    track(client);
    const buffered: Buffer[] = [];
    const hold = (b: Buffer) => buffered.push(b);
    client.on("data", hold);
    const pass = () => {
      if (client.destroyed || client.readableEnded) return;
      const upstream = connect(Number(target.port), target.hostname, () => {
        client.off("data", hold);
        for (const b of buffered) upstream.write(b);
        client.pipe(upstream);
        upstream.pipe(client);
      });
      track(upstream);
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    };
    if (opened) pass();
    else held.push(pass);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${target.protocol}//127.0.0.1:${port}${target.pathname}`,
    connections: () => connections,
    open: () => {
      opened = true;
      for (const pass of held.splice(0)) pass();
    },
    stop: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}
