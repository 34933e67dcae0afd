import { join } from "node:path";
import { systemClock, type Clock } from "./clock";
import type { Config } from "./config";
import { keepDataPrivate } from "./data-dir/private";
import { type Resolver, systemResolver } from "./dns";
import { openDatabase } from "./db/open";
import { migrate } from "./db/migrate";
import { Wal } from "./db/checkpointer";
import { GroupCommitter } from "./db/group-commit";
import { settledWithin } from "./deadline";
import { createEngines, type Engines, modelJobSlots } from "./engines";
import type { Deps } from "./deps";
import { Cascades } from "./events/cascades";
import { EventBus } from "./events/outbox";
import { CredentialCache } from "./http/credentials";
import { Metrics } from "./http/metrics";
import { RateLimiter } from "./http/rate-limit";
import { JobQueue } from "./jobs/queue";
import { createLogger, type Logger } from "./log";
import { AdminSessions } from "./modules/admins/sessions";
import { registerAskCascades } from "./modules/ask/service";
import { ChainedAuditTrail } from "./modules/audit/service";
import { registerCommandCascades } from "./modules/commands/service";
import { deviceSource, registerDeviceCascades } from "./modules/devices/service";
import { registerFirmwareCascades } from "./modules/firmware/ota";
import { registerSearchCascades } from "./modules/search/service";
import { registerVoiceCascades } from "./modules/voices/service";
import { GrantKeys } from "./modules/grants/signing";
import { registerLegalHoldCascades } from "./modules/legal-holds/service";
import { ensureDefaultOrganization } from "./modules/projects/service";
import { registerRecordingCascades } from "./modules/recordings/project-erasure";
import { registerPortalCascades } from "./modules/portal/cascades";
import { PortalSessions } from "./modules/portal/sessions";
import { UploadSlots } from "./modules/recordings/upload-body";
import { DocumentCounts } from "./modules/search/service";
import { WebhookDispatcher } from "./modules/webhooks/dispatcher";
import { loadServerSecret } from "./server-secret";
import { createStorage } from "./storage";
import { DataKeys } from "./storage/encryption/data-keys";
import { EncryptedStorage } from "./storage/encryption/encrypted-storage";
import { Scratch, scratchRoot } from "./storage/scratch";
import { loadMasterKey } from "./storage/encryption/master-key";

export function databasePath(config: Config): string {
  return join(config.dataDir, "parley.db");
}

/**
 * Opens and migrates the database and builds Deps, every piece of state included: nothing
 * is kept at module level, so two Deps in one process share nothing (decision 085). Shared
 * by `serve`, the other CLI commands and the tests; closeDeps undoes it.
 */
export function buildDeps(config: Config, options: { clock?: Clock; log?: Logger; engines?: Engines; dns?: Resolver } = {}): Deps {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? createLogger(config.logLevel);
  keepDataPrivate(config.dataDir);
  const db = openDatabase(databasePath(config));
  migrate(db);
  ensureDefaultOrganization(db, clock.now());
  const dns = options.dns ?? systemResolver;
  const serverSecret = loadServerSecret(config.dataDir, config.secret);
  const scratch = new Scratch(scratchRoot(config.dataDir));
  // What a process killed mid-file left (plaintext audio among it) goes before anything runs.
  scratch.sweepEnded();
  const groupCommit = new GroupCommitter(db);
  const dataKeys = new DataKeys(db, loadMasterKey(config.masterKeyFile, serverSecret));
  dataKeys.checkMaster();
  dataKeys.ensureForAllProjects(clock.now());
  const deps: Deps = {
    db,
    config,
    clock,
    dns,
    log,
    queue: new JobQueue(db, clock, log, modelJobSlots(config)),
    rateLimiter: new RateLimiter(config.rateLimit, clock),
    engines: options.engines ?? createEngines(config, log),
    scratch,
    storage: new EncryptedStorage(createStorage(config, scratch), dataKeys, clock, scratch),
    serverSecret,
    events: new EventBus(),
    groupCommit,
    wal: new Wal(db),
    webhooks: new WebhookDispatcher({ db, config, clock, dns, log, serverSecret }),
    credentials: new CredentialCache(db),
    searchCounts: new DocumentCounts(db),
    grantKeys: new GrantKeys(serverSecret),
    uploadSlots: new UploadSlots({ project: config.uploads.maxConcurrent, device: config.uploads.maxConcurrentPerDevice }),
    metrics: new Metrics(),
    cascades: new Cascades(),
    deviceSource,
    audit: new ChainedAuditTrail(db, groupCommit, clock),
    dashboardSessions: new AdminSessions({ db, clock, config, serverSecret }),
    portalSessions: new PortalSessions({ db, clock, config }),
  };
  registerCascades(deps);
  return deps;
}

/**
 * Each higher module registers what follows, in the causing transaction, a lower module's
 * change (decision 083). Here rather than in registerBackgroundWork: every Deps needs them,
 * a CLI command's and a test's too; test/boot.test.ts checks each cascade has its handler.
 */
function registerCascades(deps: Deps): void {
  registerAskCascades(deps);
  registerCommandCascades(deps);
  registerDeviceCascades(deps);
  registerFirmwareCascades(deps);
  registerLegalHoldCascades(deps);
  registerSearchCascades(deps);
  registerVoiceCascades(deps);
  registerRecordingCascades(deps);
  registerPortalCascades(deps);
}

/**
 * Stops the background work of a Deps, all at once so it takes graceMs at most: model jobs
 * are aborted and queued again for the next start (they would outlast any grace), webhook
 * attempts in flight are waited for, and those cut off are retried after the restart.
 */
export async function stopDeps(deps: Deps, graceMs: number): Promise<void> {
  const jobs = deps.queue.stop(graceMs);
  const webhooks = settledWithin(deps.webhooks.stop(), graceMs).then((done) => {
    if (!done) deps.log.warn("shutdown: webhook attempts still in flight were cut off; they are retried after the restart");
  });
  await Promise.all([jobs, webhooks]);
}

/** Disposes a Deps once nothing uses it any more (after stopDeps and the last request): listeners, caches, then the database. */
export function closeDeps(deps: Deps): void {
  deps.events.close();
  deps.credentials.close();
  deps.searchCounts.close();
  deps.grantKeys.close();
  deps.scratch.close();
  deps.db.close();
}
