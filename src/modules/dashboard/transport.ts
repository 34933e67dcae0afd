import type { Config } from "../../config";
import { sendsHsts } from "../../http/before-routing";
import { plainHttpWarning, readConfiguredCertificate } from "../../tls/certificate-source";

/**
 * The System page's "is it encrypted on the wire" (decision 104): HTTPS or plain HTTP, the
 * certificate's source, SHA-256 fingerprint (as `parley doctor` prints it, for pinning) and
 * dates, HSTS, and the warning `doctor` and the log give when the server listens beyond
 * loopback without TLS. Public facts only: no key material. The certificate is read as
 * doctor reads it (the files, or the data dir's auto one), so a replaced file shows here
 * once the server has reloaded it.
 */
export function transportReport(config: Pick<Config, "tls" | "dataDir" | "host" | "port" | "publicUrl">, now: Date) {
  let certificate = null;
  let certificateError: string | null = null;
  try {
    const pair = readConfiguredCertificate(config);
    if (pair) {
      certificate = {
        fingerprint_sha256: pair.fingerprint256,
        spki_sha256: pair.spkiSha256,
        valid_from: pair.validFrom.toISOString(),
        valid_to: pair.validTo.toISOString(),
        expired: pair.validTo <= now,
        names: pair.names,
      };
    }
  } catch (err) {
    certificateError = (err as Error).message;
  }
  return {
    https: config.tls !== null,
    /** files: the operator's PARLEY_TLS_CERT_FILE; auto: self-signed, made by this server; null: plain HTTP. */
    certificate_source: config.tls?.mode ?? null,
    certificate_file: config.tls?.mode === "files" ? config.tls.certFile : null,
    certificate,
    certificate_error: certificateError,
    hsts: sendsHsts(config),
    listen: `${config.host}:${config.port}`,
    public_url: config.publicUrl,
    warning: plainHttpWarning(config),
  };
}
