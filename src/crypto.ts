import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** Bun's one-shot SHA-256, not node:crypto's createHash: ~2x cheaper, and every request's credential is hashed. */
export function sha256Hex(input: string | Uint8Array): string {
  return Bun.SHA256.hash(input, "hex");
}

export function hmacSha256Hex(key: string | Uint8Array, input: string | Uint8Array): string {
  return createHmac("sha256", key).update(input).digest("hex");
}

export function constantTimeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** How a stored secret is shown after creation: prefix, ellipsis, last four (spec 5 rule 2). */
export function hintOf(secret: string): string {
  const prefix = secret.match(/^[a-z]+_(?:live_|test_)?/)?.[0] ?? "";
  return `${prefix}...${secret.slice(-4)}`;
}

/** AES-256-GCM with a key derived from the server secret: for secrets we must read back (webhook signing keys). */
export function encryptWithServerSecret(serverSecret: string, plaintext: string): string {
  const key = createHash("sha256").update(`parley:encrypt:${serverSecret}`).digest();
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return [iv, cipher.getAuthTag(), body].map((b) => b.toString("base64url")).join(".");
}

export function decryptWithServerSecret(serverSecret: string, sealed: string): string {
  const [iv, tag, body] = sealed.split(".").map((p) => Buffer.from(p, "base64url"));
  if (!iv || !tag || !body) throw new Error("sealed value is malformed");
  const key = createHash("sha256").update(`parley:encrypt:${serverSecret}`).digest();
  const decipher = createDecipheriv("aes-256-gcm", key, iv);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8");
}
