import { z } from "zod";
import { pageQuery } from "../../http/pagination";
import { metadataSchema } from "../../http/schemas";

/** Types a caller may create through POST /commands; factory_reset only comes from POST /reset. */
export const CREATABLE_TYPES = ["start_recording", "stop_recording", "trigger_upload"] as const;
export type CommandType = (typeof CREATABLE_TYPES)[number] | "factory_reset";
export type CommandStatus = "pending" | "delivered" | "executed" | "failed" | "expired" | "cancelled";

export const createCommandBody = z.strictObject({
  // A plain string here, checked in the service, so factory_reset gets its own explanation.
  type: z.string().min(1).max(64),
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
  status: z.enum(["pending", "delivered", "executed", "failed", "expired", "cancelled"]).optional(),
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
export type Command = {
  id: string;
  device_id: string;
  type: CommandType;
  status: CommandStatus;
  params: Record<string, unknown> | null;
  grant_token: string | null;
  result: Record<string, unknown> | null;
  error: { code: string; message: string } | null;
  expires_at: string | null;
  delivered_at: string | null;
  executed_at: string | null;
  created_at: string;
};
