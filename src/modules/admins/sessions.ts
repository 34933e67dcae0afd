import type { Config } from "../../config";
import { constantTimeEqual, sha256Hex } from "../../crypto";
import { ApiError } from "../../http/errors";
import { isOutOfSpace } from "../../storage/volumes";
import { csrfTokenOf, type DashboardSession, type DashboardSessions, SessionLifetime, sessionTokenOf } from "../../http/sessions";
import { newSecret } from "../../ids";
import type { Mode } from "../../tenancy";
import { readsContent } from "../../http/roles";
import { openBreakGlassOf } from "../break-glass/service";
import { listProjects } from "../projects/service";
import { LoginThrottle } from "./login-throttle";
import type { SessionView } from "./schema";
import { type Admin, checkAdminPassword, countAdmins, hashPassword, openSetupToken } from "./service";
import { endSession, findSession, findSetupTokenHash, insertSession, purgeSessions, selectSessionTenant, type SignedInWith, touchSession } from "./store";
import { adminActor, recordAudit } from "../audit/service";
import { type FactorOwner, type SecondFactorDeps, secondFactorStatus, verifySecondFactor } from "./mfa";
import { SignInChallenges } from "./mfa-challenges";

type SessionDeps = SecondFactorDeps & { config: Config };

/** A session just started: the token goes into the cookie and nowhere else. */
export type StartedSession = { token: string; session: DashboardSession };

/** A right password of an account with a second factor: no session yet, a challenge for the second step (decision 151). */
export type OwedSecondFactor = { challenge: string };

/**
 * Administrators' dashboard sessions (decision 094): the token is random, kept only as its
 * SHA-256, and ends when idle or old (PARLEY_SESSION_IDLE_MINUTES, PARLEY_SESSION_MAX_HOURS),
 * at sign-out, or when the password is reset. Also holds the sign-in throttle and checks the
 * one-time setup token of an install without administrators. One per Deps (decision 085).
 */
export class AdminSessions implements DashboardSessions {
  readonly throttle: LoginThrottle;
  private readonly challenges = new SignInChallenges();
  private readonly byRequest = new WeakMap<Request, DashboardSession | null>();
  private setupToken: string | null = null;
  private decoyHash: Promise<string> | undefined;

  private readonly lifetime: SessionLifetime;

  constructor(private readonly deps: SessionDeps) {
    this.lifetime = new SessionLifetime(deps.config.admins);
    this.throttle = new LoginThrottle(deps.config.admins, deps.clock);
  }

  /** How long the browser keeps the cookie: the absolute timeout (the server ends it sooner when idle). */
  get cookieMaxAgeSeconds(): number {
    return this.lifetime.cookieMaxAgeSeconds;
  }

  ofRequest(request: Request, now: Date): DashboardSession | null {
    const known = this.byRequest.get(request);
    if (known !== undefined) return known;
    const token = sessionTokenOf(request);
    const session = token ? this.find(token, now) : null;
    this.byRequest.set(request, session);
    return session;
  }

  private find(token: string, now: Date): DashboardSession | null {
    const row = findSession(this.deps.db, sha256Hex(token));
    if (!row) return null;
    if (this.lifetime.isOver(row, now)) return null;
    if (this.lifetime.dueForTouch(row, now)) touchSession(this.deps.db, row.id, now);
    const tenant = row.project_id && row.organization_id ? { projectId: row.project_id, organizationId: row.organization_id, mode: row.mode } : null;
    // Judged on every request, not at sign-in: turning PARLEY_REQUIRE_MFA on holds sessions already open too.
    const mustEnrolSecondFactor = this.deps.config.admins.requireMfa && row.signed_in_with === "password" && !row.has_second_factor;
    // Looked up on each request, so a grant's expiry or closing takes effect at once (decision 137).
    const breakGlass = tenant && !readsContent(row.role) ? openBreakGlassOf(this.deps.db, row.admin_id, tenant, now) : undefined;
    return {
      id: row.id,
      adminId: row.admin_id,
      adminEmail: row.email,
      role: row.role,
      tenant,
      csrfToken: csrfTokenOf(token),
      mustEnrolSecondFactor,
      breakGlass,
    };
  }

  /**
   * Signs in with email and password from `address`: 401 for a wrong pair, 429 while locked out.
   * An account with a second factor gets a challenge for the second step instead of a session.
   */
  async signIn(email: string, password: string, address: string): Promise<StartedSession | OwedSecondFactor> {
    this.throttle.attempt(email, address);
    const admin = await checkAdminPassword(this.deps.db, email, password, await (this.decoyHash ??= hashPassword(newSecret("decoy_"))));
    if (!admin) throw new ApiError("unauthorized", "The email or the password is wrong.");
    if (secondFactorStatus(this.deps.db, admin.id).enrolled) {
      this.throttle.passed(email, address);
      return { challenge: this.challenges.issue(admin, this.deps.clock.now()) };
    }
    this.throttle.succeeded(email, address);
    return this.start(admin);
  }

