-- The top-level session list's index holds parent_id too (NULL in every
-- entry): SQLite counts a column of a partial index's own WHERE clause as
-- one to read from the table, so a list of ids (SessionFilter.IDsOnly) read
-- the row of every session it listed; with the column in the index it
-- reads the index alone.
DROP INDEX sessions_top_created;

--bun:split

CREATE INDEX sessions_top_created ON sessions (created_at DESC, id, parent_id) WHERE parent_id IS NULL;
