import { createHmac, randomBytes } from "node:crypto";

/** A new signing secret in the Standard Webhooks format: whsec_ + base64 of 24 random bytes. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(24).toString("base64")}`;
}

/**
 * The signature headers of one attempt. X-Parley-Signature is spec 6's (hex HMAC-SHA256
 * of the raw body keyed with the whole secret string, as the receiver holds it); the
 * webhook-* headers follow Standard Webhooks (base64 HMAC of "id.timestamp.body" keyed
 * with the base64-decoded part after whsec_) so off-the-shelf verifiers work.
 */
export function signatureHeaders(secret: string, messageId: string, timestampSeconds: number, body: string): Record<string, string> {
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const standard = createHmac("sha256", key).update(`${messageId}.${timestampSeconds}.${body}`).digest("base64");
  return {
    "x-parley-signature": `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
    "webhook-id": messageId,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": `v1,${standard}`,
  };
}
