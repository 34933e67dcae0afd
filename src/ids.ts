const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZabcdefghijkmnpqrstuvwxyz";

/** n cryptographically random bytes. getRandomValues, not node:crypto's randomBytes: ~50x cheaper a call, and a request id is minted on every request. */
function randomBytes(n: number): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(n));
}

function encode(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += ALPHABET[b % ALPHABET.length];
  return out;
}

const SEQUENCE_SPACE = 36 ** 5;
let sequence = 0;

/**
 * A new identifier: prefix, the creation time, a sequence that orders ids made in the
 * same millisecond, then 12 random characters. Ids therefore sort in creation order,
 * which lists use to break created_at ties. The part after the prefix is opaque to
 * clients (spec 2.1).
 */
export function newId(prefix: string, now = Date.now()): string {
  // A process-wide counter rather than one per millisecond: ids are minted against
  // different clocks (request ids use real time, records the injected clock).
  sequence = (sequence + 1) % SEQUENCE_SPACE;
  return `${prefix}${now.toString(36).padStart(9, "0")}${sequence.toString(36).padStart(5, "0")}${encode(randomBytes(12))}`;
}

/** A bearer secret: prefix plus 32 random characters (about 185 bits). */
export function newSecret(prefix: string): string {
  return `${prefix}${encode(randomBytes(32))}`;
}
