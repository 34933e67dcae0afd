/**
 * The roles of dashboard accounts (issue 32). An API key has no role: its scopes say what it
 * may do. A session's role is on its Principal, and the one access rule (access.ts) reads it.
 */
export const ROLES = ["owner", "admin", "compliance", "viewer"] as const;

export type Role = (typeof ROLES)[number];

export const isRole = (s: string): s is Role => (ROLES as readonly string[]).includes(s);
