// The self-signed certificate PARLEY_TLS=auto makes (decision 104), checked by node:crypto and
// by openssl, and the rules of making it once, reusing it, and renewing it for the same key.
import { describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { generateKeyPairSync, X509Certificate } from "node:crypto";
import { readFileSync, statSync, writeFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { autoCertificatePaths, ensureAutoCertificate } from "../../src/tls/auto-certificate";
import { CertificateError, certificatePair, readCertificateFiles } from "../../src/tls/certificate";
import { addressBytes, makeSelfSignedCertificate } from "../../src/tls/self-signed";
import { makeTempDir } from "../helpers";
import { makeTestCa } from "../support/https-receiver";

const DAY = 24 * 3600 * 1000;
const names = { dnsNames: ["localhost", "clinic-box.local"], ipAddresses: ["127.0.0.1", "::1", "192.168.1.20"] };
const opensslText = (pem: string) => execFileSync("openssl", ["x509", "-noout", "-text"], { input: pem }).toString();

describe("the self-signed certificate", () => {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const notBefore = new Date("2026-01-01T00:00:00Z");
  const pem = makeSelfSignedCertificate(privateKey, { commonName: "Parley on box", ...names, notBefore, notAfter: new Date("2051-06-01T00:00:00Z") });
  const x509 = new X509Certificate(pem);

  test("is signed by its own key, belongs to it, is no CA, and holds the names and addresses", () => {
    expect(x509.verify(x509.publicKey)).toBe(true);
    expect(x509.checkPrivateKey(privateKey)).toBe(true);
    expect(x509.ca).toBe(false);
    expect(x509.subject).toBe("CN=Parley on box");
    expect(x509.subjectAltName).toBe("DNS:localhost, DNS:clinic-box.local, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, IP Address:192.168.1.20");
    // UTCTime before 2050, GeneralizedTime from 2050 on
    expect(new Date(x509.validFrom).toISOString()).toBe(notBefore.toISOString());
    expect(new Date(x509.validTo).toISOString()).toBe("2051-06-01T00:00:00.000Z");
  });

  test("openssl reads the same: a v3 server certificate that verifies against itself", () => {
    const text = opensslText(pem);
    expect(text).toContain("Version: 3 (0x2)");
    expect(text).toContain("Signature Algorithm: ecdsa-with-SHA256");
    expect(text).toMatch(/Basic Constraints: critical\s+CA:FALSE/);
    expect(text).toMatch(/Key Usage: critical\s+Digital Signature/);
    expect(text).toMatch(/Extended Key Usage:\s+TLS Web Server Authentication/);
    const dir = makeTempDir();
    writeFileSync(join(dir, "c.pem"), pem);
    // Only a certificate whose times are now valid verifies: check against its own validity.
    expect(
      execFileSync("openssl", ["verify", "-attime", String(notBefore.getTime() / 1000 + 60), "-CAfile", join(dir, "c.pem"), join(dir, "c.pem")]).toString(),
    ).toContain(": OK");
  });

  test("addresses are encoded as 4 or 16 bytes, IPv6 shorthand expanded", () => {
    expect([...addressBytes("10.0.0.1")!]).toEqual([10, 0, 0, 1]);
    expect(Buffer.from(addressBytes("fd00::1:2")!).toString("hex")).toBe("fd000000000000000000000000010002");
    expect(Buffer.from(addressBytes("::ffff:10.0.0.1")!).toString("hex")).toBe("00000000000000000000ffff0a000001");
    expect(Buffer.from(addressBytes("2001:db8:0:0:1:0:0:1")!).toString("hex")).toBe("20010db8000000000001000000000001");
    expect(addressBytes("clinic.local")).toBeNull();
  });
});

describe("PARLEY_TLS=auto in the data dir", () => {
  const now = new Date();

  test("made once, private, then reused as it is", () => {
    const dataDir = makeTempDir();
    const first = ensureAutoCertificate(dataDir, names, now);
    expect(first.made).toBe("key and certificate");
    const paths = autoCertificatePaths(dataDir);
    expect(statSync(paths.key).mode & 0o777).toBe(0o600);
    expect(statSync(paths.dir).mode & 0o777).toBe(0o700);
    expect(first.pair.fingerprint256).toBe(new X509Certificate(readFileSync(paths.cert)).fingerprint256);
    const again = ensureAutoCertificate(dataDir, names, new Date(now.getTime() + 100 * DAY));
    expect(again.made).toBeNull();
    expect(again.pair.fingerprint256).toBe(first.pair.fingerprint256);
  });

  test("near its end, or lost, it is made again for the same key: the SPKI pin stays", () => {
    const dataDir = makeTempDir();
    const first = ensureAutoCertificate(dataDir, names, now).pair;
    const late = new Date(first.validTo.getTime() - 10 * DAY);
    const renewed = ensureAutoCertificate(dataDir, names, late);
    expect(renewed.made).toBe("certificate");
    expect(renewed.pair.fingerprint256).not.toBe(first.fingerprint256);
    expect(renewed.pair.spkiSha256).toBe(first.spkiSha256);
    expect(renewed.pair.validTo.getTime()).toBeGreaterThan(first.validTo.getTime());

    rmSync(autoCertificatePaths(dataDir).cert);
    const remade = ensureAutoCertificate(dataDir, names, now);
    expect(remade.made).toBe("certificate");
    expect(remade.pair.spkiSha256).toBe(first.spkiSha256);
  });

  test("valid 825 days from its backdated start, no more: Apple's platforms refuse a server certificate valid longer", () => {
    const { pair } = ensureAutoCertificate(makeTempDir(), names, now);
    expect(pair.validTo.getTime() - pair.validFrom.getTime()).toBe(825 * DAY);
    // Backdated a day for a device whose clock is behind, to the second (X.509 times hold no milliseconds).
    expect(Math.floor(now.getTime() / 1000) - pair.validFrom.getTime() / 1000).toBe(24 * 3600);
  });

  test("a damaged key is never replaced silently: devices pinned to it would stop trusting the server", () => {
    const dataDir = makeTempDir();
    ensureAutoCertificate(dataDir, names, now);
    writeFileSync(autoCertificatePaths(dataDir).key, "not a key");
    expect(() => ensureAutoCertificate(dataDir, names, now)).toThrow(/is not a private key; remove it/);
  });
});

describe("the operator's certificate files", () => {
  const ca = makeTestCa();

  test("read and described: the fingerprint openssl prints", () => {
    const pair = readCertificateFiles(ca.cert, ca.key);
    const openssl = execFileSync("openssl", ["x509", "-in", ca.cert, "-noout", "-fingerprint", "-sha256"]).toString();
    expect(openssl.trim().split("=")[1]).toBe(pair.fingerprint256);
    expect(pair.names).toContain("IP Address:127.0.0.1");
  });

  test("a key of another certificate, a missing file or no PEM at all is a CertificateError naming it", () => {
    const other = makeTestCa();
    expect(() => readCertificateFiles(ca.cert, other.key)).toThrow(/does not belong to/);
    expect(() => readCertificateFiles(join(ca.dir, "nope.pem"), ca.key)).toThrow(/cannot read the certificate .*nope\.pem \(ENOENT\)/);
    expect(() => certificatePair("garbage", readFileSync(ca.key, "utf8"))).toThrow(CertificateError);
    expect(() => certificatePair(readFileSync(ca.cert, "utf8"), "garbage")).toThrow(/not a PEM private key/);
  });
});
