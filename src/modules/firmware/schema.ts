import { z } from "zod";
import { isoDateTime } from "../../http/schemas";
import { DEVICE_MODELS } from "../devices/schema";

export const OTA_STATUSES = ["pending", "delivered", "applied", "failed", "cancelled"] as const;
export type OtaStatus = (typeof OTA_STATUSES)[number];

/** The firmware release record (its fields are "not shown" in the spec; decision 025). */
export const firmwareReleaseSchema = z
  .object({
    id: z.string(),
    version: z.string(),
    model: z.enum(DEVICE_MODELS),
    notes: z.string().nullable(),
    sha256: z.string(),
    size_bytes: z.number().int(),
    status: z.enum(["draft", "published"]),
    published_at: isoDateTime.nullable(),
    created_at: isoDateTime,
  })
  .meta({ id: "FirmwareRelease" });
export type FirmwareRelease = z.infer<typeof firmwareReleaseSchema>;

/** OTA assignment of spec 2.11, plus what the device needs to fetch and check the file. */
export const otaAssignmentSchema = z
  .object({
    id: z.string(),
    device_id: z.string(),
    firmware_release_id: z.string(),
    status: z.enum(OTA_STATUSES),
    assigned_at: isoDateTime,
    delivered_at: isoDateTime.nullable(),
    applied_at: isoDateTime.nullable(),
    error_message: z.string().nullable(),
    progress: z.object({ stage: z.enum(["downloading", "installing"]), percent: z.number().int().nullable(), reported_at: isoDateTime }).nullable(),
    firmware: z.object({ version: z.string(), model: z.enum(DEVICE_MODELS), sha256: z.string(), size_bytes: z.number().int(), download_path: z.string() }),
  })
  .meta({ id: "OtaAssignment" });
export type OtaAssignment = z.infer<typeof otaAssignmentSchema>;
