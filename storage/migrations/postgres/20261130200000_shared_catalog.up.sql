CREATE TABLE catalog_state (
    name    TEXT PRIMARY KEY,
    version BIGINT NOT NULL,
    body    TEXT   NOT NULL
);

--bun:split

CREATE TABLE catalog_connections (
    id       TEXT PRIMARY KEY,
    position INTEGER NOT NULL,
    body     TEXT    NOT NULL,
    api_key  TEXT    NOT NULL
);

--bun:split

CREATE TABLE mcp_servers (
    id       TEXT PRIMARY KEY,
    position INTEGER NOT NULL,
    body     TEXT    NOT NULL
);
