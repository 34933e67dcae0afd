import { createApp } from "./app";
import { buildDeps } from "./boot";
import type { Config } from "./config";
import { purgeExpiredIdempotencyKeys } from "./http/idempotency";
import { purgeFinishedJobs } from "./jobs/queue";
import { type PeriodicTask, startScheduler } from "./jobs/scheduler";

/** Boot: config -> db -> migrate -> engines -> jobs -> listen. Resolves once listening; stops cleanly on SIGINT/SIGTERM. */
export async function serve(config: Config): Promise<{ url: string; stop(): Promise<void> }> {
  const deps = buildDeps(config);
  const { db, clock, log, queue } = deps;

  const tasks: PeriodicTask[] = [
    { name: "purge-idempotency-keys", pattern: "0 */10 * * * *", run: () => void purgeExpiredIdempotencyKeys(db, clock.now()) },
    { name: "purge-finished-jobs", pattern: "0 7 * * * *", run: () => void purgeFinishedJobs(db, clock.now()) },
  ];

  queue.start();
  const scheduler = startScheduler(tasks, log);
  const app = createApp(deps).listen({ port: config.port, hostname: config.host, maxRequestBodySize: config.uploads.maxBytes + 1024 * 1024 });
  const url = `http://${config.host}:${app.server?.port}`;
  log.info("parley listening", { url, data_dir: config.dataDir, models_dir: config.modelsDir });

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      log.info("parley stopping");
      scheduler.stop();
      await app.stop();
      await queue.stop();
      db.close();
    })());
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void stop().then(() => process.exit(0)));
  return { url, stop };
}
