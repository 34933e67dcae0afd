import { z } from "zod";
import { pageQuery } from "../../http/pagination";
import { isoDateTime, metadataOut, metadataSchema } from "../../http/schemas";

export const createEndUserBody = z.object({
  external_id: z.string().min(1).max(255).nullish(),
  name: z.string().max(500).nullish(),
  email: z.email().max(320).nullish(),
  metadata: metadataSchema.optional(),
});
export type CreateEndUserBody = z.infer<typeof createEndUserBody>;

export const updateEndUserBody = createEndUserBody;
export type UpdateEndUserBody = z.infer<typeof updateEndUserBody>;

export const listEndUsersQuery = z.object({
  ...pageQuery,
  external_id: z.string().min(1).max(255).optional(),
  include_deleted: z.enum(["true", "false"]).optional(),
});
export type ListEndUsersQuery = z.infer<typeof listEndUsersQuery>;

/** EndUser of spec 2.2: every field always present; deleted_at is null until deletion. */
export const endUserSchema = z
  .object({
    id: z.string(),
    external_id: z.string().nullable(),
    name: z.string().nullable(),
    email: z.string().nullable(),
    metadata: metadataOut,
    created_at: isoDateTime,
    updated_at: isoDateTime,
    deleted_at: isoDateTime.nullable(),
  })
  .meta({ id: "EndUser" });
export type EndUser = z.infer<typeof endUserSchema>;
