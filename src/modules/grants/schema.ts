import { z } from "zod";
import { isoDateTime } from "../../http/schemas";

/** A signed grant (spec 2.11 WiFi config grant; the deprovision grant has the same shape). */
export const grantSchema = z.object({ grant_blob: z.string(), expires_at: isoDateTime }).meta({ id: "Grant" });
export type Grant = z.infer<typeof grantSchema>;

/** GET /device-grants/public-key: what devices verify grants and command grant_tokens with. */
export const grantPublicKeySchema = z
  .object({ algorithm: z.literal("Ed25519"), public_key: z.string(), encoding: z.literal("base64url-raw") })
  .meta({ id: "GrantPublicKey" });
export type GrantPublicKey = z.infer<typeof grantPublicKeySchema>;
