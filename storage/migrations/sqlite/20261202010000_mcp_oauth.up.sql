CREATE TABLE mcp_oauth (
    server_id  TEXT PRIMARY KEY,
    sealed     TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);
