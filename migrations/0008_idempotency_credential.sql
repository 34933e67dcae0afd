-- A stored response is replayed only to the credential that made the original request:
-- another key of the same project (say a read-only restricted key) must not receive a
-- response, a device token among them, that its own scopes would have refused.
ALTER TABLE idempotency_keys ADD COLUMN credential_id TEXT;
