import { generateKeyPairSync, sign } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import Provider from "oidc-provider";

/** A person at the test provider: signs in by typing `login`; `groups` and `emailVerified` (email_verified, left out when unset) are sent as given, so a test can send a wrong type. */
export type OidcUser = { login: string; email?: string; emailVerified?: unknown; groups?: unknown };

const CLIENT_ID = "parley-dashboard";
const CLIENT_SECRET = "a-test-client-secret-of-some-length";
const KEY_ID = "test-signing-key";

function readBody(req: IncomingMessage): Promise<URLSearchParams> {
  return new Promise((resolve, reject) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => resolve(new URLSearchParams(body)));
    req.on("error", reject);
  });
}

const base64url = (data: string | Buffer) => Buffer.from(data).toString("base64url");

/**
 * A real OpenID provider (oidc-provider, the certified implementation) on a random loopback
 * port, for single sign-on tests. Its sign-in page asks for a user name only (the provider's
 * own password checks are not what is tested) and consent is implied. Groups and email are
 * released with the openid scope and, as oidc-provider conforms to the spec, reach the
 * client through UserInfo, not in the ID token (`claimsInIdToken` puts them in it instead).
 * `userinfoRequests` counts the UserInfo requests.
 *
 * `forgeNextIdToken` is the provider misbehaving on purpose: its next token response carries
 * an ID token re-signed with the provider's own key after `change` edits its claims (another
 * issuer, another audience), so the test sees what the client does with a token that only its
 * claims make wrong.
 */
export async function startOidcProvider(users: readonly OidcUser[], redirectUris: readonly string[], options: { claimsInIdToken?: boolean } = {}) {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const issuer = `http://localhost:${port}`;
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: "jwk" }), kid: KEY_ID, alg: "RS256", use: "sig" };

  const provider = new Provider(issuer, {
    clients: [
      { client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [...redirectUris], grant_types: ["authorization_code"], response_types: ["code"] },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: ["a-test-cookie-signing-key"] },
    claims: { openid: ["sub", "groups"], email: ["email", "email_verified"] },
    // As Keycloak and Entra ID do, when asked: the claims in the ID token itself.
    conformIdTokenClaims: !options.claimsInIdToken,
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    pkce: { required: () => true },
    // Fixed lifetimes, long enough for a slow machine (the defaults are functions it warns about).
    ttl: { Interaction: 600, Session: 600, Grant: 600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    async findAccount(_ctx, id) {
      const user = users.find((u) => u.login === id);
      return user && { accountId: id, claims: async () => ({ sub: id, email: user.email, email_verified: user.emailVerified, groups: user.groups }) };
    },
    // Consent is implied: the tests are about the client, and an IT department's provider asks none for its own apps.
    async loadExistingGrant(ctx) {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId });
      grant.addOIDCScope("openid email profile");
      await grant.save();
      return grant;
    },
  });

  let forge: ((claims: Record<string, unknown>) => void) | null = null;
  const forged = (idToken: string, change: (claims: Record<string, unknown>) => void) => {
    const claims = JSON.parse(Buffer.from(idToken.split(".")[1]!, "base64url").toString());
    change(claims);
    const signingInput = `${base64url(JSON.stringify({ alg: "RS256", typ: "JWT", kid: KEY_ID }))}.${base64url(JSON.stringify(claims))}`;
    return `${signingInput}.${sign("sha256", Buffer.from(signingInput), privateKey).toString("base64url")}`;
  };

  /** Rewrites the body of this (token) response, once koa ends it. */
  const rewriteTokenResponse = (res: ServerResponse, change: (claims: Record<string, unknown>) => void) => {
    const end = res.end.bind(res) as (body?: unknown) => ServerResponse;
    (res as { end: unknown }).end = (body?: unknown) => {
      const tokens = JSON.parse(String(body));
      if (tokens.id_token) tokens.id_token = forged(tokens.id_token, change);
      const text = JSON.stringify(tokens);
      res.setHeader("content-length", Buffer.byteLength(text));
      return end(text);
    };
  };

  const interaction = async (req: IncomingMessage, res: ServerResponse, uid: string) => {
    if (req.method === "POST") {
      const login = (await readBody(req)).get("login") ?? "";
      return provider.interactionFinished(req, res, { login: { accountId: login } }, { mergeWithLastSubmission: false });
    }
    await provider.interactionDetails(req, res);
    res.setHeader("content-type", "text/html; charset=utf-8");
    res.end(
      `<!doctype html><title>Test identity provider</title><h1>Test identity provider</h1>` +
        `<form method="post" action="/interaction/${uid}"><label>User name <input name="login"></label><button type="submit">Continue</button></form>`,
    );
  };

  const callback = provider.callback();
  let userinfoRequests = 0;
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    if (req.url === "/me") userinfoRequests++;
    const uid = /^\/interaction\/([\w-]+)$/.exec(req.url ?? "")?.[1];
    if (uid) {
      interaction(req, res, uid).catch((err) => {
        res.statusCode = 500;
        res.end(String(err));
      });
      return;
    }
    if (forge && req.method === "POST" && req.url === "/token") {
      rewriteTokenResponse(res, forge);
      forge = null;
    }
    callback(req, res);
  });

  return {
    issuer,
    get userinfoRequests() {
      return userinfoRequests;
    },
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    /** Parley's PARLEY_OIDC_* for this provider. */
    env(roleMap: string): Record<string, string> {
      return { PARLEY_OIDC_ISSUER: issuer, PARLEY_OIDC_CLIENT_ID: CLIENT_ID, PARLEY_OIDC_CLIENT_SECRET: CLIENT_SECRET, PARLEY_OIDC_ROLE_MAP: roleMap };
    },
    forgeNextIdToken(change: (claims: Record<string, unknown>) => void): void {
      forge = change;
    },
    /**
     * What a browser does between Parley's start and its callback, with a cookie jar: follows the
     * provider's redirects, signs in as `login` on its page, and returns the callback URL the
     * provider sends back (code and state in its query).
     */
    async signInAt(authorizationUrl: string, login: string): Promise<URL> {
      const jar = new Map<string, string>();
      const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
      let url = new URL(authorizationUrl);
      let body: URLSearchParams | undefined;
      for (let hop = 0; hop < 10; hop++) {
        if (url.origin !== issuer) return url;
        const r = await fetch(url, { method: body ? "POST" : "GET", body, headers: { cookie: cookie() }, redirect: "manual" });
        for (const c of r.headers.getSetCookie()) {
          const [pair] = c.split(";");
          const eq = pair!.indexOf("=");
          jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
        }
        const location = r.headers.get("location");
        if (location) {
          url = new URL(location, url);
          body = undefined;
        } else if (r.ok && url.pathname.startsWith("/interaction/")) {
          await r.text();
          body = new URLSearchParams({ login });
        } else {
          throw new Error(`the provider answered ${r.status} at ${url.pathname}: ${await r.text()}`);
        }
      }
      throw new Error("too many redirects at the provider");
    },
    stop(): Promise<void> {
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

export type OidcTestProvider = Awaited<ReturnType<typeof startOidcProvider>>;
