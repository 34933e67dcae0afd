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

/**
 * One POST: success is a 2xx within the timeout; redirects are not followed (a 3xx is a
 * failure). `cancel` stops it early (its endpoint was deleted): a request not yet on the
 * wire is never sent, one under way is cut off.
 */
export async function postWebhook(url: string, body: string, headers: Record<string, string>, timeoutMs: number, cancel: AbortSignal): Promise<PostResult> {
  const timeout = AbortSignal.timeout(timeoutMs);
  try {
    const res = await fetch(url, { method: "POST", body, headers, signal: AbortSignal.any([timeout, cancel]), redirect: "manual" });
    const ok = res.status >= 200 && res.status < 300;
    return { ok, status: res.status, snippet: await readSnippet(res), error: ok ? null : `HTTP ${res.status}` };
  } catch (err) {
    const error = cancel.aborted ? "cancelled: the endpoint was deleted" : timeout.aborted ? `timed out after ${timeoutMs} ms` : err instanceof Error ? err.message : String(err);
    return { ok: false, status: null, snippet: null, error };
  }
}
