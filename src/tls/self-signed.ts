import { createHash, createPublicKey, type KeyObject, randomBytes, sign } from "node:crypto";
import { isIPv4, isIPv6 } from "node:net";
import { bitString, explicit, implicit, objectIdentifier, octetString, sequence, set, TRUE, time, unsignedInteger, utf8String } from "./der";

const ECDSA_WITH_SHA256 = sequence(objectIdentifier("1.2.840.10045.4.3.2"));
const COMMON_NAME = "2.5.4.3";

/** What a self-signed server certificate says: a name, where it is valid, and when. */
export type SelfSignedRequest = { commonName: string; dnsNames: string[]; ipAddresses: string[]; notBefore: Date; notAfter: Date };

/** An address's bytes as an iPAddress SAN holds them (4 or 16), or null when it is no address. */
export function addressBytes(ip: string): Uint8Array | null {
  if (isIPv4(ip)) return Uint8Array.from(ip.split(".").map(Number));
  if (!isIPv6(ip)) return null;
  const [head, tail] = ip.includes("::") ? ip.split("::") : [ip, undefined];
  const groupsOf = (s: string | undefined) => (s ? s.split(":") : []);
  const front = groupsOf(head);
  const back = groupsOf(tail);
  const last = tail === undefined ? front : back;
  // An IPv4 tail (::ffff:10.0.0.1) is two groups.
  if (last.at(-1)?.includes(".")) {
    const v4 = last.pop()!.split(".").map(Number);
    last.push(((v4[0]! << 8) | v4[1]!).toString(16), ((v4[2]! << 8) | v4[3]!).toString(16));
  }
  const groups = [...front, ...Array<string>(tail === undefined ? 0 : 8 - front.length - back.length).fill("0"), ...back];
  return Uint8Array.from(groups.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 0xff]));
}

function extension(oid: string, critical: boolean, value: Uint8Array): Uint8Array {
  return critical ? sequence(objectIdentifier(oid), TRUE, octetString(value)) : sequence(objectIdentifier(oid), octetString(value));
}

function subjectAltName(dnsNames: string[], ipAddresses: string[]): Uint8Array {
  const dns = dnsNames.map((name) => implicit(2, new TextEncoder().encode(name)));
  const ips = ipAddresses.flatMap((ip) => {
    const bytes = addressBytes(ip);
    return bytes ? [implicit(7, bytes)] : [];
  });
  return sequence(...dns, ...ips);
}

/**
 * A self-signed X.509 v3 server certificate for `key` (an EC P-256 private key), signed
 * ECDSA with SHA-256, as PEM: not a CA, for TLS servers only, valid for the names and
 * addresses given. The public key is `key`'s, so a certificate renewed for the same key
 * keeps its SPKI pin.
 */
export function makeSelfSignedCertificate(key: KeyObject, request: SelfSignedRequest): string {
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x40; // positive, and 16 bytes long in DER
  const name = sequence(set(sequence(objectIdentifier(COMMON_NAME), utf8String(request.commonName))));
  const spki = createPublicKey(key).export({ type: "spki", format: "der" });
  const keyId = createHash("sha1").update(spki).digest();
  const extensions = sequence(
    extension("2.5.29.19", true, sequence()), // basicConstraints: not a CA
    extension("2.5.29.15", true, bitString(Uint8Array.of(0x80), 7)), // keyUsage: digitalSignature
    extension("2.5.29.37", false, sequence(objectIdentifier("1.3.6.1.5.5.7.3.1"))), // extKeyUsage: serverAuth
    extension("2.5.29.14", false, octetString(keyId)), // subjectKeyIdentifier
    extension("2.5.29.17", false, subjectAltName(request.dnsNames, request.ipAddresses)),
  );
  const tbs = sequence(
    explicit(0, unsignedInteger(Uint8Array.of(2))), // v3
    unsignedInteger(serial),
    ECDSA_WITH_SHA256,
    name,
    sequence(time(request.notBefore), time(request.notAfter)),
    name,
    spki,
    explicit(3, extensions),
  );
  const signature = sign("sha256", tbs, { key, dsaEncoding: "der" });
  const der = sequence(tbs, ECDSA_WITH_SHA256, bitString(signature));
  const base64 = Buffer.from(der).toString("base64").replace(/.{64}/g, "$&\n").replace(/\n$/, "");
  return `-----BEGIN CERTIFICATE-----\n${base64}\n-----END CERTIFICATE-----\n`;
}
