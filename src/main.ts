import { createApp } from "./app";
import { buildDeps, databasePath } from "./boot";
import type { Config } from "./config";
import { registerBackgroundWork } from "./background";
import { checkpointInBackground } from "./db/checkpointer";
import { releaseAbandonedIdempotencyClaims } from "./http/idempotency";
import { startScheduler } from "./jobs/scheduler";
import { checkSearchIndex } from "./modules/search/indexer";
import { webhookDispatcher } from "./modules/webhooks/dispatcher";

/** Boot: config -> db -> migrate -> engines -> jobs -> listen. Resolves once listening; stops cleanly on SIGINT/SIGTERM. */
export async function serve(config: Config): Promise<{ url: string; stop(): Promise<void> }> {
  const deps = buildDeps(config);
  const { db, log, queue } = deps;
  const tasks = registerBackgroundWork(deps);
  releaseAbandonedIdempotencyClaims(db);

  const checkpointer = checkpointInBackground(db, databasePath(config), log);
  queue.start();
  // The embedder's dimension against the vector index, once at start (issue 6). Not awaited:
  // a mismatch queues a background re-index, and no failure here may stop the server booting.
  void checkSearchIndex(deps).catch((err) => log.error("search index check at start failed", { error: String((err as Error)?.stack ?? err) }));
  const scheduler = startScheduler(tasks, log);
  const app = createApp(deps).listen({
    port: config.port,
    hostname: config.host,
    maxRequestBodySize: config.uploads.maxBytes + 1024 * 1024,
    // Bun's longest idle timeout: a wearable uploading over a weak link may stall for a while.
    idleTimeout: 255,
  });
  const url = `http://${config.host}:${app.server?.port}`;
  log.info("parley listening", { url, data_dir: config.dataDir, models_dir: config.modelsDir });

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      log.info("parley stopping");
      scheduler.stop();
      await app.stop();
      await Promise.all([queue.stop(), webhookDispatcher(deps).stop()]);
      checkpointer.stop();
      db.close();
    })());
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void stop().then(() => process.exit(0)));
  return { url, stop };
}
