ALTER TABLE usage_ledger ADD COLUMN cost DOUBLE PRECISION;

--bun:split

ALTER TABLE usage_ledger ADD COLUMN imported BOOLEAN NOT NULL DEFAULT false;
