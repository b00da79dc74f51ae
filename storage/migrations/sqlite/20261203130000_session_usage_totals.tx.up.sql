-- A session's usage totals on its row (the sums of its usage_ledger rows,
-- imported ones included), kept by every append of a usage event in the
-- same transaction (storage/usage.go): the session list reads them with
-- the rows it lists instead of summing the ledger, whose rows grow with
-- every model call. usage_cost is NULL while no row had a price;
-- usage_unpriced counts the tokens of the rows without one.
ALTER TABLE sessions ADD COLUMN usage_input INTEGER NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE sessions ADD COLUMN usage_output INTEGER NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE sessions ADD COLUMN usage_total INTEGER NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE sessions ADD COLUMN usage_cached INTEGER NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE sessions ADD COLUMN usage_cache_writes INTEGER NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE sessions ADD COLUMN usage_estimated INTEGER NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE sessions ADD COLUMN usage_unpriced INTEGER NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE sessions ADD COLUMN usage_cost REAL;

--bun:split

UPDATE sessions SET (usage_input, usage_output, usage_total, usage_cached, usage_cache_writes, usage_estimated, usage_cost, usage_unpriced) =
    (SELECT CAST(COALESCE(SUM(input_tokens), 0) AS BIGINT), CAST(COALESCE(SUM(output_tokens), 0) AS BIGINT),
            CAST(COALESCE(SUM(total_tokens), 0) AS BIGINT), CAST(COALESCE(SUM(cached_tokens), 0) AS BIGINT),
            CAST(COALESCE(SUM(cache_write_tokens), 0) AS BIGINT), COALESCE(MAX(CASE WHEN estimated THEN 1 ELSE 0 END), 0),
            SUM(cost), CAST(COALESCE(SUM(CASE WHEN cost IS NULL THEN total_tokens ELSE 0 END), 0) AS BIGINT)
     FROM usage_ledger WHERE usage_ledger.session_id = sessions.id)
WHERE EXISTS (SELECT 1 FROM usage_ledger WHERE usage_ledger.session_id = sessions.id);
