/** A minimal JSON client for the Parley API, as a device or an integrator would write it. */
export type Reply<T = any> = { status: number; body: T; headers: Headers };

export class ApiClient {
  constructor(readonly baseUrl: string) {}

  /** One request; 429 answers are retried after Retry-After (up to 5 times), like a well-behaved client. */
  async call<T = any>(method: string, path: string, token: string | null, body?: unknown, extra: Record<string, string> = {}): Promise<Reply<T>> {
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = { ...extra };
      if (token) headers.authorization = `Bearer ${token}`;
      if (body !== undefined) headers["content-type"] = "application/json";
      const res = await fetch(`${this.baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      if (res.status === 429 && attempt < 5) {
        await Bun.sleep(Number(res.headers.get("retry-after") ?? 1) * 1000);
        continue;
      }
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {}
      return { status: res.status, body: parsed as T, headers: res.headers };
    }
  }

  /** Like call(), but any non-2xx answer is an error naming the request. */
  async must<T = any>(method: string, path: string, token: string | null, body?: unknown): Promise<T> {
    const r = await this.call<T>(method, path, token, body);
    if (r.status >= 300) throw new Error(`${method} ${path} answered ${r.status}: ${JSON.stringify(r.body)}`);
    return r.body;
  }
}
