import { z } from "zod";
import { whisperLanguage } from "../../engines/whisper-languages";
import { isoDateTime } from "../../http/schemas";
import { type DeviceSettings, deviceSettingsSchema, settingsOverrides } from "./device-settings";

/**
 * The summary templates a configuration may name. Declared here, below summaries, because
 * transcriptions reads the configuration and summaries reads transcriptions (decision 083);
 * summaries takes its template names from this list.
 */
export const SUMMARY_TEMPLATES = ["general", "sales", "clinical", "legal"] as const;
export type SummaryTemplateName = (typeof SUMMARY_TEMPLATES)[number];
const TEMPLATES = SUMMARY_TEMPLATES;
type TemplateName = SummaryTemplateName;

export const ASK_PROVIDERS = ["llama_cpp", "openai_compatible", "extractive"] as const;
export const CONFIG_LEVELS = ["organization", "project", "end_user", "device"] as const;
export type ConfigLevel = (typeof CONFIG_LEVELS)[number];

/**
 * A language Whisper knows, as its code ("en", "de") or a regional tag of it ("pt-BR",
 * transcribed as pt; decision 055). Anything else would reach whisper.cpp as a language it
 * cannot name, so it is refused here with 422.
 */
export const languageTag = z
  .string()
  .regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, "must be a language code such as en, de or pt-BR")
  .refine((tag) => whisperLanguage(tag) !== null, "must be a language Whisper can transcribe, such as en, de or pt-BR");

/**
 * Days a recording's content is kept (decision 103): a whole number of days, or "keep", which
 * a nearer level uses to undo a limit set farther up. The effective value is null for keep.
 */
const retentionDays = z.union([z.literal("keep"), z.int().min(1).max(36_500)]);
type RetentionDays = z.infer<typeof retentionDays>;

/**
 * The overrides one level sets (decisions.md "Configuration"). Absent or null means "not
 * set here, inherit"; language "auto" sets automatic detection explicitly, which a
 * nearer level needs to undo a language chosen farther up.
 */
/** A speaker-count hint for the diarizer (decision 097): at least 1, at most 20 voices. */
export const speakerCount = z.number().int().min(1).max(20);

/**
 * A vocabulary (decision 158): terms Whisper is prompted with (drug, client, matter and
 * people's names). Each level adds its own; the nearest level's come first.
 */
export const vocabularyTerms = z.array(z.string().trim().min(1).max(100)).max(200);

export const configBody = z.strictObject({
  auto_transcribe: z.boolean().nullish(),
  auto_summarize: z.boolean().nullish(),
  summary_template: z.enum(TEMPLATES).nullish(),
  language: z.union([z.literal("auto"), languageTag]).nullish(),
  ask_provider: z.enum(ASK_PROVIDERS).nullish(),
  redact_webhook_payloads: z.boolean().nullish(),
  allow_wearer_delete: z.boolean().nullish(),
  retention_audio_days: retentionDays.nullish(),
  retention_transcript_days: retentionDays.nullish(),
  settings: settingsOverrides.nullish(),
  min_speakers: speakerCount.nullish(),
  max_speakers: speakerCount.nullish(),
  vocabulary: vocabularyTerms.nullish(),
});
export type ConfigBody = z.infer<typeof configBody>;

/** What one level stores: only the keys it sets. */
export type ConfigOverrides = {
  auto_transcribe?: boolean;
  auto_summarize?: boolean;
  summary_template?: TemplateName;
  language?: string;
  ask_provider?: (typeof ASK_PROVIDERS)[number];
  redact_webhook_payloads?: boolean;
  allow_wearer_delete?: boolean;
  retention_audio_days?: RetentionDays;
  retention_transcript_days?: RetentionDays;
  settings?: z.infer<typeof settingsOverrides>;
  min_speakers?: number;
  max_speakers?: number;
  vocabulary?: string[];
};

/** Contract 2: the effective configuration for a recording's end user and device. */
export const resolvedConfigSchema = z.object({
  auto_transcribe: z.boolean(),
  auto_summarize: z.boolean(),
  summary_template: z.enum(TEMPLATES),
  /** null: detect the language */
  language: z.string().nullable(),
  /** null: the server default provider */
  ask_provider: z.string().nullable(),
  /** Webhook bodies carry transcripts and summaries with identifiers replaced (decision 106). */
  redact_webhook_payloads: z.boolean(),
  /** A wearer may delete their own recordings from the portal at /me (decision 148); legal holds still win. */
  allow_wearer_delete: z.boolean(),
  /** null: kept until deleted */
  retention_audio_days: z.int().nullable(),
  /** null: kept until deleted */
  retention_transcript_days: z.int().nullable(),
  settings: deviceSettingsSchema,
  /** Speaker-count hints for the diarizer; null: let it decide. A max below the min wins. */
  min_speakers: z.number().int().nullable(),
  max_speakers: z.number().int().nullable(),
  /** Every level's terms, the nearest level's first, each once (case aside): the transcriber keeps what its prompt has room for. */
  vocabulary: z.array(z.string()),
});
export type ResolvedConfig = z.infer<typeof resolvedConfigSchema>;

/** GET/PUT /config/...: what this level sets (null = inherited) and what results. */
export const configLevelViewSchema = z
  .object({
    level: z.enum(CONFIG_LEVELS),
    target_id: z.string(),
    overrides: z.object({
      auto_transcribe: z.boolean().nullable(),
      auto_summarize: z.boolean().nullable(),
      summary_template: z.enum(TEMPLATES).nullable(),
      language: z.string().nullable(),
      ask_provider: z.enum(ASK_PROVIDERS).nullable(),
      redact_webhook_payloads: z.boolean().nullable(),
      allow_wearer_delete: z.boolean().nullable(),
      retention_audio_days: retentionDays.nullable(),
      retention_transcript_days: retentionDays.nullable(),
      settings: settingsOverrides,
      min_speakers: z.number().int().nullable(),
      max_speakers: z.number().int().nullable(),
      vocabulary: z.array(z.string()).nullable(),
    }),
    effective: resolvedConfigSchema,
    updated_at: isoDateTime.nullable(),
  })
  .meta({ id: "ConfigLevel" });
export type ConfigLevelView = z.infer<typeof configLevelViewSchema>;
