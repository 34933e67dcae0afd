import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { type RequestOrigin, requestOrigin } from "../../http/auth";
import { ApiError } from "../../http/errors";
import { isHttps } from "../../http/sessions";
import { portalCookie } from "../../http/wearer-sessions";
import { FlowCookie, seeOther } from "../sso/flow-cookie";
import { type OidcIdentity, RelyingParty, SsoRefusal } from "../sso/relying-party";
import { startWearerSessionByEmail } from "./invites";

/** Where the provider sends a wearer back; PARLEY_PUBLIC_URL plus this is the portal's redirect URI to register. */
export const PORTAL_SSO_CALLBACK_PATH = "/me/api/sso/callback";

/** Its own cookie and path: a wearer's sign-in never spends or clears one the dashboard started in the same browser. */
const flowCookie = new FlowCookie("parley_portal_sso_flow", "/me/api/sso");

/** Read from UserInfo when the ID token lacks them (oidc-provider, for one, sends them only there). */
const WANTED_CLAIMS = ["email", "email_verified"] as const;

/**
 * The address a wearer is matched by (decision 170): the `email` claim alone (no
 * preferred_username: a user name that looks like an address is not one the person reads),
 * and refused when the provider says it is unverified. A provider that sends no
 * email_verified (Entra ID) is taken at its word: the box trusts the one provider its
 * operator configured, as the dashboard's sign-in does.
 */
export function verifiedEmailOf({ subject, claims }: OidcIdentity): string {
  const email = claims.email;
  if (typeof email !== "string" || !email.includes("@"))
    throw new SsoRefusal("no_email", `the provider sent no email claim (${JSON.stringify(email)})`, subject);
  const verified = claims.email_verified;
  // Some providers (Cognito) send the boolean as a string.
  if (verified !== undefined && verified !== true && verified !== "true")
    throw new SsoRefusal("unverified_email", `the provider says ${email} is not verified (email_verified ${JSON.stringify(verified)})`, subject);
  return email;
}

/**
 * Single sign-on into the wearer's portal (decision 170): the dashboard's provider and
 * client, with the portal's own redirect URI. /me/api/sso says whether it is on (the
 * signed-out page's button), /start sends the browser to the provider, /callback matches the
 * email claim to one live end user and starts a portal session, or goes to /me?sso_refused=REASON.
 * A refusal is audited (portal.sign_in.refused) and logged, and never leaves a session.
 */
export function portalSsoRoutes(deps: Deps) {
  const { config, portalSessions: sessions } = deps;
  // The pending sign-ins live in this instance, apart from the dashboard's: one per app.
  const party = config.oidc ? new RelyingParty(config.oidc, `${config.publicUrl}${PORTAL_SSO_CALLBACK_PATH}`, deps.clock) : null;

  const refused = (request: Request, origin: RequestOrigin, refusal: SsoRefusal) => {
    deps.log.warn("portal single sign-on refused", { reason: refusal.reason, detail: refusal.detail, address: origin.clientAddress });
    deps.db.transaction(() => deps.audit.record({ type: "sso", id: refusal.subject, origin }, null, "portal.sign_in.refused", []))();
    return seeOther(`/me?sso_refused=${refusal.reason}`, [flowCookie.clear(isHttps(request))]);
  };

  const enabled = (): RelyingParty => {
    if (!party) throw new ApiError("not_found", "Single sign-on is off: PARLEY_OIDC_ISSUER is not set.");
    return party;
  };

  /** The end user the email names; none or several (startWearerSessionByEmail's 403) is a refusal like any other. */
  const startSession = (email: string, subject: string, origin: RequestOrigin) => {
    try {
      return startWearerSessionByEmail(deps, email, origin);
    } catch (err) {
      if (err instanceof ApiError && err.code === "forbidden") throw new SsoRefusal("no_wearer", `${email}: ${err.message}`, subject);
      throw err;
    }
  };

  return new Elysia({ name: "parley.portal.sso" })
    .get("/me/api/sso", () => ({ enabled: party !== null }))
    .get("/me/api/sso/start", async ({ request, server, set }) => {
      return flowCookie.redirectToProvider(enabled(), request, (err) => refused(request, requestOrigin(request, set, server), err));
    })
    .get(PORTAL_SSO_CALLBACK_PATH, async ({ request, server, set }) => {
      const party = enabled();
      const origin = requestOrigin(request, set, server);
      try {
        const identity = await party.finish(flowCookie.of(request), new URL(request.url).searchParams, WANTED_CLAIMS);
        const { token, session } = startSession(verifiedEmailOf(identity), identity.subject, origin);
        deps.log.info("portal sign-in with single sign-on", { end_user_id: session.endUserId, address: origin.clientAddress });
        return seeOther("/me#/", [flowCookie.clear(isHttps(request)), portalCookie(token, sessions.cookieMaxAgeSeconds, isHttps(request))]);
      } catch (err) {
        if (!(err instanceof SsoRefusal)) throw err;
        return refused(request, origin, err);
      }
    });
}
