// The portal's one way to the server: the real /v1 API, as the signed-in wearer. The session
// cookie (HttpOnly) identifies; every call names the portal (X-Parley-Portal) so the portal's
// cookie is the one used, and every state-changing call carries the session's CSRF token.

/** An error answer of the API, as its body says it. */
export class ApiError extends Error {
  constructor(status, error = {}) {
    super(error.message ?? `HTTP ${status}`);
    this.name = "ApiError";
    this.status = status;
    this.code = error.code ?? "http_error";
    this.param = error.param ?? null;
  }
}

let csrfToken = null;

/** Set by the shell from its session. */
export function setCsrfToken(token) {
  csrfToken = token;
}

async function exchange(url, { method = "GET", body, query } = {}) {
  const target = new URL(url, location.origin);
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null && v !== "") target.searchParams.set(k, String(v));
  const headers = { "x-parley-portal": "1" };
  if (method !== "GET" && csrfToken) headers["x-csrf-token"] = csrfToken;
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(target, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: "same-origin" });
  if (res.status === 204) return null;
  const data = await res.json().catch(() => null);
  if (!res.ok) {
    const error = new ApiError(res.status, data?.error);
    // The shell shows the signed-out page when the session has ended.
    if (res.status === 401 && !url.startsWith("/me/api/invite")) dispatchEvent(new CustomEvent("portal:unauthorized"));
    throw error;
  }
  return data;
}

/** Calls the /v1 API: `api("/recordings", { query: { limit: 20 } })`. */
export const api = (path, options) => exchange(`/v1${path}`, options);

/** Calls the portal's session API (/me/api). */
export const portalApi = (path, options) => exchange(`/me/api${path}`, options);

/** A /v1 URL the browser fetches by itself (an <audio> src, a download): the cookie goes with it. */
export function apiUrl(path, query) {
  const target = new URL(`/v1${path}`, location.origin);
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null) target.searchParams.set(k, String(v));
  return target.pathname + target.search;
}

/** The link that opens one of the wearer's recordings at an offset, playing from there (citations, search hits). */
export function momentLink(recordingId, ms) {
  return `#/r/${encodeURIComponent(recordingId)}?t=${Math.max(0, Math.round(ms))}&play=1`;
}
