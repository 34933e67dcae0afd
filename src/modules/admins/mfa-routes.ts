import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { dashboardSessionOnly } from "../../http/auth";
import { ApiError } from "../../http/errors";
import { requestIdOf } from "../../http/request-id";
import type { DashboardSession } from "../../http/sessions";
import { adminActor } from "../audit/service";
import { beginEnrolment, confirmEnrolment, removeSecondFactor, secondFactorStatus } from "./mfa";
import { codeBody } from "./schema";

/**
 * A signed-in administrator's own second factor at /dashboard/api/account/second-factor
 * (decision 151): its state, a new secret (shown once), its confirmation with a first code
 * (which returns the recovery codes, shown once), and its removal with a current code. Open
 * to a session that must enrol first (PARLEY_REQUIRE_MFA): enrolling is what it is held to.
 */
export function secondFactorRoutes(deps: Deps) {
  const { db, dashboardSessions: sessions } = deps;
  const owner = (s: DashboardSession) => ({ id: s.adminId, email: s.adminEmail });
  const origin = (request: Request, server: { requestIP(r: Request): { address: string } | null } | null, set: { headers: Record<string, unknown> }) => ({
    address: server?.requestIP(request)?.address ?? "unknown",
    requestId: requestIdOf(set) ?? null,
  });
  const actorOf = (s: DashboardSession, where: { address: string; requestId: string | null }) => ({
    ...adminActor(s),
    origin: { requestId: where.requestId, clientAddress: where.address },
  });

  return new Elysia({ prefix: "/account/second-factor" })
    .use(dashboardSessionOnly(deps, { beforeSecondFactor: true }))
    .get("", ({ session }) => ({ ...secondFactorStatus(db, session.adminId), required: deps.config.admins.requireMfa }))
    .post("/enrolment", ({ session }) => beginEnrolment(deps, owner(session)))
    .post(
      "/confirmation",
      ({ request, server, set, session, body }) => confirmEnrolment(deps, owner(session), body.code, actorOf(session, origin(request, server, set))),
      {
        body: codeBody,
      },
    )
    .post(
      "/removal",
      ({ request, server, set, session, body }) => {
        const where = origin(request, server, set);
        // Throttled as sign-in codes are; a wrong code is 422, not 401, which would read as the session's end.
        if (!sessions.checkCode(owner(session), body.code, where))
          throw new ApiError("validation_error", "That code is wrong or was used already: give the code your app shows now, or a recovery code.", {
            param: "code",
          });
        removeSecondFactor(db, session.adminId, "second_factor.disable", actorOf(session, where), deps.clock.now());
        set.status = 204;
      },
      { body: codeBody },
    );
}
