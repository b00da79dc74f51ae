CREATE TABLE usage_ledger (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id    TEXT    NOT NULL,
    event_seq     INTEGER NOT NULL,
    route         TEXT    NOT NULL,
    connection_id TEXT    NOT NULL,
    model         TEXT    NOT NULL,
    purpose       TEXT    NOT NULL,
    input_tokens  INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    total_tokens  INTEGER NOT NULL,
    cached_tokens INTEGER NOT NULL,
    estimated     INTEGER NOT NULL,
    at            TEXT    NOT NULL
);

--bun:split

CREATE INDEX usage_ledger_session ON usage_ledger (session_id);
