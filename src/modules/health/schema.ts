import { z } from "zod";

const modelStatus = z
  .enum(["installed", "bundled", "missing", "partial", "mismatch"])
  .describe("installed only when every file is in place and is the model the name says (mismatch: a file under the name that is another model)");

/** GET /v1/health: public, so it holds counts and names, never a path, key, project or content. */
export const healthSchema = z
  .object({
    status: z.enum(["ok", "degraded"]).describe("degraded when the database fails, a volume is below PARLEY_MIN_FREE_MB, or a model is not installed"),
    version: z.string(),
    database: z.object({ ok: z.boolean() }),
    storage: z.array(z.object({ volume: z.enum(["database", "audio"]), free_bytes: z.number().int(), total_bytes: z.number().int(), low: z.boolean() })),
    models: z.array(
      z.object({
        engine: z.enum(["transcriber", "llm", "embedder", "vad"]),
        model: z.string(),
        status: modelStatus,
        install: z
          .string()
          .nullable()
          .describe("the command that installs it, while it is not installed (missing, partial or mismatch), as parley runs on this machine"),
      }),
    ),
    queue: z
      .object({
        queued: z.number().int(),
        running: z.number().int(),
        dead: z.number().int(),
        oldest_age_seconds: z.number().nullable().describe("age of the oldest queued or running job; null when none"),
      })
      .nullable()
      .describe("null when the database does not answer"),
  })
  .meta({ id: "Health" });

export type Health = z.infer<typeof healthSchema>;
