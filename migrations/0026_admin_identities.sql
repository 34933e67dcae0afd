-- Single sign-on (issue 32, decision 143): a person who signs in with the identity provider
-- is an administrator account keyed by the provider's issuer and the person's subject there,
-- never by email (an address can be reassigned, a subject cannot). The account's role is set
-- from the provider's groups at each sign-in.
CREATE TABLE admin_identities (
  issuer TEXT NOT NULL,
  subject TEXT NOT NULL,
  admin_id TEXT NOT NULL REFERENCES admins(id) ON DELETE CASCADE,
  created_at TEXT NOT NULL,
  last_sign_in_at TEXT NOT NULL,
  PRIMARY KEY (issuer, subject)
);
CREATE INDEX admin_identities_admin ON admin_identities(admin_id);
