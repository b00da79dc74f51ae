-- head_live: the session's head_seq and updated_at may be behind its
-- events, which then say what they are (the last event's seq and time).
-- A single-event append on SQLite sets it once instead of rewriting the
-- session's row at every append (one page of the five a message event
-- wrote); the checkpointer writes the true values back and clears it.
-- PostgreSQL keeps the row current at every append and never sets it.
ALTER TABLE sessions ADD COLUMN head_live INTEGER NOT NULL DEFAULT 0;
--bun:split
-- The live rows, for the checkpointer's settle: a few among thousands.
CREATE INDEX sessions_head_live ON sessions (id) WHERE head_live <> 0;
