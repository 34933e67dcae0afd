import { join } from "node:path";
import { systemClock, type Clock } from "./clock";
import type { Config } from "./config";
import { keepDataPrivate } from "./data-dir/private";
import { type Resolver, systemResolver } from "./dns";
import { openDatabase } from "./db/open";
import { migrate } from "./db/migrate";
import { Wal } from "./db/checkpointer";
import { GroupCommitter } from "./db/group-commit";
import { createEngines, type Engines } from "./engines";
import type { Deps } from "./deps";
import { EventBus } from "./events/outbox";
import { RateLimiter } from "./http/rate-limit";
import { JobQueue } from "./jobs/queue";
import { createLogger, type Logger } from "./log";
import { ensureDefaultOrganization } from "./modules/projects/store";
import { WebhookDispatcher } from "./modules/webhooks/dispatcher";
import { loadServerSecret } from "./server-secret";
import { createStorage } from "./storage";

export function databasePath(config: Config): string {
  return join(config.dataDir, "parley.db");
}

/** Opens and migrates the database and builds Deps, its state included (decision 085); shared by `serve` and the other CLI commands. */
export function buildDeps(config: Config, options: { clock?: Clock; log?: Logger; engines?: Engines; dns?: Resolver } = {}): Deps {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? createLogger(config.logLevel);
  keepDataPrivate(config.dataDir);
  const db = openDatabase(databasePath(config));
  migrate(db);
  ensureDefaultOrganization(db, clock.now());
  const dns = options.dns ?? systemResolver;
  const serverSecret = loadServerSecret(config.dataDir, config.secret);
  return {
    db,
    config,
    clock,
    dns,
    log,
    queue: new JobQueue(db, clock, log, config.jobConcurrency),
    rateLimiter: new RateLimiter(config.rateLimit, clock),
    engines: options.engines ?? createEngines(config, log),
    storage: createStorage(config),
    serverSecret,
    events: new EventBus(),
    groupCommit: new GroupCommitter(db),
    wal: new Wal(db),
    webhooks: new WebhookDispatcher({ db, config, clock, dns, log, serverSecret }),
  };
}
