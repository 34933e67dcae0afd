// The TLS settings (decision 104) and what `parley doctor` says of them: the fingerprints a
// device pins, the certificate's validity, and the warning for plain HTTP beyond loopback.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { tlsChecks } from "../../src/cli/doctor-tls";
import { ConfigError, loadConfig } from "../../src/config";
import { applianceNames, ensureAutoCertificate } from "../../src/tls/auto-certificate";
import { readCertificateFiles } from "../../src/tls/certificate";
import { plainHttpWarning } from "../../src/tls/certificate-source";
import { makeTempDir } from "../helpers";
import { makeTestCa } from "../support/https-receiver";

describe("configuration", () => {
  test("certificate files, or auto, or neither; upload URLs default to https under TLS", () => {
    expect(loadConfig({}).tls).toBeNull();
    expect(loadConfig({}).publicUrl).toBe("http://127.0.0.1:8080");
    const auto = loadConfig({ PARLEY_TLS: "auto", PARLEY_PORT: "8443" });
    expect(auto.tls).toEqual({ mode: "auto" });
    expect(auto.publicUrl).toBe("https://127.0.0.1:8443");
    expect(loadConfig({ PARLEY_TLS_CERT_FILE: "/c.pem", PARLEY_TLS_KEY_FILE: "/k.pem" }).tls).toEqual({ mode: "files", certFile: "/c.pem", keyFile: "/k.pem" });
    expect(loadConfig({ PARLEY_TLS: "off" }).tls).toBeNull();
    // An explicit public URL is the operator's (a proxy in front may answer on another name).
    expect(loadConfig({ PARLEY_TLS: "auto", PARLEY_PUBLIC_URL: "https://box.clinic.example/" }).publicUrl).toBe("https://box.clinic.example");
  });

  test("half a pair, or both ways at once, is refused naming the variable", () => {
    expect(() => loadConfig({ PARLEY_TLS_CERT_FILE: "/c.pem" })).toThrow(/PARLEY_TLS_KEY_FILE: required with PARLEY_TLS_CERT_FILE/);
    expect(() => loadConfig({ PARLEY_TLS_KEY_FILE: "/k.pem" })).toThrow(/PARLEY_TLS_CERT_FILE: required with PARLEY_TLS_KEY_FILE/);
    expect(() => loadConfig({ PARLEY_TLS: "auto", PARLEY_TLS_CERT_FILE: "/c.pem", PARLEY_TLS_KEY_FILE: "/k.pem" })).toThrow(ConfigError);
    expect(() => loadConfig({ PARLEY_TLS: "on" })).toThrow(/PARLEY_TLS/);
  });
});

describe("plain HTTP beyond loopback", () => {
  test("warned of on every address but loopback, never under TLS", () => {
    for (const host of ["127.0.0.1", "127.0.1.1", "localhost", "::1", "[::1]"]) expect(plainHttpWarning({ host, tls: null })).toBeNull();
    for (const host of ["0.0.0.0", "::", "192.168.1.20", "clinic-box"])
      expect(plainHttpWarning({ host, tls: null })).toContain(`PARLEY_HOST=${host} listens beyond loopback on plain HTTP`);
    expect(plainHttpWarning({ host: "0.0.0.0", tls: { mode: "auto" } })).toBeNull();
  });

  test("doctor: a warning on 0.0.0.0 (not a failure: a proxy may be in front), plain ok on loopback", () => {
    const [wide] = tlsChecks(loadConfig({ PARLEY_HOST: "0.0.0.0" }), new Date());
    expect(wide).toMatchObject({ check: "tls", ok: true, warning: true });
    expect(wide!.detail).toContain("PARLEY_TLS=auto");
    expect(tlsChecks(loadConfig({}), new Date())).toEqual([{ check: "tls", ok: true, detail: expect.stringContaining("off: plain HTTP on loopback only") }]);
  });
});

describe("doctor on a certificate", () => {
  test("auto: says none is made yet, then prints the fingerprint and SPKI pin of the one serve made", () => {
    const dataDir = makeTempDir();
    const config = loadConfig({ PARLEY_TLS: "auto", PARLEY_DATA_DIR: dataDir });
    expect(tlsChecks(config, new Date())[0]!.detail).toContain("no certificate yet");
    const { pair } = ensureAutoCertificate(dataDir, applianceNames(config.host, config.publicUrl), new Date());
    const checks = tlsChecks(config, new Date());
    expect(checks.every((c) => c.ok && !c.warning)).toBe(true);
    expect(checks.find((c) => c.check === "tls pin")!.detail).toBe(`SHA-256 fingerprint ${pair.fingerprint256}; SPKI pin sha256/${pair.spkiSha256}`);
    expect(checks[0]!.detail).toContain("auto: self-signed");
  });

  test("files: expired fails, near its end warns, unreadable fails naming the file; an http public URL is a warning", () => {
    const ca = makeTestCa(); // valid for 2 days
    const pair = readCertificateFiles(ca.cert, ca.key);
    const config = loadConfig({ PARLEY_TLS_CERT_FILE: ca.cert, PARLEY_TLS_KEY_FILE: ca.key });
    expect(tlsChecks(config, new Date())[0]).toMatchObject({ ok: true, warning: true, detail: expect.stringContaining("renew it") });
    expect(tlsChecks(config, new Date(pair.validTo.getTime() + 1000))[0]).toMatchObject({ ok: false, detail: expect.stringContaining("EXPIRED") });
    const missing = loadConfig({ PARLEY_TLS_CERT_FILE: join(ca.dir, "gone.pem"), PARLEY_TLS_KEY_FILE: ca.key });
    expect(tlsChecks(missing, new Date())).toEqual([{ check: "tls", ok: false, detail: expect.stringContaining("gone.pem (ENOENT)") }]);
    const plainUrl = loadConfig({ PARLEY_TLS_CERT_FILE: ca.cert, PARLEY_TLS_KEY_FILE: ca.key, PARLEY_PUBLIC_URL: "http://box:8080" });
    expect(tlsChecks(plainUrl, new Date()).find((c) => c.check === "tls public url")).toMatchObject({ ok: true, warning: true });
  });
});
