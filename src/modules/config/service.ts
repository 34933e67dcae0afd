import type { Database } from "bun:sqlite";
import type { Deps } from "../../deps";
import { notFound, ownerOfDevice, requireUnconfined, visible } from "../../http/access";
import type { Principal } from "../../http/auth";
import type { Tenant } from "../../tenancy";
import { ApiError } from "../../http/errors";
import { type Actor, actorOf, operatorActor, recordAudit } from "../audit/service";
import { findEndUser, loadEndUser } from "../end-users/service";
import { resolveSettings } from "./device-settings";
import type { ConfiguredDevice } from "./device-source";
import type { ConfigBody, ConfigLevel, ConfigLevelView, ConfigOverrides, ResolvedConfig } from "./schema";
import {
  deleteOrganizationOverrides,
  deleteOverrides,
  findOrganizationOverrides,
  findOverrides,
  organizationOf,
  type StoredOverrides,
  saveOrganizationOverrides,
  saveOverrides,
} from "./store";

/** What other modules (devices) use of the config store: through this service, never the store itself (decision 083). */
export { findOrganizationOverrides, findOverrides, organizationOf } from "./store";

/** What resolving a device's configuration needs: the connection, and the devices' rows through deviceSource. */
export type ConfigDeps = Pick<Deps, "db" | "deviceSource">;

const DEFAULTS = {
  auto_transcribe: true,
  auto_summarize: true,
  summary_template: "general",
  language: null,
  ask_provider: null,
  redact_webhook_payloads: false,
  allow_wearer_delete: false,
  min_speakers: null,
  max_speakers: null,
} as const;

/** A retention setting's effective value: "keep" and unset both keep forever (null). */
const days = (value: number | "keep" | undefined): number | null => (typeof value === "number" ? value : null);

/** Every level's vocabulary, the nearest level's terms first, each term once (its first spelling). */
function mergeVocabularies(levels: (ConfigOverrides | undefined)[]): string[] {
  const seen = new Set<string>();
  return levels
    .toReversed()
    .flatMap((level) => level?.vocabulary ?? [])
    .filter((term) => !seen.has(term.toLowerCase()) && seen.add(term.toLowerCase()));
}

/** Merges levels farthest first: the nearest level that sets a key wins; settings merge deeply; vocabularies add up. */
function mergeLevels(levels: (ConfigOverrides | undefined)[]): ResolvedConfig {
  const pick = <K extends Exclude<keyof ConfigOverrides, "settings">>(key: K) =>
    levels.reduce<ConfigOverrides[K] | undefined>((acc, level) => (level?.[key] !== undefined ? level[key] : acc), undefined);
  const language = pick("language");
  const maxSpeakers = pick("max_speakers") ?? DEFAULTS.max_speakers;
  const minSpeakers = pick("min_speakers") ?? DEFAULTS.min_speakers;
  return {
    auto_transcribe: pick("auto_transcribe") ?? DEFAULTS.auto_transcribe,
    auto_summarize: pick("auto_summarize") ?? DEFAULTS.auto_summarize,
    summary_template: pick("summary_template") ?? DEFAULTS.summary_template,
    language: language === undefined || language === "auto" ? DEFAULTS.language : language,
    ask_provider: pick("ask_provider") ?? DEFAULTS.ask_provider,
    redact_webhook_payloads: pick("redact_webhook_payloads") ?? DEFAULTS.redact_webhook_payloads,
    allow_wearer_delete: pick("allow_wearer_delete") ?? DEFAULTS.allow_wearer_delete,
    retention_audio_days: days(pick("retention_audio_days")),
    retention_transcript_days: days(pick("retention_transcript_days")),
    settings: resolveSettings(levels.map((l) => l?.settings)),
    // Levels set them apart (a project's min of 2, a device's max of 1): the max wins.
    min_speakers: minSpeakers !== null && maxSpeakers !== null ? Math.min(minSpeakers, maxSpeakers) : minSpeakers,
    max_speakers: maxSpeakers,
    vocabulary: mergeVocabularies(levels),
  };
}

