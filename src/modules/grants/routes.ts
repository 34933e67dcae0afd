import { Elysia } from "elysia";
import { z } from "zod";
import type { Deps } from "../../deps";
import { authentication, authorize } from "../../http/auth";
import { idParam } from "../../http/schemas";
import { grantPublicKeySchema, grantSchema } from "./schema";
import { grantVerificationKey, issueDeprovisionGrant, issueWifiGrant } from "./service";

const expiresIn = z.number().int().min(60).max(3600);

export function grantsRoutes(deps: Deps) {
  const { db, clock, grantKeys } = deps;
  return new Elysia({ name: "parley.grants", detail: { tags: ["Device grants"] } })
    .use(authentication(deps))
    .post(
      "/devices/:id/wifi-config/grant",
      ({ principal, params, body }) =>
        issueWifiGrant(db, grantKeys, authorize(principal, "devices:write"), params.id, body?.expires_in_seconds ?? 900, clock.now()),
      {
        params: idParam,
        body: z.strictObject({ expires_in_seconds: expiresIn.default(900) }).optional(),
        response: { 200: grantSchema },
        detail: {
          summary: "WiFi configuration grant",
          description: "Scope devices:write. Signed (Ed25519), expiring, single-use grant. 400 device_not_wifi_capable; 404 not_found.",
        },
      },
    )
    .post(
      "/devices/:id/deprovision/grant",
      ({ principal, params, body }) =>
        issueDeprovisionGrant(db, grantKeys, authorize(principal, "devices:write"), params.id, body.nonce, body.expires_in_seconds, clock.now()),
      {
        params: idParam,
        response: { 200: grantSchema },
        body: z.strictObject({
          nonce: z.string().regex(/^[A-Za-z0-9_-]{16,128}$/, "must be 16-128 letters, digits, hyphens or underscores"),
          expires_in_seconds: expiresIn.default(300),
        }),
        detail: { summary: "Deprovision grant", description: "Scope devices:write. Signed grant bound to the nonce the device generated. 404 not_found." },
      },
    )
    .get("/device-grants/public-key", ({ principal }) => grantVerificationKey(grantKeys, authorize(principal, "devices:read")), {
      response: { 200: grantPublicKeySchema },
      detail: {
        summary: "Grant verification key",
        description: "Scope devices:read. The organization's Ed25519 public key that devices verify grants and command grant_tokens with.",
      },
    });
}
