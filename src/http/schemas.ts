import { z } from "zod";

/** Free key-value metadata (spec 2.2): at most 50 keys of up to 40 characters, 16 KB in all. */
export const metadataSchema = z
  .record(z.string().min(1).max(40), z.unknown())
  .refine((m) => Object.keys(m).length <= 50, "metadata holds at most 50 keys")
  .refine((m) => JSON.stringify(m).length <= 16_384, "metadata is at most 16 KB as JSON");

/** A path id of the given prefix; anything else is simply not found, so the shape is checked in the store. */
export const idParam = z.object({ id: z.string().min(1).max(100) });

export const isoDateTime = z.iso.datetime({ offset: true });
