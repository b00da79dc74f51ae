CREATE TABLE events (
    session_id TEXT   NOT NULL,
    seq        BIGINT NOT NULL,
    type       TEXT   NOT NULL,
    payload    TEXT   NOT NULL,
    at         TEXT   NOT NULL,
    PRIMARY KEY (session_id, seq)
);

--bun:split

CREATE TABLE sessions (
    id            TEXT PRIMARY KEY,
    parent_id     TEXT,
    project_id    TEXT,
    connection_id TEXT,
    phase         TEXT   NOT NULL,
    head_seq      BIGINT NOT NULL,
    meta          TEXT   NOT NULL,
    created_at    TEXT   NOT NULL,
    updated_at    TEXT   NOT NULL
);

--bun:split

CREATE INDEX sessions_parent_id ON sessions (parent_id);

--bun:split

CREATE INDEX sessions_project_id ON sessions (project_id);

--bun:split

CREATE TABLE messages (
    session_id TEXT    NOT NULL,
    seq        BIGINT  NOT NULL,
    role       TEXT    NOT NULL,
    payload    TEXT    NOT NULL,
    active     BOOLEAN NOT NULL,
    PRIMARY KEY (session_id, seq)
);

--bun:split

CREATE TABLE projects (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    path       TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);

--bun:split

CREATE TABLE tombstones (
    session_id TEXT PRIMARY KEY,
    deleted_at TEXT NOT NULL
);
