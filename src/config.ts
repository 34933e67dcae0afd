import { existsSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

const flag = z.enum(["0", "1", "true", "false", ""]).transform((v) => v === "1" || v === "true");

/** A whole number from the environment. Unlike z.coerce, an empty value is an error, not 0. */
const whole = (min: number, max = Number.MAX_SAFE_INTEGER) => z.string().regex(/^\d+$/, "a whole number").transform(Number).pipe(z.number().min(min).max(max));

/** A decimal number from the environment; empty is an error. */
const decimal = (min: number) =>
  z
    .string()
    .regex(/^\d+(\.\d+)?$/, "a number")
    .transform(Number)
    .pipe(z.number().min(min));

/** The roles of src/http/roles.ts, named again because this file imports nothing of ours; a test holds the two lists together. */
const ROLE_NAMES = ["owner", "admin", "compliance", "viewer"] as const;

const seconds = z
  .string()
  .regex(/^\d+(,\d+)*$/, "comma-separated whole seconds")
  .transform((s) => s.split(",").map(Number));

/**
 * The LLM when PARLEY_LLM_MODEL is unset (decision 235): Qwen2.5-1.5B's Q4_0 file, the faster on a
 * CPU. A box upgraded from the earlier default, the Q4_K_M file, with only that one installed keeps
 * it until the Q4_0 one is pulled, rather than losing its summaries. The files' paths are those of
 * models/manifest.json (this file reads nothing of ours; a test holds the two together).
 */
export const DEFAULT_LLM = { name: "qwen2.5-1.5b-instruct-q4_0", file: "qwen2.5-1.5b-instruct-q4_0/qwen2.5-1.5b-instruct-q4_0.gguf" };
export const EARLIER_DEFAULT_LLM = { name: "qwen2.5-1.5b-instruct-q4", file: "qwen2.5-1.5b-instruct-q4/qwen2.5-1.5b-instruct-q4_k_m.gguf" };
const defaultLlm = (modelsDir: string) =>
  !existsSync(join(modelsDir, DEFAULT_LLM.file)) && existsSync(join(modelsDir, EARLIER_DEFAULT_LLM.file)) ? EARLIER_DEFAULT_LLM.name : DEFAULT_LLM.name;

/** PARLEY_* variables and their embedded defaults (README "Configuration" documents each). */
const envSchema = z
  .object({
    PARLEY_PORT: whole(0, 65535).default(8080),
    PARLEY_HOST: z.string().min(1).default("127.0.0.1"),
    PARLEY_DATA_DIR: z.string().min(1).default("./data"),
    PARLEY_MODELS_DIR: z.string().min(1).default("./models"),
    PARLEY_PUBLIC_URL: z.url().optional(),
    PARLEY_ALLOWED_HOSTS: z
      .string()
      .default("")
      .transform((s) =>
        s
          .split(",")
          .map((h) => h.trim().toLowerCase().replace(/\.$/, ""))
          .filter(Boolean),
      )
      .pipe(z.array(z.string().regex(/^(\*|[a-z0-9_.-]+)$/, "comma-separated host names without ports, or *"))),
    PARLEY_LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
    PARLEY_RATE_LIMIT_PER_SECOND: whole(0).default(100),
    PARLEY_RATE_LIMIT_PER_MINUTE: whole(0).default(1000),
    PARLEY_WEBHOOK_RETRY_DELAYS: seconds.default([60, 300, 1800, 7200, 28800]),
    PARLEY_WEBHOOK_DENY_PRIVATE: flag.default(false),
    PARLEY_WEBHOOK_TIMEOUT_MS: whole(1).default(30_000),
    PARLEY_WEBHOOK_ALLOW_HOSTS: z
      .string()
      .default("")
      .transform((s) =>
        s
          .split(",")
          .map((h) => h.trim().toLowerCase())
          .filter(Boolean),
      ),
    PARLEY_MIN_FREE_MB: whole(0).default(512),
    PARLEY_SHUTDOWN_GRACE_SECONDS: whole(0, 3600).default(10),
    PARLEY_MAX_UPLOAD_BYTES: whole(1).default(2 * 1024 ** 3),
    PARLEY_MAX_CONCURRENT_UPLOADS: whole(1).default(10),
    PARLEY_MAX_CONCURRENT_UPLOADS_PER_DEVICE: whole(1).default(3),
    PARLEY_UPLOAD_MIN_BYTES_PER_SECOND: whole(0).default(1024),
    PARLEY_UPLOAD_RATE_WINDOW_SECONDS: decimal(0.001).default(30),
    PARLEY_UPLOAD_TOKEN_TTL_SECONDS: whole(1).default(900),
    PARLEY_S3_BUCKET: z.string().optional(),
    PARLEY_S3_ENDPOINT: z.string().optional(),
    PARLEY_S3_REGION: z.string().optional(),
    PARLEY_S3_ACCESS_KEY_ID: z.string().optional(),
    PARLEY_S3_SECRET_ACCESS_KEY: z.string().optional(),
    PARLEY_FFMPEG_PATH: z.string().optional(),
    PARLEY_GPU: z.enum(["auto", "off", "cuda", "vulkan"]).default("auto"),
    PARLEY_MODEL_MIRROR: z.url().default("https://huggingface.co"),
    PARLEY_WHISPER_MODEL: z.string().default("whisper-base.en"),
    PARLEY_PARAKEET_FALLBACK_MODEL: z.string().default("whisper-base"),
    PARLEY_LLM_MODEL: z.string().optional(),
    PARLEY_EMBEDDING_MODEL: z.string().default("all-minilm-l6-v2"),
    PARLEY_SEGMENTATION_MODEL: z.string().default("pyannote-segmentation-3.0"),
    PARLEY_SPEAKER_EMBEDDING_MODEL: z.string().default("wespeaker-resnet34"),
    PARLEY_ASK_PROVIDER: z.enum(["llama_cpp", "openai_compatible", "extractive"]).default("llama_cpp"),
    PARLEY_OPENAI_BASE_URL: z.url().optional(),
    PARLEY_OPENAI_API_KEY: z.string().optional(),
    PARLEY_OPENAI_MODEL: z.string().optional(),
    PARLEY_OPENAI_CONTEXT_TOKENS: whole(512).default(8192),
    PARLEY_OPENAI_TIMEOUT_MS: whole(1).default(120_000),
    PARLEY_LLM: z.enum(["local", "openai_compatible"]).default("local"),
    PARLEY_TRANSCRIBER: z.enum(["local", "openai_compatible"]).default("local"),
    PARLEY_TRANSCRIBER_BASE_URL: z.url().optional(),
    PARLEY_TRANSCRIBER_API_KEY: z.string().optional(),
    PARLEY_TRANSCRIBER_MODEL: z.string().min(1).default("whisper-1"),
    PARLEY_TRANSCRIBER_TIMEOUT_MS: whole(1).default(600_000),
    PARLEY_TRANSCRIBER_TEMPERATURE_INC: decimal(0).optional(),
    PARLEY_EMBEDDER: z.enum(["local", "openai_compatible"]).default("local"),
    PARLEY_EMBEDDER_BASE_URL: z.url().optional(),
    PARLEY_EMBEDDER_API_KEY: z.string().optional(),
    PARLEY_EMBEDDER_MODEL: z.string().min(1).optional(),
    PARLEY_EMBEDDER_TIMEOUT_MS: whole(1).default(60_000),
    PARLEY_REMOTE_CONCURRENCY: whole(1, 256).default(4),
    PARLEY_REMOTE_RETRY_DELAYS_MS: z
      .string()
      .regex(/^\d+(,\d+)*$/, "comma-separated whole milliseconds")
      .transform((s) => s.split(",").map(Number))
      .default([1000, 5000, 15_000, 30_000, 60_000, 120_000, 300_000]),
    PARLEY_JOB_CONCURRENCY: whole(1).default(2),
    PARLEY_PROCESSING_MIN_SECONDS: decimal(0.001).default(120),
    PARLEY_PROCESSING_TIME_FACTOR: decimal(0).default(3),
    PARLEY_SECRET: z.string().min(32).optional(),
    PARLEY_METRICS: flag.default(false),
    PARLEY_TLS: z.enum(["off", "auto"]).optional(),
    PARLEY_MASTER_KEY_FILE: z.string().min(1).optional(),
    PARLEY_EXPORT_RETENTION_DAYS: whole(0).default(7),
    PARLEY_TLS_CERT_FILE: z.string().min(1).optional(),
    PARLEY_TLS_KEY_FILE: z.string().min(1).optional(),
    PARLEY_SESSION_IDLE_MINUTES: whole(1).default(30),
    PARLEY_SESSION_MAX_HOURS: whole(1).default(12),
    PARLEY_BREAK_GLASS_MINUTES: whole(1, 1440).default(30),
    PARLEY_INVITE_HOURS: whole(1).default(72),
    PARLEY_LOGIN_MAX_FAILURES: whole(1).default(5),
    PARLEY_LOGIN_LOCKOUT_MINUTES: whole(1).default(15),
    PARLEY_REQUIRE_MFA: flag.default(false),
    PARLEY_REDACTION_LLM: z.enum(["auto", "off", "openai_compatible"]).default("auto"),
    PARLEY_OIDC_ISSUER: z.url().optional(),
    PARLEY_OIDC_CLIENT_ID: z.string().min(1).optional(),
    PARLEY_OIDC_CLIENT_SECRET: z.string().min(1).optional(),
    PARLEY_OIDC_ROLE_CLAIM: z.string().min(1).default("groups"),
    PARLEY_OIDC_ROLE_MAP: z
      .string()
      .default("")
      .transform((s) =>
        s
          .split(",")
          .map((pair) => pair.trim())
          .filter(Boolean)
          .map((pair) => {
            // Split at the last "=": a role never holds one, a group name (cn=parley-admins) may.
            const at = pair.lastIndexOf("=");
            return at < 0 ? (["", pair] as const) : ([pair.slice(0, at).trim(), pair.slice(at + 1).trim()] as const);
          }),
      )
      .pipe(z.array(z.tuple([z.string().min(1, "GROUP=ROLE pairs, comma-separated"), z.enum(ROLE_NAMES, "roles are owner, admin, compliance or viewer")]))),
  })
  .superRefine((e, ctx) => {
    // A remote engine needs its server (decision 188); the LLM's is Ask's PARLEY_OPENAI_* server, one base URL per engine.
    if (e.PARLEY_TRANSCRIBER === "openai_compatible" && !e.PARLEY_TRANSCRIBER_BASE_URL)
      ctx.addIssue({ code: "custom", path: ["PARLEY_TRANSCRIBER_BASE_URL"], message: "required with PARLEY_TRANSCRIBER=openai_compatible" });
    for (const name of ["PARLEY_EMBEDDER_BASE_URL", "PARLEY_EMBEDDER_MODEL"] as const)
      if (e.PARLEY_EMBEDDER === "openai_compatible" && !e[name])
        ctx.addIssue({ code: "custom", path: [name], message: "required with PARLEY_EMBEDDER=openai_compatible" });
    for (const [name, value] of [
      ["PARLEY_LLM", e.PARLEY_LLM],
      ["PARLEY_REDACTION_LLM", e.PARLEY_REDACTION_LLM],
    ] as const) {
      if (value !== "openai_compatible") continue;
      for (const needed of ["PARLEY_OPENAI_BASE_URL", "PARLEY_OPENAI_MODEL"] as const)
        if (!e[needed]) ctx.addIssue({ code: "custom", path: [needed], message: `required with ${name}=openai_compatible` });
    }
    // HTTPS from the operator's files, or from a certificate made here (decision 104): one or the other, and both files or neither.
    const files = e.PARLEY_TLS_CERT_FILE !== undefined || e.PARLEY_TLS_KEY_FILE !== undefined;
    if (files && e.PARLEY_TLS !== undefined)
      ctx.addIssue({ code: "custom", path: ["PARLEY_TLS"], message: "set either PARLEY_TLS or PARLEY_TLS_CERT_FILE with PARLEY_TLS_KEY_FILE, not both" });
    for (const [name, other] of [
      ["PARLEY_TLS_CERT_FILE", "PARLEY_TLS_KEY_FILE"],
      ["PARLEY_TLS_KEY_FILE", "PARLEY_TLS_CERT_FILE"],
    ] as const) {
      if (e[name] === undefined && e[other] !== undefined) ctx.addIssue({ code: "custom", path: [name], message: `required with ${other}` });
    }
    // Single sign-on needs its provider, its client, and at least one group that gives a role.
    if (e.PARLEY_OIDC_ISSUER !== undefined) {
      if (e.PARLEY_OIDC_CLIENT_ID === undefined) ctx.addIssue({ code: "custom", path: ["PARLEY_OIDC_CLIENT_ID"], message: "required with PARLEY_OIDC_ISSUER" });
      if (!e.PARLEY_OIDC_ROLE_MAP.length)
        ctx.addIssue({ code: "custom", path: ["PARLEY_OIDC_ROLE_MAP"], message: "required with PARLEY_OIDC_ISSUER, e.g. parley-admins=admin" });
    } else if (e.PARLEY_OIDC_CLIENT_ID !== undefined || e.PARLEY_OIDC_CLIENT_SECRET !== undefined) {
      ctx.addIssue({ code: "custom", path: ["PARLEY_OIDC_ISSUER"], message: "required with PARLEY_OIDC_CLIENT_ID and PARLEY_OIDC_CLIENT_SECRET" });
    }
  });

export type Config = Readonly<{
  port: number;
  host: string;
  dataDir: string;
  modelsDir: string;
  publicUrl: string;
  /** Host names requests may name besides loopback, IP addresses, the public URL's host and `host` (decision 114); `*` accepts any. */
  allowedHosts: readonly string[];
  logLevel: "debug" | "info" | "warn" | "error" | "silent";
  rateLimit: { perSecond: number; perMinute: number };
  /** allowHosts: host names or addresses exempt from every webhook target refusal, loopback/link-local/metadata and (with denyPrivate) LAN (decision 074). */
  webhooks: { retryDelaysSeconds: number[]; denyPrivate: boolean; allowHosts: readonly string[]; timeoutMs: number };
  /** maxConcurrent PUTs per project, maxConcurrentPerDevice per device; a PUT whose body brings under minBytesPerSecond over a rateWindowMs window is dropped (0: never). */
  uploads: {
    maxBytes: number;
    maxConcurrent: number;
    maxConcurrentPerDevice: number;
    tokenTtlSeconds: number;
    minBytesPerSecond: number;
    rateWindowMs: number;
  };
  s3: { bucket: string; endpoint?: string; region?: string; accessKeyId?: string; secretAccessKey?: string } | null;
  ffmpegPath?: string;
  gpu: "auto" | "off" | "cuda" | "vulkan";
  /**
   * whisper: the transcription model, whisper's or Parakeet's by its family (decision 181);
   * parakeetFallback: the whisper model that takes recordings in languages Parakeet does not cover, when installed (decision 183);
   * llmKeptFromEarlierDefault: PARLEY_LLM_MODEL is unset and only the earlier default's file is installed (decision 235);
   * segmentation and speakerEmbedding: the neural diarizer's two models, used when both are installed (decision 097).
   */
  models: Readonly<Record<"mirror" | "whisper" | "parakeetFallback" | "llm" | "embedding" | "segmentation" | "speakerEmbedding", string>> & {
    llmKeptFromEarlierDefault: boolean;
  };
  ask: {
    defaultProvider: "llama_cpp" | "openai_compatible" | "extractive";
    openai: { baseUrl?: string; apiKey?: string; model?: string; contextTokens: number; timeoutMs: number };
  };
  /**
   * Where each model engine runs (decision 188): here, or on an OpenAI-compatible server. The
   * LLM's server is ask.openai's; redaction's model pass uses it only when named explicitly
   * (it sends identifiers). `concurrency` calls in flight per remote engine; a failed call is
   * retried after each of `retryDelaysMs` in turn, within the job's time limit.
   */
  engines: {
    /** temperatureInc: whisper.cpp's fallback step, sent as `temperature_inc` when set (decision 197). */
    transcriber: (RemoteEngineConfig & { temperatureInc?: number }) | null;
    embedder: RemoteEngineConfig | null;
    llm: "local" | "openai_compatible";
    remote: { concurrency: number; retryDelaysMs: number[] };
  };
  jobConcurrency: number;
  /** New uploads are refused (507) while a data volume has less free space than this. */
  minFreeBytes: number;
  /** How long SIGTERM lets in-flight requests finish before the process exits anyway. */
  shutdownGraceSeconds: number;
  /** A transcription or summary job may take minSeconds plus timeFactor x the audio length before it fails with timeout. */
  processing: { minSeconds: number; timeFactor: number };
  /** Server secret for encrypting webhook secrets and signing grants; generated into the data dir when unset. */
  secret?: string;
  /** GET /metrics answers, and requests are counted, only when this is on (decision 086). */
  metrics: boolean;
  /** HTTPS served by this process (decision 104): the operator's certificate files, a self-signed certificate made in the data dir, or none (plain HTTP). */
  tls: { mode: "files"; certFile: string; keyFile: string } | { mode: "auto" } | null;
  /** Dashboard sessions end after idle minutes or max hours; sign-in locks for lockoutMinutes after maxFailures failures (decision 094); with requireMfa every local account enrols a second factor first (decision 151); break-glass grants last breakGlassMinutes (decision 137). */
  admins: { sessionIdleMinutes: number; sessionMaxHours: number; maxFailures: number; lockoutMinutes: number; requireMfa: boolean; breakGlassMinutes: number };
  /** How long a wearer's one-time portal sign-in link works (decision 147). */
  inviteHours: number;
  /** The key wrapping the projects' audio data keys (decision 105); unset: derived from the server secret. */
  masterKeyFile?: string;
  /** Redaction's model pass (decision 108): auto runs it when the local LLM is installed; off keeps rules only; openai_compatible sends it to the remote LLM (an explicit opt-in, decision 188). */
  redactionLlm: "auto" | "off" | "openai_compatible";
  /** Export archives older than this many days are erased by the daily retention run; 0 keeps them (decision 107). */
  exportRetentionDays: number;
  /** Single sign-on with an OpenID Connect provider (decision 143); null when PARLEY_OIDC_ISSUER is unset. */
  oidc: OidcConfig | null;
}>;

/** An engine on an OpenAI-compatible server: its base URL (with the /v1 prefix), key, model and one attempt's timeout. */
export type RemoteEngineConfig = Readonly<{ baseUrl: string; apiKey?: string; model: string; timeoutMs: number }>;

/** roleClaim: the claim holding the person's groups; roleMap: group name to the role it gives. */
export type OidcConfig = Readonly<{
  issuer: string;
  clientId: string;
  clientSecret?: string;
  roleClaim: string;
  roleMap: ReadonlyMap<string, (typeof ROLE_NAMES)[number]>;
}>;

export class ConfigError extends Error {}

/** Parses the environment once into a frozen Config; every bad variable is named in one error. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message} (got ${JSON.stringify(env[String(i.path[0])])})`);
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const e = parsed.data;
  const llm = e.PARLEY_LLM_MODEL || defaultLlm(e.PARLEY_MODELS_DIR);
  const tls: Config["tls"] =
    e.PARLEY_TLS_CERT_FILE && e.PARLEY_TLS_KEY_FILE
      ? { mode: "files", certFile: e.PARLEY_TLS_CERT_FILE, keyFile: e.PARLEY_TLS_KEY_FILE }
      : e.PARLEY_TLS === "auto"
        ? { mode: "auto" }
        : null;
  return Object.freeze({
    port: e.PARLEY_PORT,
    host: e.PARLEY_HOST,
    dataDir: e.PARLEY_DATA_DIR,
    modelsDir: e.PARLEY_MODELS_DIR,
    publicUrl: (e.PARLEY_PUBLIC_URL ?? `${tls ? "https" : "http"}://127.0.0.1:${e.PARLEY_PORT}`).replace(/\/$/, ""),
    allowedHosts: e.PARLEY_ALLOWED_HOSTS,
    logLevel: e.PARLEY_LOG_LEVEL,
    rateLimit: { perSecond: e.PARLEY_RATE_LIMIT_PER_SECOND, perMinute: e.PARLEY_RATE_LIMIT_PER_MINUTE },
    webhooks: {
      retryDelaysSeconds: e.PARLEY_WEBHOOK_RETRY_DELAYS,
      denyPrivate: e.PARLEY_WEBHOOK_DENY_PRIVATE,
      allowHosts: e.PARLEY_WEBHOOK_ALLOW_HOSTS,
      timeoutMs: e.PARLEY_WEBHOOK_TIMEOUT_MS,
    },
    uploads: {
      maxBytes: e.PARLEY_MAX_UPLOAD_BYTES,
      maxConcurrent: e.PARLEY_MAX_CONCURRENT_UPLOADS,
      maxConcurrentPerDevice: e.PARLEY_MAX_CONCURRENT_UPLOADS_PER_DEVICE,
      minBytesPerSecond: e.PARLEY_UPLOAD_MIN_BYTES_PER_SECOND,
      rateWindowMs: e.PARLEY_UPLOAD_RATE_WINDOW_SECONDS * 1000,
      tokenTtlSeconds: e.PARLEY_UPLOAD_TOKEN_TTL_SECONDS,
    },
    s3: e.PARLEY_S3_BUCKET
      ? {
          bucket: e.PARLEY_S3_BUCKET,
          endpoint: e.PARLEY_S3_ENDPOINT,
          region: e.PARLEY_S3_REGION,
          accessKeyId: e.PARLEY_S3_ACCESS_KEY_ID,
          secretAccessKey: e.PARLEY_S3_SECRET_ACCESS_KEY,
        }
      : null,
    ffmpegPath: e.PARLEY_FFMPEG_PATH,
    gpu: e.PARLEY_GPU,
    models: {
      mirror: e.PARLEY_MODEL_MIRROR.replace(/\/$/, ""),
      whisper: e.PARLEY_WHISPER_MODEL,
      parakeetFallback: e.PARLEY_PARAKEET_FALLBACK_MODEL,
      llm,
      llmKeptFromEarlierDefault: !e.PARLEY_LLM_MODEL && llm === EARLIER_DEFAULT_LLM.name,
      embedding: e.PARLEY_EMBEDDING_MODEL,
      segmentation: e.PARLEY_SEGMENTATION_MODEL,
      speakerEmbedding: e.PARLEY_SPEAKER_EMBEDDING_MODEL,
    },
    ask: {
      defaultProvider: e.PARLEY_ASK_PROVIDER,
      openai: {
        baseUrl: e.PARLEY_OPENAI_BASE_URL,
        apiKey: e.PARLEY_OPENAI_API_KEY,
        model: e.PARLEY_OPENAI_MODEL,
        contextTokens: e.PARLEY_OPENAI_CONTEXT_TOKENS,
        timeoutMs: e.PARLEY_OPENAI_TIMEOUT_MS,
      },
    },
    engines: {
      transcriber:
        e.PARLEY_TRANSCRIBER === "openai_compatible" && e.PARLEY_TRANSCRIBER_BASE_URL
          ? {
              baseUrl: e.PARLEY_TRANSCRIBER_BASE_URL,
              apiKey: e.PARLEY_TRANSCRIBER_API_KEY,
              model: e.PARLEY_TRANSCRIBER_MODEL,
              timeoutMs: e.PARLEY_TRANSCRIBER_TIMEOUT_MS,
              temperatureInc: e.PARLEY_TRANSCRIBER_TEMPERATURE_INC,
            }
          : null,
      embedder:
        e.PARLEY_EMBEDDER === "openai_compatible" && e.PARLEY_EMBEDDER_BASE_URL && e.PARLEY_EMBEDDER_MODEL
          ? { baseUrl: e.PARLEY_EMBEDDER_BASE_URL, apiKey: e.PARLEY_EMBEDDER_API_KEY, model: e.PARLEY_EMBEDDER_MODEL, timeoutMs: e.PARLEY_EMBEDDER_TIMEOUT_MS }
          : null,
      llm: e.PARLEY_LLM,
      remote: { concurrency: e.PARLEY_REMOTE_CONCURRENCY, retryDelaysMs: e.PARLEY_REMOTE_RETRY_DELAYS_MS },
    },
    jobConcurrency: e.PARLEY_JOB_CONCURRENCY,
    minFreeBytes: e.PARLEY_MIN_FREE_MB * 1024 * 1024,
    shutdownGraceSeconds: e.PARLEY_SHUTDOWN_GRACE_SECONDS,
    processing: { minSeconds: e.PARLEY_PROCESSING_MIN_SECONDS, timeFactor: e.PARLEY_PROCESSING_TIME_FACTOR },
    secret: e.PARLEY_SECRET,
    metrics: e.PARLEY_METRICS,
    tls,
    admins: {
      sessionIdleMinutes: e.PARLEY_SESSION_IDLE_MINUTES,
      sessionMaxHours: e.PARLEY_SESSION_MAX_HOURS,
      breakGlassMinutes: e.PARLEY_BREAK_GLASS_MINUTES,
      maxFailures: e.PARLEY_LOGIN_MAX_FAILURES,
      lockoutMinutes: e.PARLEY_LOGIN_LOCKOUT_MINUTES,
      requireMfa: e.PARLEY_REQUIRE_MFA,
    },
    inviteHours: e.PARLEY_INVITE_HOURS,
    masterKeyFile: e.PARLEY_MASTER_KEY_FILE,
    redactionLlm: e.PARLEY_REDACTION_LLM,
    exportRetentionDays: e.PARLEY_EXPORT_RETENTION_DAYS,
    oidc:
      e.PARLEY_OIDC_ISSUER && e.PARLEY_OIDC_CLIENT_ID
        ? Object.freeze({
            issuer: e.PARLEY_OIDC_ISSUER,
            clientId: e.PARLEY_OIDC_CLIENT_ID,
            clientSecret: e.PARLEY_OIDC_CLIENT_SECRET,
            roleClaim: e.PARLEY_OIDC_ROLE_CLAIM,
            roleMap: new Map(e.PARLEY_OIDC_ROLE_MAP),
          })
        : null,
  });
}
