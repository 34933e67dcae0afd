import { randomBytes } from "node:crypto";

const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZabcdefghijkmnpqrstuvwxyz";

function encode(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += ALPHABET[b % ALPHABET.length];
  return out;
}

/**
 * A new identifier: prefix, then a time part so ids sort by creation, then 16 random
 * characters. The rest after the prefix is opaque to clients (spec 2.1).
 */
export function newId(prefix: string, now = Date.now()): string {
  return `${prefix}${now.toString(36).padStart(9, "0")}${encode(randomBytes(16))}`;
}

/** A bearer secret: prefix plus 32 random characters (about 185 bits). */
export function newSecret(prefix: string): string {
  return `${prefix}${encode(randomBytes(32))}`;
}
