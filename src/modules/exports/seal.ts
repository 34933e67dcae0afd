import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from "node:crypto";

/**
 * Passphrase encryption of a whole archive: "PARLEYX1", a 16-byte scrypt salt, a 12-byte
 * IV, the AES-256-GCM ciphertext, then its 16-byte tag. The passphrase is never stored;
 * without it nobody, Parley included, can open the archive.
 */
const MAGIC = new TextEncoder().encode("PARLEYX1");
const SCRYPT = { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

const keyOf = (passphrase: string, salt: Uint8Array) => scryptSync(passphrase.normalize("NFC"), salt, 32, SCRYPT);

export async function* sealStream(passphrase: string, plain: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", keyOf(passphrase, salt), iv);
  yield Buffer.concat([MAGIC, salt, iv]);
  for await (const chunk of plain) yield cipher.update(chunk);
  yield Buffer.concat([cipher.final(), cipher.getAuthTag()]);
}

export function isSealed(bytes: Uint8Array): boolean {
  return bytes.length > MAGIC.length && Buffer.from(bytes.subarray(0, MAGIC.length)).equals(MAGIC);
}

/** The archive inside a sealed file; a wrong passphrase or any altered byte fails the tag check. */
export function unseal(passphrase: string, sealed: Uint8Array): Uint8Array {
  const salt = sealed.subarray(8, 24);
  const iv = sealed.subarray(24, 36);
  const decipher = createDecipheriv("aes-256-gcm", keyOf(passphrase, salt), iv);
  decipher.setAuthTag(sealed.subarray(sealed.length - 16));
  try {
    return Buffer.concat([decipher.update(sealed.subarray(36, sealed.length - 16)), decipher.final()]);
  } catch {
    throw new Error("the passphrase is wrong or the archive was altered (its authentication tag does not match)");
  }
}
