ALTER TABLE usage_ledger ADD COLUMN cache_write_tokens BIGINT NOT NULL DEFAULT 0;
