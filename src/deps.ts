import type { Database } from "bun:sqlite";
import type { Clock } from "./clock";
import type { Config } from "./config";
import type { Wal } from "./db/checkpointer";
import type { GroupCommitter } from "./db/group-commit";
import type { Resolver } from "./dns";
import type { Engines } from "./engines";
import type { Cascades } from "./events/cascades";
import type { EventBus } from "./events/outbox";
import type { CredentialCache } from "./http/credentials";
import type { Metrics } from "./http/metrics";
import type { RateLimiter } from "./http/rate-limit";
import type { JobQueue } from "./jobs/queue";
import type { Logger } from "./log";
import type { AuditTrail } from "./modules/audit/service";
import type { AdminSessions } from "./modules/admins/sessions";
import type { PortalSessions } from "./modules/portal/sessions";
import type { DeviceSource } from "./modules/config/device-source";
import type { GrantKeys } from "./modules/grants/signing";
import type { UploadSlots } from "./modules/recordings/upload-body";
import type { DocumentCounts } from "./modules/search/service";
import type { WebhookDispatcher } from "./modules/webhooks/dispatcher";
import type { Storage } from "./storage";
import type { Scratch } from "./storage/scratch";

/**
 * Everything a module may use, built once at boot (buildDeps in src/boot.ts, per test file in
 * test/helpers.ts) and disposed by closeDeps. Every piece of state lives here, none at module
 * level: two Deps in one process share nothing (decision 085).
 */
export type Deps = {
  db: Database;
  config: Config;
  clock: Clock;
  /** Host name lookups (webhook targets): the system resolver, a stand-in in tests. */
  dns: Resolver;
  log: Logger;
  queue: JobQueue;
  rateLimiter: RateLimiter;
  engines: Engines;
  /** This process's private working files under <dataDir>/tmp (decision 226). */
  scratch: Scratch;
  /** Audio bytes: local disk or S3 (src/storage). */
  storage: Storage;
  /** Key material for encrypting stored webhook secrets and signing device grants. */
  serverSecret: string;
  /** Wakes this Deps' listeners (its webhook dispatcher) when an event is committed; no one else's. */
  events: EventBus;
  /** The device rows configuration reads and writes, supplied by devices (config sits below it, decision 083). */
  deviceSource: DeviceSource;
  /** In-transaction cascades from a lower module into a higher one's rows, every one registered by buildDeps (decision 083). */
  cascades: Cascades;
  /** The hot paths' writes (heartbeats) and reads (device state) share a transaction per turn (decision 076). */
  groupCommit: GroupCommitter;
  /** Empties the WAL file after an erasure, through the checkpoint worker while one runs (decision 078). */
  wal: Wal;
  /** Fans events out to webhook endpoints and attempts their deliveries. */
  webhooks: WebhookDispatcher;
  /** Live credentials by token hash: the auth path of every request (decision 008). */
  credentials: CredentialCache;
  /** Keyword search's document counts. */
  searchCounts: DocumentCounts;
  /** The organizations' device-grant key pairs, derived from serverSecret (decision 021). */
  grantKeys: GrantKeys;
  /** Upload PUTs in progress, per project and per URL. */
  uploadSlots: UploadSlots;
  /** Request and transcription counters for GET /metrics (kept only with PARLEY_METRICS=1 for requests). */
  metrics: Metrics;
  /** The hash-chained access audit log (decision 102). */
  audit: AuditTrail;
  /** Administrators' dashboard sessions, sign-in throttle and setup token (decision 094). */
  dashboardSessions: AdminSessions;
  /** Wearers' portal sessions at /me, apart from administrators' (decision 147). */
  portalSessions: PortalSessions;
};
