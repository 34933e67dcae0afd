import type { Server } from "bun";
import { Elysia } from "elysia";
import { countRequest, type RequestCounting } from "./rate-limit";
import { stampRequestId } from "./request-id";
import { applyVersioning } from "./versioning";

/**
 * The one global onRequest hook, before routing and body parsing: the request id first
 * (so any error body names it), then the rate limit, then Parley-Version. One hook rather
 * than a plugin each (decision 008): Elysia calls every global hook on every request, and
 * a hook that reads `server` from the context makes every route define it per request, so
 * the server is passed in here instead.
 *
 * @example new Elysia().use(beforeRouting(deps, () => app.server))
 */
export function beforeRouting(deps: RequestCounting, server: () => Server<unknown> | null) {
  return new Elysia({ name: "parley.before-routing" })
    .onRequest(({ request, set }) => {
      stampRequestId(set.headers);
      countRequest(deps, request, set.headers, () => server()?.requestIP(request)?.address ?? "local");
      applyVersioning(request, set.headers);
    })
    .as("global");
}
