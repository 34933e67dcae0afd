import { createHash, createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";

/** A certificate and its private key, checked to belong together, as Bun.serve takes them. */
export type CertificatePair = {
  /** PEM: the server's certificate first, then any intermediates. */
  cert: string;
  key: string;
  /** SHA-256 of the certificate, colon-separated hex: what `openssl x509 -fingerprint -sha256` and browsers show. */
  fingerprint256: string;
  /** SHA-256 of the public key (SubjectPublicKeyInfo), base64: the pin Android's and OkHttp's pinning take ("sha256/..."); it survives a renewal for the same key. */
  spkiSha256: string;
  validFrom: Date;
  validTo: Date;
  /** The names and addresses it is valid for, as a line of text. */
  names: string;
};

/** A certificate or key that cannot be served, with what is wrong in words for the operator. */
export class CertificateError extends Error {}

/** Checks that `cert` (PEM) parses, that `key` is its private key, and describes it. */
export function certificatePair(cert: string, key: string, source = "the certificate"): CertificatePair {
  let x509: X509Certificate;
  let privateKey: KeyObject;
  try {
    x509 = new X509Certificate(cert);
  } catch (err) {
    throw new CertificateError(`${source} is not a PEM certificate (${(err as Error).message})`);
  }
  try {
    privateKey = createPrivateKey(key);
  } catch (err) {
    throw new CertificateError(`the private key for ${source} is not a PEM private key without a passphrase (${(err as Error).message})`);
  }
  if (!x509.checkPrivateKey(privateKey))
    throw new CertificateError(`the private key does not belong to ${source} (a renewal half written, or a key from another certificate)`);
  const spki = x509.publicKey.export({ type: "spki", format: "der" });
  return {
    cert,
    key,
    fingerprint256: x509.fingerprint256,
    spkiSha256: createHash("sha256").update(spki).digest("base64"),
    validFrom: new Date(x509.validFrom),
    validTo: new Date(x509.validTo),
    names: x509.subjectAltName ?? x509.subject,
  };
}

/** The operator's own certificate and key files (PARLEY_TLS_CERT_FILE / PARLEY_TLS_KEY_FILE), read and checked. */
export function readCertificateFiles(certFile: string, keyFile: string): CertificatePair {
  const read = (path: string, what: string) => {
    try {
      return readFileSync(path, "utf8");
    } catch (err) {
      throw new CertificateError(`cannot read the ${what} ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  };
  return certificatePair(read(certFile, "certificate"), read(keyFile, "private key"), certFile);
}

/** Where a server's certificate comes from; `load` reads it anew each time (and for PARLEY_TLS=auto makes or renews it). */
export type CertificateSource = { load(): CertificatePair; watchedFiles: string[] };
