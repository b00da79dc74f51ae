-- events_session_type's condition written as ORs, as on SQLite (where an
-- IN list of three constants costs an ephemeral table for every event
-- inserted; see the SQLite migration of the same name). PostgreSQL checks
-- either form at no such cost; the two dialects keep one condition, the
-- text of storage.latestEventTypesSQL, which LatestEvent repeats.
DROP INDEX events_session_type;

--bun:split

CREATE INDEX events_session_type ON events (session_id, type, seq)
    WHERE type = 'turn_started' OR type = 'turn_finished' OR type = 'compaction_checkpoint';
