import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { dashboardSessionOnly } from "../../http/auth";
import { ApiError } from "../../http/errors";
import { isOnline } from "../devices/reachability";
import { ASSETS } from "./assets";
import { DOCTOR_HEADER, isDoctorToken } from "../../doctor-token";
import { type Diagnose, systemChecks, systemReport } from "./system";

// The dashboard (and the portal at /me) loads nothing from elsewhere, so it works on an air-gapped box.
export const SECURITY_HEADERS = {
  "content-security-policy": "default-src 'self'; media-src 'self' blob:; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

export const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
};

function serve(path: string): Response {
  const body = ASSETS[path];
  if (body === undefined) throw new ApiError("not_found", `No dashboard file ${path}.`);
  const type = TYPES[path.slice(path.lastIndexOf(".") + 1)] ?? "application/octet-stream";
  return new Response(body, { headers: { "content-type": type, "cache-control": "no-cache", ...SECURITY_HEADERS } });
}

/** A list page's worth of badges and then some; more is not a dashboard asking. */
const MAX_JUDGED = 500;

/**
 * GET /dashboard/api/reachability?last_heartbeat_at=...: spec 2.5's online rule applied on the
 * server's clock, one verdict per timestamp in the order asked, so a badge never depends on the
 * browser's clock (decision 135). The Device body stays as the spec pins it.
 */
function judgeReachability(heartbeats: string[], now: Date): { online: boolean[]; server_time: string } {
  if (heartbeats.length > MAX_JUDGED)
    throw new ApiError("invalid_request", `At most ${MAX_JUDGED} last_heartbeat_at values per request.`, { param: "last_heartbeat_at" });
  const bad = heartbeats.find((at) => Number.isNaN(Date.parse(at)));
  if (bad !== undefined)
    throw new ApiError("invalid_request", `last_heartbeat_at must be a date-time; got ${JSON.stringify(bad)}.`, { param: "last_heartbeat_at" });
  return { online: heartbeats.map((at) => isOnline(at, now)), server_time: now.toISOString() };
}

/** The dashboard's own data, for administrators' sessions only: the System page's and the reachability badges'. */
function systemRoutes(deps: Deps, diagnose: Diagnose) {
  return (
    new Elysia({ prefix: "/dashboard/api" })
      .use(dashboardSessionOnly(deps))
      .get("/reachability", ({ request }) => judgeReachability(new URL(request.url).searchParams.getAll("last_heartbeat_at"), deps.clock.now()))
      .get("/system", () => systemReport(deps))
      // Apart: the checks load each engine's model for real (once per process), which can take a while the first time.
      .get("/system/checks", () => systemChecks(deps, diagnose))
  );
}

/** `parley doctor` beside a running server asks it for the checks of its own settings and engines (decision 119). */
function doctorRoutes(deps: Deps, diagnose: Diagnose) {
  return new Elysia({ prefix: "/dashboard/api" }).get("/system/doctor", ({ request, query }) => {
    if (!isDoctorToken(deps.serverSecret, request.headers.get(DOCTOR_HEADER)))
      throw new ApiError("unauthorized", "Only parley doctor, run with this server's data dir and secret, may ask for its checks here.");
    return systemChecks(deps, diagnose, { verify: query.verify === "1" });
  });
}

/** The web dashboard: its files at /dashboard (public: what they show needs an administrator's session, decision 094) and the System page's data. */
export function dashboardRoutes(deps: Deps, diagnose: Diagnose) {
  return new Elysia({ name: "parley.dashboard" })
    .use(systemRoutes(deps, diagnose))
    .use(doctorRoutes(deps, diagnose))
    .get("/", ({ redirect }) => redirect("/dashboard"))
    .get("/dashboard", () => serve("index.html"))
    .get("/dashboard/*", ({ params }) => serve(params["*"] || "index.html"));
}
