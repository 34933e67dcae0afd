import type { Server } from "bun";
import { Elysia } from "elysia";
import type { Config } from "../config";
import { hostCheck } from "./host-check";
import { countRequest, type RequestCounting } from "./rate-limit";
import { stampRequestId } from "./request-id";
import { applyVersioning } from "./versioning";

/** A year; no includeSubDomains: the appliance speaks for its own host only. */
const HSTS = "max-age=31536000";

/** Whether responses carry Strict-Transport-Security: whenever this server serves HTTPS. */
export const sendsHsts = (config: Pick<Config, "tls">): boolean => config.tls !== null;

/**
 * The one global onRequest hook, before routing and body parsing: the request id first
 * (so any error body names it) and `nosniff` (no response, a JSON error echoing input
 * included, is ever read as HTML: decision 113), then the Host check (421 for a name this
 * server does not go by: decision 114), the rate limit, Parley-Version, and under TLS
 * Strict-Transport-Security (browsers heed it only from a certificate they trust). One hook rather
 * than a plugin each (decision 008): Elysia calls every global hook on every request, and
 * a hook that reads `server` from the context makes every route define it per request, so
 * the server is passed in here instead.
 *
 * @example new Elysia().use(beforeRouting(deps, () => app.server))
 */
export function beforeRouting(
  deps: RequestCounting & { config: Pick<Config, "tls" | "publicUrl" | "host" | "allowedHosts"> },
  server: () => Server<unknown> | null,
) {
  const hsts = sendsHsts(deps.config);
  const checkHost = hostCheck(deps.config);
  return new Elysia({ name: "parley.before-routing" })
    .onRequest(({ request, set }) => {
      stampRequestId(set.headers);
      set.headers["x-content-type-options"] = "nosniff";
      checkHost(request);
      countRequest(deps, request, set.headers, () => server()?.requestIP(request)?.address ?? "local");
      applyVersioning(request, set.headers);
      if (hsts) set.headers["strict-transport-security"] = HSTS;
    })
    .as("global");
}
