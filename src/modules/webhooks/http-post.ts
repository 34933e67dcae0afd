/** What one POST to a receiver came to. */
export type PostResult = { ok: boolean; status: number | null; snippet: string | null; error: string | null };

const SNIPPET_BYTES = 500;

async function readSnippet(res: Response): Promise<string | null> {
  if (!res.body) return null;
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < SNIPPET_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } catch {
    // The status decides the outcome; a body cut short only shortens the snippet.
  } finally {
    void reader.cancel().catch(() => {});
  }
  const text = new TextDecoder().decode(Buffer.concat(chunks).subarray(0, SNIPPET_BYTES));
  return text || null;
}

/** Errors that mean no connection was made, so the next address of the host may be tried. */
const NOT_CONNECTED = new Set(["ECONNREFUSED", "ENETUNREACH", "EHOSTUNREACH", "EADDRNOTAVAIL", "ConnectionRefused"]);

type Route = { url: string; host?: string; tls?: { serverName: string } };

/**
 * The request to `url` over a connection to `address`: the URL names the address, Host
 * and the TLS server name (SNI and the certificate check) stay the URL's host, so TLS is
 * verified for the name exactly as without pinning.
 */
function pinnedRoute(url: URL, address: string): Route {
  const pinned = new URL(url);
  pinned.hostname = address.includes(":") ? `[${address}]` : address;
  return { url: pinned.href, host: url.host, tls: { serverName: url.hostname } };
}

/**
 * One POST: success is a 2xx within the timeout; redirects are not followed (a 3xx is a
 * failure). With `addresses` (what the URL policy checked) the connection goes to those
 * and no others, in order, the next tried only when one cannot be reached; without, to
 * the URL as it is. `cancel` stops it early (its endpoint was deleted): a request not yet
 * on the wire is never sent, one under way is cut off.
 */
export async function postWebhook(
  target: { url: string; addresses: readonly string[] },
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
  cancel: AbortSignal,
): Promise<PostResult> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = AbortSignal.any([timeout, cancel]);
  const url = new URL(target.url);
  const routes: Route[] = target.addresses.length ? target.addresses.map((a) => pinnedRoute(url, a)) : [{ url: url.href }];
  for (let i = 0; ; i++) {
    const route = routes[i]!;
    try {
      const res = await fetch(route.url, {
        method: "POST",
        body,
        headers: route.host ? { ...headers, host: route.host } : headers,
        tls: route.tls,
        signal,
        redirect: "manual",
      });
      const ok = res.status >= 200 && res.status < 300;
      return { ok, status: res.status, snippet: await readSnippet(res), error: ok ? null : `HTTP ${res.status}` };
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (i < routes.length - 1 && !signal.aborted && NOT_CONNECTED.has(String(code))) continue;
      const error = cancel.aborted
        ? "cancelled: the endpoint was deleted"
        : timeout.aborted
          ? `timed out after ${timeoutMs} ms`
          : err instanceof Error
            ? err.message
            : String(err);
      return { ok: false, status: null, snippet: null, error };
    }
  }
}
