-- Roles for dashboard accounts (issue 32): what a person may do is their role's, enforced by
-- the one access rule (src/http/access.ts). Administrators that exist before the upgrade
-- become owners, so nobody loses access; new accounts name their role.
ALTER TABLE admins ADD COLUMN role TEXT NOT NULL DEFAULT 'owner' CHECK (role IN ('owner', 'admin', 'compliance', 'viewer'));
