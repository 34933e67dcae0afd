-- Audit rows by the ids they name (decision 112): "who accessed this recording" looks its
-- rows up here instead of scanning the project's whole log. Derived from audit_events: the
-- trigger fills it in the insert's own transaction, and `parley audit verify` checks it
-- against the chained rows, so an entry removed to hide an access is caught.
CREATE TABLE audit_event_resources (
  resource_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  PRIMARY KEY (resource_id, seq)
) WITHOUT ROWID;

INSERT OR IGNORE INTO audit_event_resources (resource_id, seq)
  SELECT r.value, e.seq FROM audit_events e, json_each(e.resource_ids) r;

CREATE TRIGGER audit_events_index_resources AFTER INSERT ON audit_events
BEGIN
  INSERT OR IGNORE INTO audit_event_resources (resource_id, seq) SELECT value, NEW.seq FROM json_each(NEW.resource_ids);
END;

CREATE TRIGGER audit_event_resources_no_update BEFORE UPDATE ON audit_event_resources
BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;
CREATE TRIGGER audit_event_resources_no_delete BEFORE DELETE ON audit_event_resources
BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;
