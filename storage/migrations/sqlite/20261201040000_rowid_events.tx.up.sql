-- events and messages become rowid tables with a unique index on
-- (session_id, seq). As WITHOUT ROWID tables their B-trees held whole rows,
-- and a row larger than a page's local payload (a long message, a big tool
-- result) spills to overflow pages: every seek that compared against such
-- a row read all of it into a fresh buffer first, which made each append
-- slower as the session's messages grew. The index holds only the keys.
CREATE TABLE events_rowid (
    session_id TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    type       TEXT    NOT NULL,
    payload    TEXT    NOT NULL,
    at         TEXT    NOT NULL
);

--bun:split

INSERT INTO events_rowid (session_id, seq, type, payload, at)
SELECT session_id, seq, type, payload, at FROM events ORDER BY session_id, seq;

--bun:split

DROP TABLE events;

--bun:split

ALTER TABLE events_rowid RENAME TO events;

--bun:split

CREATE UNIQUE INDEX events_session_seq ON events (session_id, seq);

--bun:split

CREATE INDEX events_session_type ON events (session_id, type, seq);

--bun:split

CREATE TABLE messages_rowid (
    session_id TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    role       TEXT    NOT NULL,
    payload    TEXT    NOT NULL,
    active     INTEGER NOT NULL
);

--bun:split

INSERT INTO messages_rowid (session_id, seq, role, payload, active)
SELECT session_id, seq, role, payload, active FROM messages ORDER BY session_id, seq;

--bun:split

DROP TABLE messages;

--bun:split

ALTER TABLE messages_rowid RENAME TO messages;

--bun:split

CREATE UNIQUE INDEX messages_session_seq ON messages (session_id, seq);
