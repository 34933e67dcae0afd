import { cookieOf, isHttps } from "../../http/sessions";
import { FLOW_TTL_MS, type RelyingParty, SsoRefusal } from "./relying-party";

/**
 * The cookie that ties a started sign-in to the browser that started it (login CSRF): its
 * flow id, nothing else. One per sign-in page (the dashboard's, the portal's), each scoped to
 * its own SSO routes, so one never spends or clears the other's.
 */
export class FlowCookie {
  constructor(
    readonly name: string,
    readonly path: string,
  ) {}

  /**
   * SameSite=Lax, not Strict: the callback is a navigation from the provider's site, and a
   * Strict cookie would not come with it. It is HttpOnly, scoped to the SSO routes, and
   * spent by the callback.
   */
  set(flowId: string, maxAgeSeconds: number, secure: boolean): string {
    return `${this.name}=${flowId}; Path=${this.path}; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure ? "; Secure" : ""}`;
  }

  clear(secure: boolean): string {
    return this.set("", 0, secure);
  }

  of(request: Request): string | null {
    return cookieOf(request, this.name);
  }

  /**
   * Starts a sign-in: a 303 to the provider that carries this browser's flow cookie. A
   * provider that cannot be reached is a refusal, answered by the sign-in page's own `refused`.
   */
  async redirectToProvider(party: RelyingParty, request: Request, refused: (err: SsoRefusal) => Response): Promise<Response> {
    try {
      const { flowId, url } = await party.begin();
      return seeOther(url.href, [this.set(flowId, FLOW_TTL_MS / 1000, isHttps(request))]);
    } catch (err) {
      if (!(err instanceof SsoRefusal)) throw err;
      return refused(err);
    }
  }
}

/** A 303 to `location`, with the cookies given. */
export function seeOther(location: string, cookies: string[]): Response {
  const headers = new Headers({ location, "cache-control": "no-store" });
  for (const cookie of cookies) headers.append("set-cookie", cookie);
  return new Response(null, { status: 303, headers });
}
