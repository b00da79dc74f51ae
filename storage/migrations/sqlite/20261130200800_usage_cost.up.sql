ALTER TABLE usage_ledger ADD COLUMN cost REAL;

--bun:split

ALTER TABLE usage_ledger ADD COLUMN imported INTEGER NOT NULL DEFAULT 0;
