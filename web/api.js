// The dashboard's one way to the server. /v1 calls act as the signed-in administrator in the
// project and mode the session selected, with exactly a secret key's powers (decision 094):
// the session cookie (HttpOnly, so never readable here) identifies, and every state-changing
// request carries the session's CSRF token.

/**
 * An error answer of the API, as its body says it: pages show `message` beside the field
 * `param` names. `location` is the answer's Location header, where it has one (a failed Ask
 * names the session that kept the question).
 */
export class ApiError extends Error {
  constructor(status, error = {}, location = null) {
    super(error.message ?? `HTTP ${status}`);
    this.name = "ApiError";
    this.status = status;
    this.code = error.code ?? "http_error";
    this.param = error.param ?? null;
    this.requestId = error.request_id ?? null;
    this.location = location;
  }
}

let csrfToken = null;

/** Set by the shell from its session; sent with every state-changing request. */
export function setCsrfToken(token) {
  csrfToken = token;
}

const RAW_BODY = (b) => b instanceof Blob || b instanceof ArrayBuffer || b instanceof FormData || ArrayBuffer.isView(b);

/** The answer's JSON (null for 204) and its headers; an error answer throws ApiError. */
async function exchange(url, { method = "GET", body, query, headers = {} } = {}) {
  const target = new URL(url, location.origin);
  if (query) {
    const entries = query instanceof URLSearchParams ? query.entries() : Object.entries(query);
    for (const [k, v] of entries) if (v !== undefined && v !== null && v !== "") target.searchParams.set(k, String(v));
  }
  const sent = { ...headers };
  if (method !== "GET" && method !== "HEAD" && csrfToken) sent["x-csrf-token"] = csrfToken;
  let payload;
  if (body !== undefined) {
    if (RAW_BODY(body)) payload = body;
    else {
      payload = JSON.stringify(body);
      sent["content-type"] = "application/json";
    }
  }
  const res = await fetch(target, { method, headers: sent, body: payload, credentials: "same-origin" });
  if (res.status === 204) return { data: null, headers: res.headers };
  const data = await res.json().catch(() => null);
  if (!res.ok) {
    const error = new ApiError(res.status, data?.error, res.headers.get("location"));
    // The shell shows the sign-in form again when the session has ended.
    if (res.status === 401) dispatchEvent(new CustomEvent("parley:unauthorized", { detail: error }));
    throw error;
  }
  return { data, headers: res.headers };
}

const request = async (url, options) => (await exchange(url, options)).data;

/** Calls the /v1 API: `api("/devices", { query: { limit: 20 } })`; returns the parsed JSON (null for 204). */
export function api(path, options) {
  return request(`/v1${path}`, options);
}

/** Like api(), for a page that also reads the answer's headers: `{ data, headers }`. */
export function apiExchange(path, options) {
  return exchange(`/v1${path}`, options);
}

/** Calls the dashboard's own session API (/dashboard/api: session, setup, keys, system). */
export function adminApi(path, options) {
  return request(`/dashboard/api${path}`, options);
}

/** A /v1 URL the browser fetches by itself (an <audio> src, a download link): the session cookie goes with it, no key in the URL. */
export function apiUrl(path, query) {
  const target = new URL(`/v1${path}`, location.origin);
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null) target.searchParams.set(k, String(v));
  return target.pathname + target.search;
}