  /**
   * The second step: a live challenge and a code (TOTP or recovery) from `origin`. Counted by the
   * same throttle as passwords: 401 for a wrong code or a spent or expired challenge, 429 while locked out.
   */
  completeSignIn(challenge: string, code: string, origin: { address: string; requestId: string | null }): StartedSession {
    const admin = this.challenges.find(challenge, this.deps.clock.now());
    if (!admin) throw new ApiError("unauthorized", "This sign-in has expired: give your email and password again.", { param: "challenge" });
    if (!this.checkCode(admin, code, origin)) throw new ApiError("unauthorized", "The code is wrong or was used already.", { param: "code" });
    this.challenges.spend(challenge);
    return this.start(admin);
  }

  /**
   * Whether a second-factor code (TOTP or recovery) of an administrator is right, checked under
   * the sign-in throttle (429 while locked out; a wrong code counts as a failed sign-in): for the
   * sign-in's second step and for removing a factor.
   */
  checkCode(owner: FactorOwner, code: string, origin: { address: string; requestId: string | null }): boolean {
    this.throttle.attempt(owner.email, origin.address);
    const actor = { ...adminActor({ adminId: owner.id, adminEmail: owner.email }), origin: { requestId: origin.requestId, clientAddress: origin.address } };
    if (!verifySecondFactor(this.deps, owner, code, actor)) return false;
    this.throttle.succeeded(owner.email, origin.address);
    return true;
  }

  /** A new session for an administrator, acting in the first project (if any) in test mode; `signedInWith` says how (migration 0028). */
  start(admin: Admin, signedInWith: SignedInWith = "password"): StartedSession {
    const { db, clock } = this.deps;
    const now = clock.now();
    purgeSessions(db, this.lifetime.purgeBefore(now));
    const token = newSecret("ses_");
    const firstProject = listProjects(db)[0] ?? null;
    db.transaction(() => {
      insertSession(db, admin.id, sha256Hex(token), firstProject?.id ?? null, now, signedInWith);
      recordAudit(db, adminActor({ adminId: admin.id, adminEmail: admin.email }), null, "admin.sign_in", [admin.id], now);
    })();
    return { token, session: this.find(token, now)! };
  }

  end(session: DashboardSession): void {
    const { db, clock } = this.deps;
    const now = clock.now();
    db.transaction(() => {
      endSession(db, session.id, now);
      recordAudit(db, adminActor(session), null, "admin.sign_out", [session.adminId], now);
    })();
  }

  /** Switches the project and mode a session acts in (404 for an unknown project); returns the session as it now is. */
  select(session: DashboardSession, projectId: string, mode: Mode): DashboardSession {
    const project = listProjects(this.deps.db).find((p) => p.id === projectId);
    if (!project) throw new ApiError("not_found", `No project ${projectId}.`, { param: "project_id" });
    selectSessionTenant(this.deps.db, session.id, project.id, mode);
    return { ...session, tenant: { projectId: project.id, organizationId: project.organization_id, mode } };
  }

  /** What the dashboard shell knows of a session: who, where, the projects to switch to, and the CSRF token its writes carry. */
  describe(session: DashboardSession): SessionView {
    const projects = listProjects(this.deps.db).map((p) => ({ id: p.id, name: p.name }));
    const t = session.tenant;
    const project = t && projects.find((p) => p.id === t.projectId);
    return {
      admin: { id: session.adminId, email: session.adminEmail, role: session.role },
      second_factor: { enrolled: secondFactorStatus(this.deps.db, session.adminId).enrolled, must_enrol: Boolean(session.mustEnrolSecondFactor) },
      csrf_token: session.csrfToken,
      tenant: t && project ? { project_id: t.projectId, project_name: project.name, mode: t.mode } : null,
      projects,
    };
  }

  /** Whether the first-run setup is still open: no administrator exists. */
  setupOpen(): boolean {
    return countAdmins(this.deps.db) === 0;
  }

  /**
   * The one-time setup token to print at start: made on first ask and the same while it is
   * open; null while an administrator exists. Once one has existed, setup reopening needs a
   * new token (the old one was spent in the database, decision 115).
   */
  setupTokenToPrint(): string | null {
    if (!this.setupOpen()) return null;
    const current = findSetupTokenHash(this.deps.db);
    if (this.setupToken && current === sha256Hex(this.setupToken)) return this.setupToken;
    try {
      this.setupToken = openSetupToken(this.deps.db, this.deps.clock.now());
    } catch (err) {
      // A full disk must not stop the server starting (decision 082): setup from the box itself still works, and a later start prints a token.
      if (isOutOfSpace(err)) return null;
      throw err;
    }
    return this.setupToken;
  }

  /** Whether `given` is the open setup token, this process's or one `parley admin remove` printed (never true when none is open). */
  isSetupToken(given: string | undefined): boolean {
    const current = findSetupTokenHash(this.deps.db);
    return Boolean(current && given && constantTimeEqual(sha256Hex(given), current));
  }
}
