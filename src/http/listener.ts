import type { Server } from "bun";
import { type FSWatcher, watch } from "node:fs";
import { dirname } from "node:path";
import type { Logger } from "../log";
import type { CertificatePair, CertificateSource } from "../tls/certificate";
import { serverCipherOptions } from "../tls/ciphers";
import { drainRequests } from "./drain";

/** How the server listens, the same on every (re-)listen but for the certificate. */
export type ListenOptions = { port: number; hostname: string; maxRequestBodySize: number; idleTimeout: number; reusePort: false };

/** The Elysia app, as far as listening goes: `listen` makes a Bun server and sets `server` to it. */
type Listenable = {
  listen(options: ListenOptions & { tls?: { cert: string; key: string; ciphers: string; secureOptions: number } }): unknown;
  server: Server<unknown> | null;
};

export type Listener = {
  /** The server taking new connections now. */
  server(): Server<unknown>;
  url: string;
  /** The certificate served now, null on plain HTTP. */
  certificate(): CertificatePair | null;
  /** Reads the certificate again; a changed one is served from the next connection on. A bad one is logged and the current one kept. */
  reload(reason: string): void;
  /** Stops taking connections, on this server and on those a reload retired, giving requests in flight up to `graceMs`. */
  drain(graceMs: number): Promise<void>;
};

/** How long file events are gathered before one reload: a renewal writes two files, often in several steps. */
const SETTLE_MS = 250;
/** A certificate re-read this often even without an event: PARLEY_TLS=auto renews this way, and an event missed on a network file system is caught. */
const RECHECK_MS = 6 * 3600 * 1000;

const tlsOf = (pair: CertificatePair | null) => (pair ? { tls: { cert: pair.cert, key: pair.key, ...serverCipherOptions } } : {});

/**
 * Listens with `app`, over HTTPS when there is a certificate source. Bun.serve's reload()
 * ignores `tls` (Bun 1.4, decision 104), so a new certificate is served by listening again:
 * the running server stops listening (its requests in flight finish on it, and its open
 * connections keep the old certificate) and a new one takes the same port at once. SIGHUP
 * is the caller's to route to `reload`; changes to the certificate files are watched here.
 */
export function listenWithCertificate(app: Listenable, options: ListenOptions, source: CertificateSource | null, log: Logger): Listener {
  let pair = source?.load() ?? null;
  app.listen({ ...options, ...tlsOf(pair) });
  let current = app.server!;
  const retired = new Set<Server<unknown>>();
  const url = `${pair ? "https" : "http"}://${options.hostname}:${current.port}`;

  const reload = (reason: string) => {
    if (!source || !pair) return log.info("nothing to reload: TLS is off", { reason });
    let next: CertificatePair;
    try {
      next = source.load();
    } catch (err) {
      return log.error("TLS certificate not reloaded; the previous one is still served", {
        reason,
        error: (err as Error).message,
        fingerprint_sha256: pair.fingerprint256,
      });
    }
    if (next.cert === pair.cert && next.key === pair.key) return log.debug("TLS certificate unchanged", { reason });
    const old = current;
    const port = old.port!; // a stopped server says 0
    void old.stop().finally(() => retired.delete(old));
    retired.add(old);
    try {
      app.listen({ ...options, port, ...tlsOf(next) });
    } catch (err) {
      // Something took the port in the instant it was free: take it back with the certificate that worked.
      log.error("TLS certificate not reloaded: listening again failed", { reason, error: (err as Error).message });
      app.listen({ ...options, port, ...tlsOf(pair) });
      current = app.server!;
      return;
    }
    current = app.server!;
    pair = next;
    log.info("TLS certificate reloaded", { reason, fingerprint_sha256: next.fingerprint256, valid_to: next.validTo.toISOString() });
  };

  const watchers: FSWatcher[] = [];
  let settle: ReturnType<typeof setTimeout> | undefined;
  let recheck: ReturnType<typeof setInterval> | undefined;
  if (source) {
    // The folders, not the files: certbot and Kubernetes replace a certificate by renaming or re-linking, which a watch on the old file never sees.
    for (const dir of new Set(source.watchedFiles.map((f) => dirname(f)))) {
      const watcher = watch(dir, () => {
        clearTimeout(settle);
        settle = setTimeout(() => reload("certificate file changed"), SETTLE_MS);
      });
      watcher.on("error", (err) => log.warn("watching the TLS certificate's folder failed; SIGHUP still reloads it", { dir, error: err.message }));
      watchers.push(watcher);
    }
    recheck = setInterval(() => reload("periodic check"), RECHECK_MS);
    recheck.unref();
  }

  return {
    server: () => current,
    url,
    certificate: () => pair,
    reload,
    async drain(graceMs) {
      for (const w of watchers) w.close();
      clearTimeout(settle);
      clearInterval(recheck);
      await Promise.all([current, ...retired].map((s) => drainRequests(s, graceMs, log)));
    },
  };
}
