-- Accounting of disclosures (issue 32, decision 140): a content read or an export records
-- whose content it disclosed and why. `subjects` is a JSON array of {end_user_id, reason,
-- break_glass_id} (reason: the break-glass reason of that end user, or an export's matter);
-- `credential_id` is the key, token or dashboard session that acted (for a session the
-- actor is the person, so the credential is not otherwise known). Both are covered by the
-- row's hash when set; rows written before this migration hash as they always did.
ALTER TABLE audit_events ADD COLUMN credential_id TEXT;
ALTER TABLE audit_events ADD COLUMN subjects TEXT;

-- The rows naming an end user as a subject: one person's accounting without scanning the
-- project's log. Derived like audit_event_resources (decision 112): filled by trigger in the
-- insert's own transaction, append-only, and checked by `parley audit verify`.
CREATE TABLE audit_event_subjects (
  end_user_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  PRIMARY KEY (end_user_id, seq)
) WITHOUT ROWID;

CREATE TRIGGER audit_events_index_subjects AFTER INSERT ON audit_events WHEN NEW.subjects IS NOT NULL
BEGIN
  INSERT OR IGNORE INTO audit_event_subjects (end_user_id, seq)
    SELECT json_extract(value, '$.end_user_id'), NEW.seq FROM json_each(NEW.subjects);
END;

CREATE TRIGGER audit_event_subjects_no_update BEFORE UPDATE ON audit_event_subjects
BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;
CREATE TRIGGER audit_event_subjects_no_delete BEFORE DELETE ON audit_event_subjects
BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;
