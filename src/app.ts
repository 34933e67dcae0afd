import type { Server } from "bun";
import { Elysia } from "elysia";
import { diagnose } from "./cli/doctor";
import type { Deps } from "./deps";
import { accessLog } from "./http/access-log";
import { beforeRouting } from "./http/before-routing";
import { errorHandling } from "./http/errors";
import { jsonBody } from "./http/json-body";
import { requestMetrics } from "./http/metrics";
import { buildOpenApiDocument } from "./http/openapi";
import { adminRoutes } from "./modules/admins/routes";
import { configRoutes } from "./modules/config/routes";
import { dashboardRoutes } from "./modules/dashboard/routes";
import { portalRoutes } from "./modules/portal/routes";
import { commandsRoutes } from "./modules/commands/routes";
import { devicesRoutes } from "./modules/devices/routes";
import { firmwareRoutes, firmwareUploadRoutes } from "./modules/firmware/routes";
import { grantsRoutes } from "./modules/grants/routes";
import { healthRoutes } from "./modules/health/routes";
import { heartbeatsRoutes } from "./modules/heartbeats/routes";
import { breakGlassRoutes } from "./modules/break-glass/routes";
import { keysRoutes } from "./modules/keys/routes";
import { mcpRoutes } from "./modules/mcp/routes";
import { liveRoutes } from "./modules/live/routes";
import { reprocessRoutes } from "./modules/transcriptions/reprocess";
import { endUsersRoutes } from "./modules/end-users/routes";
import { summariesRoutes } from "./modules/summaries/routes";
import { transcriptionsRoutes } from "./modules/transcriptions/routes";
import { recordingsRoutes, uploadTargetRoutes } from "./modules/recordings/routes";
import { voicesRoutes } from "./modules/voices/routes";
import { askRoutes } from "./modules/ask/routes";
import { auditRoutes, organizationAuditRoutes } from "./modules/audit/routes";
import { disclosuresRoutes } from "./modules/disclosures/routes";
import { legalHoldsRoutes } from "./modules/legal-holds/routes";
import { exportsRoutes } from "./modules/exports/routes";
import { searchRoutes } from "./modules/search/routes";
import { ssoRoutes } from "./modules/sso/routes";
import { webhooksRoutes } from "./modules/webhooks/routes";
import { applianceVolumes } from "./storage";
import { spaceReport } from "./storage/volumes";

/** Every /v1 module. Building it has no side effects, so the OpenAPI document can build its own copy. */
export function apiRoutes(deps: Deps) {
  return new Elysia({ prefix: "/v1" })
    .use(endUsersRoutes(deps))
    .use(recordingsRoutes(deps))
    .use(devicesRoutes(deps))
    .use(heartbeatsRoutes(deps))
    .use(commandsRoutes(deps))
    .use(grantsRoutes(deps))
    .use(firmwareRoutes(deps))
    .use(configRoutes(deps))
    .use(transcriptionsRoutes(deps))
    .use(liveRoutes(deps))
    .use(summariesRoutes(deps))
    .use(searchRoutes(deps))
    .use(askRoutes(deps))
    .use(webhooksRoutes(deps))
    .use(voicesRoutes(deps))
    .use(auditRoutes(deps))
    .use(disclosuresRoutes(deps))
    .use(legalHoldsRoutes(deps))
    .use(exportsRoutes(deps));
}

/** Routes that take a raw body (audio, firmware images) and stream it: mounted before the JSON parser. */
export function rawBodyRoutes(deps: Deps) {
  return new Elysia().use(uploadTargetRoutes(deps)).use(firmwareUploadRoutes(deps));
}

/** Every route the OpenAPI document describes. */
export function documentedRoutes(deps: Deps) {
  return new Elysia().use(rawBodyRoutes(deps)).use(healthRoutes(deps)).use(apiRoutes(deps));
}

/** The whole HTTP surface: cross-cutting plugins first (their hooks only reach routes mounted after them), then modules. */
export function createApp(deps: Deps) {
  let openapi: ReturnType<typeof buildOpenApiDocument> | undefined;
  const app = new Elysia()
    .use(beforeRouting(deps, (): Server<unknown> | null => app.server))
    .use(errorHandling(deps.log))
    .use(accessLog(deps.log, deps.config.logLevel === "debug"))
    .use(requestMetrics(deps.metrics, deps.config.metrics))
    .use(rawBodyRoutes(deps))
    .use(jsonBody)
    // Free space is reported, not judged: a full disk is a reason to page the operator, not to restart the process.
    .get("/healthz", () => ({ ok: true, storage: spaceReport(applianceVolumes(deps.config), deps.config.minFreeBytes) }))
    .use(healthRoutes(deps))
    .use(adminRoutes(deps))
    .use(ssoRoutes(deps))
    .use(keysRoutes(deps))
    .use(breakGlassRoutes(deps))
    .use(organizationAuditRoutes(deps))
    .use(reprocessRoutes(deps))
    .use(dashboardRoutes(deps, (d, options) => diagnose(d.config, { engines: d.engines, verify: options?.verify })))
    .use(portalRoutes(deps))
    .get("/v1/openapi.json", () => (openapi ??= buildOpenApiDocument(documentedRoutes(deps))))
    .use(apiRoutes(deps))
    // Assistants: the same credentials, limits and access rule as /v1 (decision 166).
    .use(mcpRoutes(deps));
  return app;
}

export type App = ReturnType<typeof createApp>;
