import { z } from "zod";
import { pageQuery } from "../../http/pagination";
import { failureSchema, isoDateTime, metadataSchema } from "../../http/schemas";

/** Types a caller may create through POST /commands; factory_reset only comes from POST /reset. */
export const CREATABLE_TYPES = ["start_recording", "stop_recording", "trigger_upload"] as const;
const COMMAND_TYPES = [...CREATABLE_TYPES, "factory_reset"] as const;
export type CommandType = (typeof COMMAND_TYPES)[number];
const COMMAND_STATUSES = ["pending", "delivered", "executed", "failed", "expired", "cancelled"] as const;
export type CommandStatus = (typeof COMMAND_STATUSES)[number];

export const createCommandBody = z.strictObject({
  type: z.enum(CREATABLE_TYPES, {
    error: (issue) => (issue.input === "factory_reset" ? "factory_reset is not created here: use POST /devices/{id}/reset" : undefined),
  }),
  params: z
    .object({
      max_duration_seconds: z.number().int().min(1).max(86_400).optional(),
      upload_after_stop: z.boolean().optional(),
      app_metadata: metadataSchema.optional(),
    })
    .strict()
    .nullish(),
  idempotency_key: z.string().min(1).max(64).optional(),
  ttl_seconds: z.number().int().min(1).max(86_400).default(300),
});
export type CreateCommandBody = z.infer<typeof createCommandBody>;

export const commandParams = z.object({ id: z.string().min(1).max(100), cmd_id: z.string().min(1).max(100) });

export const listCommandsQuery = z.object({
  ...pageQuery,
  status: z.enum(COMMAND_STATUSES).optional(),
});
export type ListCommandsQuery = z.infer<typeof listCommandsQuery>;

/**
 * Body of the factory-reset acknowledgement, authenticated by the command's rct_
 * credential. Sent by device firmware, so like the heartbeat it tolerates fields it does
 * not know: firmware in the field cannot be upgraded in step with the server.
 */
export const resetCompletionBody = z.object({
  status: z.enum(["executed", "failed"]),
  result: z.record(z.string(), z.unknown()).nullish(),
  error: z.object({ code: z.string().min(1).max(100), message: z.string().max(1000) }).nullish(),
});
export type ResetCompletionBody = z.infer<typeof resetCompletionBody>;

/** A command result a heartbeat reports (decisions.md). */
export const commandResult = z.object({
  command_id: z.string().min(1).max(100),
  status: z.enum(["executed", "failed"]),
  result: z.record(z.string(), z.unknown()).nullish(),
  error: z.object({ code: z.string().min(1).max(100), message: z.string().max(1000) }).nullish(),
});
export type CommandResult = z.infer<typeof commandResult>;

/** Command of spec 2.6; every field always present. */
export const commandSchema = z
  .object({
    id: z.string(),
    device_id: z.string(),
    type: z.enum(COMMAND_TYPES),
    status: z.enum(COMMAND_STATUSES),
    params: z.record(z.string(), z.unknown()).nullable(),
    grant_token: z.string().nullable(),
    result: z.record(z.string(), z.unknown()).nullable(),
    error: failureSchema.nullable(),
    expires_at: isoDateTime.nullable(),
    delivered_at: isoDateTime.nullable(),
    executed_at: isoDateTime.nullable(),
    created_at: isoDateTime,
  })
  .meta({ id: "Command" });
export type Command = z.infer<typeof commandSchema>;
