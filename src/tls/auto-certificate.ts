import { generateKeyPairSync, createPrivateKey } from "node:crypto";
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from "node:fs";
import { hostname, networkInterfaces } from "node:os";
import { isIP } from "node:net";
import { join } from "node:path";
import { CertificateError, certificatePair, type CertificatePair } from "./certificate";
import { makeSelfSignedCertificate } from "./self-signed";

const DAY_MS = 24 * 3600 * 1000;
/** Apple's platforms refuse server certificates valid for longer, even ones the user trusts by hand. */
const VALID_DAYS = 825;
/** A certificate this close to its end is replaced at start (or SIGHUP), for the same key. */
export const RENEW_DAYS = 30;

/** Where PARLEY_TLS=auto keeps its certificate and key: in the data dir, so a backup carries them (and so the pin). */
export function autoCertificatePaths(dataDir: string) {
  const dir = join(dataDir, "tls");
  return { dir, cert: join(dir, "self-signed.crt"), key: join(dir, "self-signed.key") };
}

/** Where this appliance may be reached: loopback, its host name, its LAN addresses, and the host of its public URL. */
export function applianceNames(host: string, publicUrl: string): { dnsNames: string[]; ipAddresses: string[] } {
  const dns = new Set(["localhost"]);
  const ips = new Set(["127.0.0.1", "::1"]);
  const add = (name: string) => {
    const bare = name.replace(/^\[|\]$/g, "");
    if (isIP(bare)) ips.add(bare);
    else if (/^[a-z0-9.-]+$/i.test(bare)) dns.add(bare.toLowerCase());
  };
  add(hostname());
  add(new URL(publicUrl).hostname);
  if (host !== "0.0.0.0" && host !== "::") add(host);
  for (const addresses of Object.values(networkInterfaces())) {
    // Link-local addresses need a zone to be used, and change with the interface: no use in a certificate.
    for (const a of addresses ?? []) if (!a.internal && !a.address.toLowerCase().startsWith("fe80:")) ips.add(a.address);
  }
  return { dnsNames: [...dns], ipAddresses: [...ips] };
}

/** The certificate PARLEY_TLS=auto made, or null when none is made yet; for `parley doctor`, which makes none. */
export function readAutoCertificate(dataDir: string): CertificatePair | null {
  const paths = autoCertificatePaths(dataDir);
  if (!existsSync(paths.cert) || !existsSync(paths.key)) return null;
  return certificatePair(readFileSync(paths.cert, "utf8"), readFileSync(paths.key, "utf8"), paths.cert);
}

/** A new file, 0600, on disk before this returns: a key lost to a power cut after it was served would break every pin. */
function writeDurably(path: string, text: string): void {
  const fd = openSync(path, "wx", 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function readKey(path: string): string {
  const pem = readFileSync(path, "utf8");
  try {
    createPrivateKey(pem);
  } catch {
    // Never replaced silently: every device pinned to it would stop trusting this server.
    throw new CertificateError(`${path} is not a private key; remove it (and its certificate) to make a new one, then re-pin the devices`);
  }
  return pem;
}

/**
 * PARLEY_TLS=auto: the self-signed certificate in the data dir, made on first start. The
 * key (EC P-256, 0600) is made once and kept; the certificate is made again for the same
 * key when it is missing, unreadable, or within RENEW_DAYS of its end, so the SPKI pin
 * stays while the certificate's fingerprint changes. `made` says what happened.
 */
export function ensureAutoCertificate(
  dataDir: string,
  names: { dnsNames: string[]; ipAddresses: string[] },
  now: Date,
): { pair: CertificatePair; made: "key and certificate" | "certificate" | null } {
  const paths = autoCertificatePaths(dataDir);
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  let madeKey = false;
  if (!existsSync(paths.key)) {
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    writeDurably(paths.key, privateKey.export({ type: "pkcs8", format: "pem" }) as string);
    madeKey = true;
  }
  const key = readKey(paths.key);
  if (!madeKey && existsSync(paths.cert)) {
    try {
      const pair = certificatePair(readFileSync(paths.cert, "utf8"), key, paths.cert);
      if (pair.validTo.getTime() - now.getTime() > RENEW_DAYS * DAY_MS) return { pair, made: null };
    } catch (err) {
      if (!(err instanceof CertificateError)) throw err;
    }
  }
  // A device whose clock is a little behind still accepts it; the span is counted from the
  // backdated start, as a client counts it, so it is 825 days and not 826.
  const notBefore = new Date(now.getTime() - DAY_MS);
  const cert = makeSelfSignedCertificate(createPrivateKey(key), {
    commonName: `Parley on ${hostname()}`.slice(0, 64),
    ...names,
    notBefore,
    notAfter: new Date(notBefore.getTime() + VALID_DAYS * DAY_MS),
  });
  const partial = `${paths.cert}.partial`;
  writeFileSync(partial, cert, { mode: 0o600 });
  renameSync(partial, paths.cert);
  return { pair: certificatePair(cert, key, paths.cert), made: madeKey ? "key and certificate" : "certificate" };
}
