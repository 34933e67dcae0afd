/**
 * Headers of every response that carries stored bytes (recording audio, export archives,
 * firmware images): bytes a client uploaded must never run as a page on the dashboard's
 * origin (decision 113). The type is one the server chose (what the decoder identified, or
 * application/octet-stream), never one a client declared; the browser saves rather than
 * renders (an <audio src> still plays: media elements ignore Content-Disposition); nosniff
 * stops it guessing HTML; and a sandbox CSP keeps scripts off should it render anyway.
 */
export function downloadHeaders(contentType: string, filename: string): Record<string, string> {
  return {
    "content-type": contentType,
    "content-disposition": contentDisposition(filename),
    "x-content-type-options": "nosniff",
    "content-security-policy": "sandbox",
  };
}

/** `attachment` with the name as plain ASCII (quotes, backslashes and controls replaced) and exactly as UTF-8 (RFC 6266 filename*). */
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}
