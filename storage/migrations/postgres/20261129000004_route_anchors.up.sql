CREATE TABLE route_anchors (
    session_id       TEXT   NOT NULL,
    route            TEXT   NOT NULL,
    through_seq      BIGINT NOT NULL,
    digest           TEXT   NOT NULL,
    input_tokens     BIGINT NOT NULL,
    estimated_tokens BIGINT NOT NULL,
    updated_at       TEXT   NOT NULL,
    PRIMARY KEY (session_id, route)
);

--bun:split

CREATE INDEX events_session_type ON events (session_id, type, seq);
