import { Elysia } from "elysia";
import { type RequestOrigin, requestOrigin } from "../../http/auth";
import type { Deps } from "../../deps";
import { ApiError } from "../../http/errors";
import { isHttps, sessionCookie } from "../../http/sessions";
import { FlowCookie, seeOther } from "./flow-cookie";
import { RelyingParty, SsoRefusal } from "./relying-party";
import { adminOfIdentity, wantedClaims } from "./service";

/** Where the provider sends the browser back; PARLEY_PUBLIC_URL plus this is the redirect URI to register. */
export const SSO_CALLBACK_PATH = "/dashboard/api/sso/callback";

const flowCookie = new FlowCookie("parley_sso_flow", "/dashboard/api/sso");

/**
 * Single sign-on for the dashboard (decision 143): /dashboard/api/sso/start sends the browser
 * to the identity provider, /callback signs it in and goes to the dashboard, or goes to the dashboard's refusal page naming why (`?sso_refused=REASON`).
 * A refusal is audited and logged, and never leaves a session.
 */
export function ssoRoutes(deps: Deps) {
  const { config, dashboardSessions: sessions } = deps;
  const settings = config.oidc;
  // The pending sign-ins live in this instance: one per app, as the sessions are one per Deps.
  const party = settings && new RelyingParty(settings, `${config.publicUrl}${SSO_CALLBACK_PATH}`, deps.clock);

  const refused = (request: Request, origin: RequestOrigin, refusal: SsoRefusal) => {
    deps.log.warn("dashboard single sign-on refused", { reason: refusal.reason, detail: refusal.detail, address: origin.clientAddress });
    deps.db.transaction(() => deps.audit.record({ type: "sso", id: refusal.subject, origin }, null, "admin.sign_in.refused", []))();
    return seeOther(`/dashboard?sso_refused=${refusal.reason}`, [flowCookie.clear(isHttps(request))]);
  };

  const enabled = () => {
    if (!party || !settings) throw new ApiError("not_found", "Single sign-on is off: PARLEY_OIDC_ISSUER is not set.");
    return { party, settings };
  };

  return new Elysia({ name: "parley.sso" })
    .get("/dashboard/api/sso/start", async ({ request, server, set }) => {
      return flowCookie.redirectToProvider(enabled().party, request, (err) => refused(request, requestOrigin(request, set, server), err));
    })
    .get(SSO_CALLBACK_PATH, async ({ request, server, set }) => {
      const { party, settings } = enabled();
      const origin = requestOrigin(request, set, server);
      try {
        const identity = await party.finish(flowCookie.of(request), new URL(request.url).searchParams, wantedClaims(settings));
        const admin = await adminOfIdentity(deps.db, settings, identity, deps.clock.now());
        const { token } = sessions.start(admin, "sso");
        deps.log.info("dashboard sign-in with single sign-on", { admin_id: admin.id, role: admin.role, address: origin.clientAddress });
        return seeOther("/dashboard", [flowCookie.clear(isHttps(request)), sessionCookie(token, sessions.cookieMaxAgeSeconds, isHttps(request))]);
      } catch (err) {
        if (!(err instanceof SsoRefusal)) throw err;
        return refused(request, origin, err);
      }
    });
}
