import { Elysia } from "elysia";
import type { Logger } from "../log";
import { requestIdOf } from "./request-id";

/**
 * One debug line per request: method, path, status, milliseconds, request id. Paths can
 * hold upload tokens, so they pass through the logger's credential masking like
 * everything else. Mounted only at debug level: its hooks cost ~5 us a request (measured).
 */
export function accessLog(log: Logger, enabled: boolean) {
  if (!enabled) return new Elysia({ name: "parley.access-log" });
  return new Elysia({ name: "parley.access-log" })
    .derive({ as: "global" }, () => ({ startedAt: performance.now() }))
    .onAfterResponse({ as: "global" }, ({ request, set, startedAt }) => {
      log.debug("request", {
        method: request.method,
        path: new URL(request.url).pathname,
        status: Number(set.status ?? 200),
        ms: startedAt === undefined ? undefined : Math.round((performance.now() - startedAt) * 10) / 10,
        request_id: requestIdOf(set),
      });
    });
}
