import type { Database } from "bun:sqlite";
import type { OidcConfig } from "../../config";
import { ApiError } from "../../http/errors";
import { ROLES, type Role } from "../../http/roles";
import { type Admin, changeAdminRole, createSsoAdmin } from "../admins/service";
import { type OidcIdentity, SsoRefusal } from "./relying-party";
import { findIdentityAdmin, insertIdentity, touchIdentity } from "./store";

/**
 * The role a person's groups give (decision 145): the highest of the roles their groups map
 * to, in ROLES' order (owner, admin, compliance, viewer). The claim is a list of group names,
 * or one name (some providers send a lone group as a string); anything else is refused, as is
 * a person whose groups map to no role.
 */
export function roleOfClaims(claims: Readonly<Record<string, unknown>>, settings: OidcConfig, subject: string): Role {
  const claim = claims[settings.roleClaim];
  const groups = typeof claim === "string" ? [claim] : claim === undefined ? [] : claim;
  if (!Array.isArray(groups) || groups.some((g) => typeof g !== "string"))
    throw new SsoRefusal("claim_type", `the ${settings.roleClaim} claim is ${JSON.stringify(claim)}, not a list of group names`, subject);
  const mapped = groups.map((g) => settings.roleMap.get(g)).filter((r): r is Role => r !== undefined);
  if (!mapped.length) throw new SsoRefusal("no_role", `no group in ${JSON.stringify(groups)} is mapped to a role (PARLEY_OIDC_ROLE_MAP)`, subject);
  return ROLES.find((role) => mapped.includes(role))!;
}

/** The person's email: the email claim, or (Entra ID sends none without a mailbox) a preferred_username that is an address. */
function emailOfClaims(claims: Readonly<Record<string, unknown>>, subject: string): string {
  for (const name of ["email", "preferred_username"]) {
    const value = claims[name];
    if (typeof value === "string" && value.includes("@")) return value;
  }
  throw new SsoRefusal("no_email", "the provider sent no email claim", subject);
}

/** The claims a sign-in needs, read from UserInfo when the ID token lacks them. */
export const wantedClaims = (settings: OidcConfig): string[] => [settings.roleClaim, "email"];

/**
 * The administrator an identity signs in as, with its role set from its groups now. Its first
 * sign-in makes the account; an email that a local account already holds is refused rather
 * than joined to it (decision 144): the provider's word for an address is not the owner's
 * consent to hand over their account.
 */
export async function adminOfIdentity(db: Database, settings: OidcConfig, identity: OidcIdentity, now: Date): Promise<Admin> {
  const { issuer, subject, claims } = identity;
  const role = roleOfClaims(claims, settings, subject);
  // The provider's word on this person acts: account changes are audited as its.
  const actor = { type: "sso", id: subject };
  const known = findIdentityAdmin(db, issuer, subject);
  if (known) {
    touchIdentity(db, issuer, subject, now);
    if (known.role === role) return known;
    try {
      return changeAdminRole(db, { id: known.id }, role, now, actor);
    } catch (err) {
      if (err instanceof ApiError && err.code === "resource_conflict")
        throw new SsoRefusal("last_owner", `the provider no longer gives ${known.email} the owner role, and it is the last owner`, subject);
      throw err;
    }
  }
  const email = emailOfClaims(claims, subject);
  try {
    return await createSsoAdmin(db, email, role, now, actor, (admin) => insertIdentity(db, issuer, subject, admin.id, now));
  } catch (err) {
    if (err instanceof ApiError && err.code === "resource_already_exists")
      throw new SsoRefusal("account_conflict", `${email} is already an administrator's account, not linked to ${issuer} subject ${subject}`, subject);
    if (err instanceof ApiError && err.code === "validation_error")
      throw new SsoRefusal("no_email", `the email claim ${JSON.stringify(email)} is not an address`, subject);
    throw err;
  }
}
