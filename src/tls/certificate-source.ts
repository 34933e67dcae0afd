import type { Config } from "../config";
import type { Logger } from "../log";
import { applianceNames, ensureAutoCertificate, readAutoCertificate } from "./auto-certificate";
import { type CertificatePair, type CertificateSource, readCertificateFiles } from "./certificate";

/** The certificate the configuration asks for (decision 104), or null for plain HTTP. */
export function certificateSource(config: Config, now: () => Date, log: Logger): CertificateSource | null {
  const tls = config.tls;
  if (!tls) return null;
  if (tls.mode === "files") return { load: () => readCertificateFiles(tls.certFile, tls.keyFile), watchedFiles: [tls.certFile, tls.keyFile] };
  const names = applianceNames(config.host, config.publicUrl);
  return {
    load() {
      const { pair, made } = ensureAutoCertificate(config.dataDir, names, now());
      if (made)
        log.info(`made a self-signed TLS ${made} in the data dir`, {
          fingerprint_sha256: pair.fingerprint256,
          spki_sha256: pair.spkiSha256,
          valid_to: pair.validTo.toISOString(),
          names: pair.names,
        });
      return pair;
    },
    watchedFiles: [],
  };
}

/**
 * The certificate the configuration names, as `serve` made or found it: the operator's files,
 * or PARLEY_TLS=auto's in the data dir (null before the first start made it). Makes none;
 * throws CertificateError when it cannot be read. For `parley doctor` and the System page.
 */
export function readConfiguredCertificate(config: Pick<Config, "tls" | "dataDir">): CertificatePair | null {
  const tls = config.tls;
  if (!tls) return null;
  return tls.mode === "files" ? readCertificateFiles(tls.certFile, tls.keyFile) : readAutoCertificate(config.dataDir);
}

/** Why listening on `host` without TLS exposes patient data, or null when it does not (loopback, or TLS on). */
export function plainHttpWarning(config: Pick<Config, "host" | "tls">): string | null {
  if (config.tls || isLoopback(config.host)) return null;
  return `PARLEY_HOST=${config.host} listens beyond loopback on plain HTTP: audio, transcripts and API keys cross the network unencrypted. Set PARLEY_TLS=auto (or PARLEY_TLS_CERT_FILE and PARLEY_TLS_KEY_FILE), or keep PARLEY_HOST=127.0.0.1 behind a TLS reverse proxy`;
}

function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^(::ffff:)?127\.\d+\.\d+\.\d+$/.test(bare);
}
