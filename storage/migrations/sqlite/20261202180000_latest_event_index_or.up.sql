-- events_session_type's condition written as ORs (issue 37).
--
-- SQLite checks a partial index's condition for every row inserted into
-- its table. An IN list of more than two constants is checked through an
-- ephemeral table that SQLite builds and frees again for each row: a
-- B-tree with its own page cache, which the Go translation of SQLite's
-- allocator maps and unmaps every time, so each event appended paid two
-- to four mmap/munmap system calls (0.1-0.6 ms each on a busy two-CPU
-- machine: munmap in a threaded process stops the other CPUs to flush
-- their TLBs). The same three types as ORs are plain comparisons. The
-- condition is storage.latestEventTypesSQL; LatestEvent repeats it so
-- that the planner may use the index (TestQueryPlans), and
-- TestEventInsertsNeedNoEphemeralTable checks every statement of the
-- append path.
DROP INDEX events_session_type;

--bun:split

CREATE INDEX events_session_type ON events (session_id, type, seq)
    WHERE type = 'turn_started' OR type = 'turn_finished' OR type = 'compaction_checkpoint';
