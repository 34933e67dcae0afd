import { constants } from "node:os";
import { createApp } from "./app";
import { buildDeps, closeDeps, databasePath, stopDeps } from "./boot";
import type { Config } from "./config";
import { registerBackgroundWork, startBackgroundWork } from "./background";
import { type DataDirLock, lockDataDir } from "./data-dir/lock";
import { keepDataPrivate } from "./data-dir/private";
import { checkpointInBackground } from "./db/checkpointer";
import type { Deps } from "./deps";
import type { Engines } from "./engines";
import { listenWithCertificate } from "./http/listener";
import type { Logger } from "./log";
import { releaseAbandonedIdempotencyClaims } from "./http/idempotency";
import { startScheduler } from "./jobs/scheduler";
import { checkSearchIndex } from "./modules/search/indexer";
import { maxUploadBytes } from "./modules/recordings/upload-rules";
import { runningCli } from "./runtime/cli-name";
import { StartupError } from "./startup-error";
import { CertificateError } from "./tls/certificate";
import { certificateSource, plainHttpWarning } from "./tls/certificate-source";

/** Listens on the configured port (over HTTPS when configured), or throws StartupError when something else has it or the certificate cannot be served. */
function listen(deps: Deps) {
  const { config } = deps;
  try {
    return listenWithCertificate(
      createApp(deps),
      {
        port: config.port,
        hostname: config.host,
        // The upload limit plus room for the request line and headers: upload-rules.ts refuses past the limit itself.
        maxRequestBodySize: maxUploadBytes(config) + 1024 * 1024,
        // Bun's longest idle timeout: a wearable uploading over a weak link may stall for a while.
        idleTimeout: 255,
        // Elysia turns SO_REUSEPORT on, and the kernel would then split requests between two
        // servers on one port, maybe on two databases: a port in use must stop this one instead.
        reusePort: false,
      },
      certificateSource(config, () => deps.clock.now(), deps.log),
      deps.log,
    );
  } catch (err) {
    if (err instanceof CertificateError) throw new StartupError(`TLS: ${err.message}`);
    if ((err as { code?: string }).code !== "EADDRINUSE") throw err;
    throw new StartupError(`port ${config.port} on ${config.host} is in use (another parley serve, or another program); stop it or set PARLEY_PORT.`);
  }
}

/**
 * SIGINT and SIGTERM start the stop, and a second one during it exits at once (decision 080).
 * The listeners stay for the process's life, never once(): signal-exit, which node-llama-cpp
 * loads (through proper-lockfile), re-sends a signal to the process when its own listeners are
 * the only ones left, and a once() listener is gone by then: after the LLM had loaded, the first
 * SIGTERM killed the server in the middle of its stop (exit 143, issue 31).
 */
function stopOnSignals(stop: () => Promise<void>, log: Logger): void {
  let signalled = false;
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      if (signalled) {
        log.warn("second signal during the stop: exiting at once", { signal });
        process.exit(128 + constants.signals[signal]);
      }
      signalled = true;
      void stop().then(() => process.exit(0));
    });
  }
}

/** Deps, job handlers and the listening app; a failure on the way leaves nothing open. */
function boot(config: Config, lock: DataDirLock, log?: Logger, engines?: Engines) {
  let deps: Deps | undefined;
  try {
    deps = buildDeps(config, { log, engines });
    const tasks = registerBackgroundWork(deps);
    startBackgroundWork(deps);
    releaseAbandonedIdempotencyClaims(deps.db);
    // Before any job starts: a server that cannot listen leaves the queue as it found it.
    return { deps, tasks, listener: listen(deps) };
  } catch (err) {
    if (deps) closeDeps(deps);
    lock.release();
    throw err;
  }
}

/**
 * Boot: data dir lock -> config -> db -> migrate -> engines -> listen -> jobs. Resolves once
 * listening; SIGINT/SIGTERM stop it within PARLEY_SHUTDOWN_GRACE_SECONDS (decision 080).
 * `log` replaces the JSON logger (`parley demo` writes plain lines).
 */
/** `engines` replaces the configured ones (a test server process runs whisper without its temperature fallback). */
export async function serve(config: Config, options: { log?: Logger; engines?: Engines } = {}): Promise<{ url: string; stop(): Promise<void> }> {
  keepDataPrivate(config.dataDir);
  const lock = lockDataDir(config.dataDir, new Date());
  const { deps, tasks, listener } = boot(config, lock, options.log, options.engines);
  const { log, queue } = deps;
  const checkpointer = checkpointInBackground(deps, databasePath(config), log);
  queue.start();
  // The embedder's dimension against the vector index, once at start (issue 6). Not awaited:
  // a mismatch queues a background re-index, and no failure here may stop the server booting.
  void checkSearchIndex(deps).catch((err) => log.error("search index check at start failed", { error: String((err as Error)?.stack ?? err) }));
  const scheduler = startScheduler(tasks, log);
  const url = listener.url;
  const cert = listener.certificate();
  const reloadCertificate = () => listener.reload("SIGHUP");

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      const graceMs = config.shutdownGraceSeconds * 1000;
      log.info("parley stopping", { grace_seconds: config.shutdownGraceSeconds });
      scheduler.stop();
      process.off("SIGHUP", reloadCertificate);
      // Requests, jobs and webhook attempts all at once, so the whole stop takes the grace period at most.
      await Promise.all([listener.drain(graceMs), stopDeps(deps, graceMs)]);
      checkpointer.stop();
      closeDeps(deps);
      lock.release();
      log.info("parley stopped");
    })());
  // Before anything says it is up (the lock file's URL, the log): whoever reads that and signals must get a clean stop.
  stopOnSignals(stop, log);
  if (cert) process.on("SIGHUP", reloadCertificate);
  lock.listening(url);

  const tls = cert
    ? { tls: config.tls?.mode, fingerprint_sha256: cert.fingerprint256, spki_sha256: cert.spkiSha256, valid_to: cert.validTo.toISOString() }
    : { tls: "off" };
  log.info("parley listening", { url, data_dir: config.dataDir, models_dir: config.modelsDir, ...tls });
  const exposed = plainHttpWarning(config);
  if (exposed) log.warn(exposed);
  // Only while no administrator exists, and good for one setup (decision 094).
  const setupToken = deps.dashboardSessions.setupTokenToPrint();
  if (setupToken)
    log.warn(
      `no dashboard administrator yet: open the dashboard on this machine, or from elsewhere with this one-time setup token, or run \`${runningCli()} admin create EMAIL\``,
      { dashboard: `${url}/dashboard`, setup_token: setupToken },
    );
  return { url, stop };
}
