-- Indexes for history at scale (issue 37).
--
-- events_session_type served LatestEvent, which asks only for the newest
-- turn_started, turn_finished or compaction_checkpoint of a session; as a
-- full index every appended event paid an insert into it (a fifth of the
-- B-tree inserts of a message event). It now holds those three types only
-- (the list is storage.latestEventTypes; LatestEvent repeats it so that
-- the planner may use the index).
DROP INDEX events_session_type;

--bun:split

CREATE INDEX events_session_type ON events (session_id, type, seq)
    WHERE type IN ('turn_started', 'turn_finished', 'compaction_checkpoint');

--bun:split

-- The session list, newest first, a page at a time (sessions(first:,
-- after:)): top-level sessions (the default), all of them, and the
-- children of one. The index of children holds children only: as a full
-- index on parent_id the planner took it for "parent_id IS NULL" too, and
-- sorted every top-level session for each page.
DROP INDEX sessions_parent_id;

--bun:split

CREATE INDEX sessions_parent_id ON sessions (parent_id, created_at DESC, id) WHERE parent_id IS NOT NULL;

--bun:split

CREATE INDEX sessions_top_created ON sessions (created_at DESC, id) WHERE parent_id IS NULL;

--bun:split

CREATE INDEX sessions_created ON sessions (created_at DESC, id);

--bun:split

-- The sessions a kernel resets at start (phase not idle): a few rows
-- among thousands.
CREATE INDEX sessions_busy ON sessions (created_at DESC, id) WHERE phase <> 'idle';
