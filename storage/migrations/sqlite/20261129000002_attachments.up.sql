CREATE TABLE attachments (
    id         TEXT PRIMARY KEY,
    name       TEXT    NOT NULL,
    kind       TEXT    NOT NULL,
    media_type TEXT    NOT NULL,
    size       INTEGER NOT NULL,
    width      INTEGER NOT NULL DEFAULT 0,
    height     INTEGER NOT NULL DEFAULT 0,
    sha256     TEXT    NOT NULL,
    created_at TEXT    NOT NULL
);

--bun:split

CREATE INDEX attachments_sha256 ON attachments (sha256);
