-- Summaries that show their evidence (issue 25): each statement of a completed summary with
-- the transcript segments it rests on, as JSON (sections of items with citations). NULL while
-- processing or failed, and for summaries made before citations existed.
ALTER TABLE summaries ADD COLUMN sections TEXT;
