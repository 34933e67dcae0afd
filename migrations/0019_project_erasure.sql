-- Deleting a project (decision 107). `parley projects delete` first erases every recording
-- through DELETE's path (recordings are left out here on purpose: a recording still present
-- fails the foreign key, so none can go without its erasure), then deletes the project row.
-- This trigger takes the rest of the project's rows with it, children before parents, in
-- the same transaction; its data key goes by data_keys' ON DELETE CASCADE (decision 105).
-- The audit log keeps its rows: they hold ids, not content (decision 102).
CREATE TRIGGER projects_delete_rows BEFORE DELETE ON projects
BEGIN
  DELETE FROM webhook_endpoints WHERE project_id = OLD.id;
  DELETE FROM events WHERE project_id = OLD.id;
  DELETE FROM idempotency_keys WHERE project_id = OLD.id;
  DELETE FROM device_commands WHERE project_id = OLD.id;
  DELETE FROM ota_assignments WHERE project_id = OLD.id;
  DELETE FROM config_overrides WHERE project_id = OLD.id;
  DELETE FROM devices WHERE project_id = OLD.id;
  DELETE FROM end_users WHERE project_id = OLD.id;
  DELETE FROM credentials WHERE project_id = OLD.id;
  DELETE FROM admin_sessions WHERE project_id = OLD.id;
  DELETE FROM legal_holds WHERE project_id = OLD.id;
  DELETE FROM exports WHERE project_id = OLD.id;
  DELETE FROM ask_sessions WHERE project_id = OLD.id;
  DELETE FROM voices WHERE project_id = OLD.id;
END;

-- Exports whose archive was erased (decision 107): by DELETE /v1/exports/{id} (status
-- 'deleted') or by expiry after PARLEY_EXPORT_RETENTION_DAYS (status 'expired'). The row
-- stays, as the record that the archive existed and when it went.
ALTER TABLE exports ADD COLUMN erased_at TEXT;