/** A device's own level: its settings live on the devices row, the other keys in config_overrides. */
function deviceLevel(db: Database, tenant: Tenant, device: ConfiguredDevice): StoredOverrides | null {
  const stored = findOverrides(db, tenant, "device", device.id);
  const settings = device.settings;
  const hasSettings = Object.keys(settings).length > 0;
  if (!stored && !hasSettings) return null;
  return { overrides: { ...stored?.overrides, ...(hasSettings ? { settings } : {}) }, updated_at: stored?.updated_at ?? device.updated_at };
}

/**
 * Contract 2: the effective configuration for a project, optionally narrowed to an end
 * user and a device (device over end user over project over organization). Without an
 * endUserId, a device's own bound end user's level applies.
 */
export function resolveConfig(deps: ConfigDeps, tenant: Tenant, target: { endUserId?: string | null; deviceId?: string | null } = {}): ResolvedConfig {
  const device = target.deviceId ? deps.deviceSource.find(deps.db, tenant, target.deviceId) : null;
  return resolveLoadedConfig(deps.db, tenant, { endUserId: target.endUserId, device });
}

/** resolveConfig with the device already loaded, or none: for devices presenting its own rows, and callers with no device. */
export function resolveLoadedConfig(db: Database, tenant: Tenant, target: { endUserId?: string | null; device?: ConfiguredDevice | null }): ResolvedConfig {
  const device = target.device ?? null;
  const endUserId = target.endUserId === undefined ? device?.end_user_id : target.endUserId;
  return mergeLevels([
    findOrganizationOverrides(db, organizationOf(db, tenant))?.overrides,
    findOverrides(db, tenant, "project", tenant.projectId)?.overrides,
    endUserId ? findOverrides(db, tenant, "end_user", endUserId)?.overrides : undefined,
    device ? deviceLevel(db, tenant, device)?.overrides : undefined,
  ]);
}

/** A level and the thing it configures; `id` is ignored for organization and project. */
export type ConfigTarget = { level: ConfigLevel; id?: string };

type Located = { level: ConfigLevel; targetId: string; stored: StoredOverrides | null; effective: ResolvedConfig };

function locateOrganization(db: Database, organizationId: string): Located {
  const stored = findOrganizationOverrides(db, organizationId);
  return { level: "organization", targetId: organizationId, stored, effective: mergeLevels([stored?.overrides]) };
}

/** Loads a level: 404 for an unknown end user or device of the tenant. */
function locate(deps: ConfigDeps, tenant: Tenant, target: ConfigTarget): Located {
  const { db } = deps;
  if (target.level === "organization") return locateOrganization(db, organizationOf(db, tenant));
  if (target.level === "project") {
    const stored = findOverrides(db, tenant, "project", tenant.projectId);
    return { level: "project", targetId: tenant.projectId, stored, effective: resolveConfig(deps, tenant, { endUserId: null }) };
  }
  const id = target.id ?? "";
  if (target.level === "end_user") {
    if (!findEndUser(db, tenant, id)) throw new ApiError("not_found", notFound.endUser(id), { param: "id" });
    return { level: "end_user", targetId: id, stored: findOverrides(db, tenant, "end_user", id), effective: resolveConfig(deps, tenant, { endUserId: id }) };
  }
  const device = deps.deviceSource.find(db, tenant, id);
  if (!device) throw new ApiError("not_found", notFound.device(id), { param: "id" });
  return { level: "device", targetId: id, stored: deviceLevel(db, tenant, device), effective: resolveLoadedConfig(db, tenant, { device }) };
}

function view(located: Located): ConfigLevelView {
  const o = located.stored?.overrides ?? {};
  return {
    level: located.level,
    target_id: located.targetId,
    overrides: {
      auto_transcribe: o.auto_transcribe ?? null,
      auto_summarize: o.auto_summarize ?? null,
      summary_template: o.summary_template ?? null,
      language: o.language ?? null,
      ask_provider: o.ask_provider ?? null,
      redact_webhook_payloads: o.redact_webhook_payloads ?? null,
      allow_wearer_delete: o.allow_wearer_delete ?? null,
      retention_audio_days: o.retention_audio_days ?? null,
      retention_transcript_days: o.retention_transcript_days ?? null,
      settings: o.settings ?? {},
      min_speakers: o.min_speakers ?? null,
      max_speakers: o.max_speakers ?? null,
      vocabulary: o.vocabulary ?? null,
    },
    effective: located.effective,
    updated_at: located.stored?.updated_at ?? null,
  };
}

