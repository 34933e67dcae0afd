import { createHmac, createPrivateKey, createPublicKey, type KeyObject, sign, verify } from "node:crypto";

type KeyPair = { privateKey: KeyObject; publicKey: KeyObject; publicRaw: Buffer };

// DER header of a PKCS#8 Ed25519 private key; the 32-byte seed follows it.
const PKCS8_ED25519 = Buffer.from("302e020100300506032b657004220420", "hex");
const PREFIX = "pg1";

/**
 * Device grants are Ed25519-signed so a device can check them offline holding only the
 * organization's public key (decision 021). Each organization's key pair is derived from
 * the server secret, so nothing is stored and restoring the secret restores the keys.
 * One per Deps (boot.ts), which keeps the pairs it derived.
 */
export class GrantKeys {
  private readonly pairs = new Map<string, KeyPair>();

  constructor(private readonly serverSecret: string) {}

  /** The organization's grant-verification key: raw Ed25519 public key, base64url. */
  publicKey(organizationId: string): string {
    return this.pairOf(organizationId).publicRaw.toString("base64url");
  }

  /** `pg1.<payload>.<signature>`: base64url JSON claims and the Ed25519 signature over `pg1.<payload>`. */
  sign(organizationId: string, claims: Record<string, unknown>): string {
    const payload = Buffer.from(JSON.stringify(claims)).toString("base64url");
    const signed = `${PREFIX}.${payload}`;
    const signature = sign(null, Buffer.from(signed), this.pairOf(organizationId).privateKey);
    return `${signed}.${signature.toString("base64url")}`;
  }

  /** Shutdown: lets go of the derived keys. */
  close(): void {
    this.pairs.clear();
  }

  private pairOf(organizationId: string): KeyPair {
    let pair = this.pairs.get(organizationId);
    if (!pair) {
      const seed = createHmac("sha256", this.serverSecret).update(`parley:device-grant-key:${organizationId}`).digest();
      const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: "der", type: "pkcs8" });
      const publicKey = createPublicKey(privateKey);
      pair = { privateKey, publicKey, publicRaw: publicKey.export({ format: "der", type: "spki" }).subarray(-32) };
      this.pairs.set(organizationId, pair);
    }
    return pair;
  }
}

/**
 * What a device does offline: checks the signature with the public key and returns the
 * claims, or null. Expiry, purpose and nonce are the caller's to check. Used by tests and
 * the simulator, which play the device.
 */
export function verifyGrant(publicKeyBase64url: string, blob: string): Record<string, unknown> | null {
  const [prefix, payload, signature] = blob.split(".");
  if (prefix !== PREFIX || !payload || !signature) return null;
  const spki = Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), Buffer.from(publicKeyBase64url, "base64url")]);
  const key = createPublicKey({ key: spki, format: "der", type: "spki" });
  if (!verify(null, Buffer.from(`${prefix}.${payload}`), key, Buffer.from(signature, "base64url"))) return null;
  try {
    return JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    return null;
  }
}
