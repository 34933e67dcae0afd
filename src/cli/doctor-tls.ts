import type { Config } from "../config";
import { runningCli } from "../runtime/cli-name";
import { RENEW_DAYS } from "../tls/auto-certificate";
import type { CertificatePair } from "../tls/certificate";
import { plainHttpWarning, readConfiguredCertificate } from "../tls/certificate-source";
import type { Check } from "./doctor";

const DAY_MS = 24 * 3600 * 1000;

function certificateChecks(config: Config, mode: "files" | "auto", pair: CertificatePair, now: Date): Check[] {
  const days = Math.floor((pair.validTo.getTime() - now.getTime()) / DAY_MS);
  const until = `valid until ${pair.validTo.toISOString().slice(0, 10)}`;
  const source = mode === "auto" ? "auto: self-signed, made by this server" : `files: ${config.tls?.mode === "files" ? config.tls.certFile : ""}`;
  let validity: Check = { check: "tls", ok: true, detail: `${source}; ${until} (${days} days); for ${pair.names}` };
  if (pair.validTo <= now)
    validity = {
      check: "tls",
      ok: false,
      detail: `${source}; EXPIRED on ${pair.validTo.toISOString()}: ${mode === "auto" ? "restart parley (or send it SIGHUP) to make a new one for the same key" : "renew it; parley reloads the files on change or SIGHUP"}`,
    };
  else if (days < RENEW_DAYS) {
    const fix =
      mode === "auto"
        ? "it is renewed for the same key (the SPKI pin stays) at the next start or SIGHUP"
        : "renew it; parley reloads the files on change or SIGHUP";
    validity = { check: "tls", ok: true, warning: true, detail: `${source}; ${until}, in ${days} days: ${fix}` };
  }
  // What a device pins: the certificate's fingerprint, or the public key's, which outlives a renewal for the same key.
  const pin: Check = { check: "tls pin", ok: true, detail: `SHA-256 fingerprint ${pair.fingerprint256}; SPKI pin sha256/${pair.spkiSha256}` };
  const checks = [validity, pin];
  if (new URL(config.publicUrl).protocol === "http:") {
    checks.push({
      check: "tls public url",
      ok: true,
      warning: true,
      detail: `PARLEY_PUBLIC_URL is ${config.publicUrl}: upload URLs handed to devices are plain HTTP although this server serves HTTPS`,
    });
  }
  return checks;
}

/**
 * `parley doctor` on transmission security (decision 104): whether HTTPS is served, the
 * certificate's validity and the fingerprints a device pins, and a warning when the server
 * listens beyond loopback on plain HTTP. Makes no certificate: `serve` does.
 */
export function tlsChecks(config: Config, now: Date, cli = runningCli()): Check[] {
  if (!config.tls) {
    const exposed = plainHttpWarning(config);
    return [
      exposed
        ? { check: "tls", ok: true, warning: true, detail: exposed }
        : { check: "tls", ok: true, detail: "off: plain HTTP on loopback only (a TLS reverse proxy in front may serve HTTPS)" },
    ];
  }
  const mode = config.tls.mode;
  let pair: CertificatePair | null;
  try {
    pair = readConfiguredCertificate(config);
  } catch (err) {
    return [{ check: "tls", ok: false, detail: `${mode}: ${(err as Error).message}` }];
  }
  if (!pair)
    return [
      {
        check: "tls",
        ok: true,
        detail: `auto: no certificate yet; \`${cli} serve\` makes a self-signed one in the data dir on first start (then this shows its fingerprint)`,
      },
    ];
  return certificateChecks(config, mode, pair, now);
}
