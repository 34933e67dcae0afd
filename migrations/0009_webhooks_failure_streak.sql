-- The latest failed attempt of an endpoint: a failure long after the previous one starts a
-- new failure streak (failing_since), so one failure, a quiet week and another failure do
-- not add up to "3 days of continuous failure" (decision 072). Existing streaks are taken
-- as last failing at their last change, which can only restart them, never disable early.
ALTER TABLE webhook_endpoints ADD COLUMN last_failed_at TEXT;
UPDATE webhook_endpoints SET last_failed_at = updated_at WHERE failing_since IS NOT NULL;

-- An event's deliveries: the event purge skips events whose deliveries are still pending
-- or within their retention, and ON DELETE CASCADE from events finds them without a scan.
CREATE INDEX webhook_deliveries_event ON webhook_deliveries(event_id);
