import { z } from "zod";
import { CHANNELS } from "../devices/schema";
import { isoDateTime } from "../../http/schemas";
import { commandResult, commandSchema } from "../commands/schema";
import { otaAssignmentSchema } from "../firmware/schema";

/**
 * POST /devices/{id}/heartbeat (decisions.md); every field optional, plus `ota_status`
 * (decision 026). Unlike the API-key bodies it ignores fields it does not know: firmware
 * in the field cannot be upgraded in step with the server, and a refused heartbeat would
 * leave a device that reports something new looking offline and deaf to its commands.
 */
export const heartbeatBody = z.object({
  battery_percent: z.number().int().min(0).max(100).optional(),
  storage_used_mb: z.number().int().min(0).max(10_000_000).optional(),
  storage_total_mb: z.number().int().min(0).max(10_000_000).optional(),
  signal_strength_dbm: z.number().int().min(-200).max(0).optional(),
  firmware_version: z.string().min(1).max(32).optional(),
  // Forwarded verbatim (spec 2.5): only its size is bounded.
  recording_state: z
    .record(z.string(), z.unknown())
    .refine((s) => JSON.stringify(s).length <= 4096, "recording_state is at most 4 KB as JSON")
    .nullish(),
  channel: z.enum(CHANNELS).optional(),
  command_results: z.array(commandResult).max(100).optional(),
  ota_status: z
    .object({
      ota_id: z.string().min(1).max(100),
      status: z.enum(["downloading", "installing", "applied", "failed"]),
      progress_percent: z.number().int().min(0).max(100).optional(),
      error_message: z.string().max(1000).nullish(),
    })
    .optional(),
});
export type HeartbeatBody = z.infer<typeof heartbeatBody>;

/** What a heartbeat gets back: the commands now delivered, the OTA assignment in flight, the server's clock. */
export const heartbeatResponseSchema = z
  .object({ commands: z.array(commandSchema), ota: otaAssignmentSchema.nullable(), server_time: isoDateTime })
  .meta({ id: "HeartbeatResponse" });
export type HeartbeatResponse = z.infer<typeof heartbeatResponseSchema>;
