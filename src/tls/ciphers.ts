/**
 * The TLS 1.2 suites the server offers: ECDHE (forward secrecy) with an AEAD cipher only, so
 * no CBC suite (Lucky13, padding oracles) and nothing TLS 1.0/1.1 could negotiate. ECDSA first
 * for PARLEY_TLS=auto's P-256 key, RSA for an operator's RSA certificate. TLS 1.3 suites are
 * all AEAD and are not set by this list. Mozilla's "intermediate" order: AES-GCM first (in
 * hardware on every x86 and ARMv8 board), ChaCha20 for clients without it.
 */
const AEAD_SUITES = [
  "ECDHE-ECDSA-AES128-GCM-SHA256",
  "ECDHE-RSA-AES128-GCM-SHA256",
  "ECDHE-ECDSA-AES256-GCM-SHA384",
  "ECDHE-RSA-AES256-GCM-SHA384",
  "ECDHE-ECDSA-CHACHA20-POLY1305",
  "ECDHE-RSA-CHACHA20-POLY1305",
];

/** OpenSSL's SSL_OP_CIPHER_SERVER_PREFERENCE: the server's order wins, so a client listing a weaker suite first does not get it. */
const SERVER_CIPHER_ORDER = 0x00400000;

/** What Bun.serve's `tls` takes besides the certificate: the suites above, in the server's order. */
export const serverCipherOptions = { ciphers: AEAD_SUITES.join(":"), secureOptions: SERVER_CIPHER_ORDER } as const;