/** Keeps only the keys a body sets (null means "inherit", so it is dropped too). */
export function toOverrides(body: ConfigBody): ConfigOverrides {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) if (value !== null && value !== undefined) out[key] = value;
  return out as ConfigOverrides;
}

function save(deps: ConfigDeps, tenant: Tenant, located: Located, overrides: ConfigOverrides | null, now: string): void {
  const { db } = deps;
  if (located.level === "organization") throw new Error("the organization level is written with writeOrganizationConfig");
  if (located.level === "device") {
    const { settings, ...rest } = overrides ?? {};
    deps.deviceSource.saveSettings(db, tenant, located.targetId, settings ?? {}, now);
    if (overrides) saveOverrides(db, tenant, "device", located.targetId, rest, now);
    else deleteOverrides(db, tenant, "device", located.targetId);
    return;
  }
  if (overrides) saveOverrides(db, tenant, located.level, located.targetId, overrides, now);
  else deleteOverrides(db, tenant, located.level, located.targetId);
}

export function readConfigLevel(deps: ConfigDeps, tenant: Tenant, target: ConfigTarget): ConfigLevelView {
  return view(locate(deps, tenant, target));
}

/** Who changed a configuration, for the audit log: retention lives here (decision 103). */
const actorFrom = (who: Principal | Actor): Actor => ("credentialId" in who ? actorOf(who) : who);

/** Replaces a level's overrides with `overrides` (PUT), or removes them all (null: DELETE); audited as `who`. */
export function writeConfigLevel(
  deps: ConfigDeps,
  tenant: Tenant,
  target: ConfigTarget,
  overrides: ConfigOverrides | null,
  now: Date,
  who: Principal | Actor = operatorActor(),
): ConfigLevelView {
  const { db } = deps;
  return db.transaction(() => {
    const located = locate(deps, tenant, target);
    // A deleted end user is read-only (decisions.md), its configuration included.
    if (located.level === "end_user" && findEndUser(db, tenant, located.targetId)?.deleted_at) {
      throw new ApiError("resource_conflict", `End user ${located.targetId} is deleted and read-only.`);
    }
    save(deps, tenant, located, overrides, now.toISOString());
    recordAudit(db, actorFrom(who), tenant, "config.update", [located.targetId], now);
    return view(locate(deps, tenant, target));
  })();
}

/** The organization level, which has no project or mode (the CLI writes it; the API only reads it). */
export function readOrganizationConfig(db: Database, organizationId: string): ConfigLevelView {
  return view(locateOrganization(db, organizationId));
}

export function writeOrganizationConfig(
  db: Database,
  organizationId: string,
  overrides: ConfigOverrides | null,
  now: Date,
  who: Principal | Actor = operatorActor(),
): ConfigLevelView {
  return db.transaction(() => {
    if (overrides) saveOrganizationOverrides(db, organizationId, overrides, now.toISOString());
    else deleteOrganizationOverrides(db, organizationId);
    recordAudit(db, actorFrom(who), null, "config.update", [organizationId], now);
    return readOrganizationConfig(db, organizationId);
  })();
}

/**
 * What an API key may touch: an end-user-scoped key reaches only its own end user's
 * level and the devices bound to it, and reads (never writes) the shared levels above.
 */
export function authorizeConfigTarget(deps: ConfigDeps, principal: Principal, target: ConfigTarget, write: boolean): void {
  if (target.level === "organization" || target.level === "project") {
    if (write) requireUnconfined(principal, "change shared configuration");
    return;
  }
  // A hidden level gets the very 404 locate() gives an unknown one.
  const id = target.id ?? "";
  if (target.level === "end_user") loadEndUser(deps.db, principal, id);
  else visible(principal, deps.deviceSource.find(deps.db, principal, id), ownerOfDevice, notFound.device(id));
}
