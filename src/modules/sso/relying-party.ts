import * as oidc from "openid-client";
import type { Clock } from "../../clock";
import type { OidcConfig } from "../../config";
import { newSecret } from "../../ids";

/** A started sign-in is good for this long: time enough to type a password and a second factor at the provider. */
export const FLOW_TTL_MS = 10 * 60_000;
/**
 * Sign-ins kept under way at once; a new one beyond it pushes out the oldest. Starting needs
 * no credential, so the map is bounded, and a flood costs its victims a restart, never the box's memory.
 */
const MAX_PENDING_FLOWS = 1000;

/**
 * Why a sign-in was refused: the code the refusal page explains (web/sso.js, and web/me/app.js
 * for the portal's own two, unverified_email and no_wearer), never a message from the outside.
 */
export type SsoRefusalReason =
  | "unreachable"
  | "expired"
  | "cancelled"
  | "rejected"
  | "no_email"
  | "no_role"
  | "claim_type"
  | "account_conflict"
  | "last_owner"
  | "unverified_email"
  | "no_wearer";

/** A sign-in that ends without a session; `detail` is for the log and the operator, `reason` for the person. */
export class SsoRefusal extends Error {
  constructor(
    readonly reason: SsoRefusalReason,
    readonly detail: string,
    readonly subject: string | null = null,
  ) {
    super(detail);
  }
}

/** Who signed in: the provider's issuer and subject (together, the person's stable key) and their claims. */
export type OidcIdentity = { issuer: string; subject: string; claims: Readonly<Record<string, unknown>> };

type PendingFlow = { state: string; nonce: string; codeVerifier: string; startedAt: number };

/**
 * An OpenID Connect relying party (decision 143): the authorization code flow with PKCE,
 * state and nonce, by openid-client (discovery, token exchange and every ID token check are
 * the library's). A sign-in's secrets stay in this process, under a random flow id that the
 * browser holds in a cookie, and are spent by the first callback that names them. Used by the
 * dashboard's sign-in; a portal can make its own with its own redirect URI.
 */
export class RelyingParty {
  private configuration: Promise<oidc.Configuration> | null = null;
  private readonly flows = new Map<string, PendingFlow>();

  constructor(
    private readonly settings: OidcConfig,
    readonly redirectUri: string,
    private readonly clock: Clock,
  ) {}

  /** The provider's metadata, discovered on first use and kept; a failed discovery is asked again next time (the provider may be back). */
  private discovered(): Promise<oidc.Configuration> {
    this.configuration ??= discover(this.settings).catch((err: unknown) => {
      this.configuration = null;
      throw new SsoRefusal("unreachable", `discovery at ${this.settings.issuer} failed: ${messageOf(err)}`);
    });
    return this.configuration;
  }

  /** Starts a sign-in: the flow id for the browser's cookie and the provider's authorization URL to send it to. */
  async begin(): Promise<{ flowId: string; url: URL }> {
    const config = await this.discovered();
    const now = this.clock.now().getTime();
    for (const [id, flow] of this.flows) if (now - flow.startedAt >= FLOW_TTL_MS) this.flows.delete(id);
    // A Map iterates in insertion order: the first key is the oldest flow.
    if (this.flows.size >= MAX_PENDING_FLOWS) this.flows.delete(this.flows.keys().next().value!);
    const flow: PendingFlow = { state: oidc.randomState(), nonce: oidc.randomNonce(), codeVerifier: oidc.randomPKCECodeVerifier(), startedAt: now };
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUri,
      scope: "openid email profile",
      state: flow.state,
      nonce: flow.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(flow.codeVerifier),
      code_challenge_method: "S256",
    });
    const flowId = newSecret("ssof_");
    this.flows.set(flowId, flow);
    return { flowId, url };
  }

  /**
   * Ends a sign-in from the callback's query: the code is exchanged and the ID token checked
   * (signature, issuer, audience, nonce, expiry). Claims named in `wanted` that the ID token
   * lacks are read from the UserInfo endpoint (some providers put groups and email only there);
   * the ID token's own claims win.
   */
  async finish(flowId: string | null, query: URLSearchParams, wanted: readonly string[]): Promise<OidcIdentity> {
    const flow = flowId ? this.flows.get(flowId) : undefined;
    // One use, whatever happens next: a replayed callback finds nothing.
    if (flowId) this.flows.delete(flowId);
    if (!flow || this.clock.now().getTime() - flow.startedAt >= FLOW_TTL_MS)
      throw new SsoRefusal("expired", "no sign-in under way for this browser (none started, already used, or too old)");
    const config = await this.discovered();
    // The redirect URI as registered, whatever address the request reached us by (a proxy in front, a port mapped).
    const callback = new URL(this.redirectUri);
    callback.search = query.toString();
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: flow.codeVerifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      throw refusalOf(err);
    }
    const idToken = tokens.claims()!;
    let claims: Record<string, unknown> = idToken;
    if (wanted.some((name) => !(name in idToken))) {
      try {
        claims = { ...(await oidc.fetchUserInfo(config, tokens.access_token, idToken.sub)), ...idToken };
      } catch (err) {
        throw refusalOf(err, idToken.sub);
      }
    }
    return { issuer: idToken.iss, subject: idToken.sub, claims };
  }
}

/**
 * Plain-HTTP providers are refused, except on this machine's loopback names: a provider
 * that a test (or a developer) runs beside the appliance. Anywhere else HTTPS is required.
 */
function discover(settings: OidcConfig): Promise<oidc.Configuration> {
  const issuer = new URL(settings.issuer);
  const loopbackHttp = issuer.protocol === "http:" && ["localhost", "127.0.0.1", "[::1]"].includes(issuer.hostname);
  return oidc.discovery(
    issuer,
    settings.clientId,
    undefined,
    // client_secret_basic is the OpenID default method; without a secret the client is public and PKCE carries it.
    settings.clientSecret === undefined ? oidc.None() : oidc.ClientSecretBasic(settings.clientSecret),
    loopbackHttp ? { execute: [oidc.allowInsecureRequests] } : undefined,
  );
}

/** The refusal for what openid-client threw: the provider said no, a check failed, or the provider could not be reached. */
function refusalOf(err: unknown, subject: string | null = null): SsoRefusal {
  if (err instanceof oidc.AuthorizationResponseError) return new SsoRefusal("cancelled", `the provider answered ${err.error}: ${err.error_description ?? ""}`);
  // fetch's own failure: the network, not the answer.
  if (err instanceof TypeError) return new SsoRefusal("unreachable", messageOf(err), subject);
  return new SsoRefusal("rejected", messageOf(err), subject);
}

function messageOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? ` (${err.cause.message})` : "";
  return `${err.message}${cause}`;
}
