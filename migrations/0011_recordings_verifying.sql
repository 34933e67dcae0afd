-- The sweep that revives stuck verifications reads only recordings awaiting one; without
-- this index it scanned the whole recordings table every 15 minutes.
CREATE INDEX recordings_verifying ON recordings(verification) WHERE verification IS NOT NULL;
