CREATE TABLE route_anchors (
    session_id       TEXT    NOT NULL,
    route            TEXT    NOT NULL,
    through_seq      INTEGER NOT NULL,
    digest           TEXT    NOT NULL,
    input_tokens     INTEGER NOT NULL,
    estimated_tokens INTEGER NOT NULL,
    updated_at       TEXT    NOT NULL,
    PRIMARY KEY (session_id, route)
) WITHOUT ROWID;

--bun:split

CREATE INDEX events_session_type ON events (session_id, type, seq);
