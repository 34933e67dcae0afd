// Who acted, in one wording for the audit log and the accounting of disclosures.

/** What each kind of actor is called on screen: an administrator's row is a person at the dashboard, whatever their role. */
const KINDS = {
  admin: "dashboard",
  wearer: "portal",
  sso: "single sign-on",
  operator: "CLI",
  secret: "secret key",
  restricted: "restricted key",
  device: "device token",
};

/** "olga@clinic.example (dashboard)", "key_… (secret key)", "system retention" ... */
export function actorLabel(actor) {
  const kind = KINDS[actor.type] ?? actor.type;
  const who = actor.email ?? actor.admin_email ?? actor.id;
  if (!who) return kind;
  return `${who} (${kind}${actor.device_id ? `, ${actor.device_id}` : ""})`;
}
