/**
 * Scopes a restricted key can hold. The spec names five (spec 5 rule 5); the rest
 * cover the endpoints it leaves open. A `:write` scope does not imply `:read`.
 * docs/api.md lists which endpoint needs which.
 */
export const SCOPES = [
  "end_users:read",
  "end_users:write",
  "devices:read",
  "devices:write",
  "recordings:read",
  "recordings:write",
  "transcriptions:read",
  "transcriptions:write",
  "summaries:read",
  "summaries:write",
  "ask:read",
  "ask:write",
  "webhooks:read",
  "webhooks:write",
  "config:read",
  "config:write",
  "firmware:read",
  "audit:read",
  "disclosures:read",
  "legal_holds:read",
  "legal_holds:write",
  "exports:read",
  "exports:write",
  "voices:read",
  "voices:write",
] as const;

export type Scope = (typeof SCOPES)[number];

export function isScope(s: string): s is Scope {
  return (SCOPES as readonly string[]).includes(s);
}
