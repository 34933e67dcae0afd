/**
 * The few DER (ASN.1) encodings a self-signed X.509 certificate needs, written by hand so
 * the single executable makes its certificate with nothing installed (no openssl, no
 * package): see decision 104.
 */

type Bytes = Uint8Array;

function lengthOf(n: number): Bytes {
  if (n < 0x80) return Uint8Array.of(n);
  const digits: number[] = [];
  for (let rest = n; rest > 0; rest = Math.floor(rest / 256)) digits.unshift(rest % 256);
  return Uint8Array.of(0x80 | digits.length, ...digits);
}

/** Tag, length, value: the one shape every DER element has. */
export function tlv(tag: number, ...parts: Bytes[]): Bytes {
  const body = Buffer.concat(parts);
  return Buffer.concat([Uint8Array.of(tag), lengthOf(body.length), body]);
}

export const sequence = (...items: Bytes[]) => tlv(0x30, ...items);
export const set = (...items: Bytes[]) => tlv(0x31, ...items);
export const octetString = (bytes: Bytes) => tlv(0x04, bytes);
export const utf8String = (text: string) => tlv(0x0c, new TextEncoder().encode(text));
export const TRUE = tlv(0x01, Uint8Array.of(0xff));
/** A BIT STRING of whole bytes, or with `unusedBits` trailing bits of the last byte unused. */
export const bitString = (bytes: Bytes, unusedBits = 0) => tlv(0x03, Uint8Array.of(unusedBits), bytes);
/** [n] EXPLICIT: a constructed context-specific wrapper around one element. */
export const explicit = (n: number, inner: Bytes) => tlv(0xa0 | n, inner);
/** [n] IMPLICIT of a primitive type: the context tag replaces the type's own. */
export const implicit = (n: number, bytes: Bytes) => tlv(0x80 | n, bytes);

/** A non-negative INTEGER from its big-endian bytes, in DER's shortest form. */
export function unsignedInteger(bytes: Bytes): Bytes {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const trimmed = bytes.subarray(start);
  return tlv(0x02, (trimmed[0]! & 0x80) !== 0 ? Buffer.concat([Uint8Array.of(0), trimmed]) : trimmed);
}

export function objectIdentifier(dotted: string): Bytes {
  const [first, second, ...rest] = dotted.split(".").map(Number);
  const out = [first! * 40 + second!];
  for (const arc of rest) {
    const base128 = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) base128.unshift(0x80 | (v & 0x7f));
    out.push(...base128);
  }
  return tlv(0x06, Uint8Array.from(out));
}

/** UTCTime until 2049, GeneralizedTime from 2050 on (RFC 5280 4.1.2.5), to the second, in UTC. */
export function time(date: Date): Bytes {
  const iso = date.toISOString(); // 2026-11-25T12:10:36.000Z
  const digits = iso.slice(0, 19).replace(/[-T:]/g, "") + "Z"; // 20261125121036Z
  return date.getUTCFullYear() < 2050 ? tlv(0x17, new TextEncoder().encode(digits.slice(2))) : tlv(0x18, new TextEncoder().encode(digits));
}
