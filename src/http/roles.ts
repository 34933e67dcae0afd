import type { Scope } from "./scopes";

/**
 * The roles of dashboard accounts (issue 32). An API key has no role: its scopes say what it
 * may do. A session's role is on its Principal, and the one access rule (auth.ts's authorize,
 * access.ts's maySee) reads it through the tables below (decision 136).
 */
export const ROLES = ["owner", "admin", "compliance", "viewer"] as const;

export type Role = (typeof ROLES)[number];

export const isRole = (s: string): s is Role => (ROLES as readonly string[]).includes(s);

/**
 * What a role may do under /v1, as the scopes a restricted key would hold; null is every
 * scope. Owner and admin differ only on the dashboard's own routes (administrators and
 * projects are the owner's). Recordings' metadata is not content: compliance lists them
 * (for holds and exports), and reads their audio only through break-glass.
 */
const ROLE_SCOPES: Record<Role, readonly Scope[] | null> = {
  owner: null,
  admin: null,
  compliance: [
    "audit:read",
    "legal_holds:read",
    "legal_holds:write",
    "exports:read",
    "exports:write",
    "disclosures:read",
    "config:read",
    "end_users:read",
    "devices:read",
    "recordings:read",
  ],
  viewer: ["devices:read", "firmware:read"],
};

export const roleHolds = (role: Role, scope: Scope): boolean => ROLE_SCOPES[role]?.includes(scope) ?? true;

/** Whether a role may do everything under /v1 (owner, admin): what no scope names, such as publishing firmware. */
export const roleHoldsAll = (role: Role): boolean => ROLE_SCOPES[role] === null;

/**
 * The scopes that are content whatever the route: transcript text, summaries, Ask. Audio and
 * search are content too, but their scope (recordings:read) also lists metadata, so their
 * routes say so themselves (authorize's `content` option).
 */
const CONTENT_SCOPES: readonly Scope[] = ["transcriptions:read", "summaries:read", "ask:read", "ask:write"];

export const isContent = (scope: Scope, content = false): boolean => content || CONTENT_SCOPES.includes(scope);

/**
 * What break-glass opens beside content to a role that lacks it, confined alike to the
 * grant's end users: their record and their recordings' metadata, without which a viewer on
 * a support case could not reach the recording whose transcript it opened.
 */
const AROUND_CONTENT: readonly Scope[] = ["recordings:read", "end_users:read"];

export const opensWithContent = (scope: Scope): boolean => AROUND_CONTENT.includes(scope);

/** The roles that read content without break-glass; the others read one end user's at a time, through it. */
export const readsContent = (role: Role): boolean => role === "owner" || role === "admin";

/** Who manages what only the dashboard reaches: administrators and projects are the owner's, keys the owner's and admin's. */
export const DASHBOARD_POWERS = {
  administrators: ["owner"],
  projects: ["owner"],
  keys: ["owner", "admin"],
  reprocess: ["owner", "admin"],
  /** A wearer's sign-in link to the portal (decision 147): those who manage end users. */
  invites: ["owner", "admin"],
  /** The organization's own audit rows (sign-ins, accounts, projects): those who audit, and the owner. */
  organizationAudit: ["owner", "compliance"],
} as const satisfies Record<string, readonly Role[]>;
