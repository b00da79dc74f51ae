-- The terminal_exited events, which name the artifact holding the last
-- part of a terminal's output (outputSha256): deleting a session looks
-- among them for other references to the bytes it would delete. Partial,
-- so no other event pays for it at append.
CREATE INDEX events_terminal_exited ON events (session_id) WHERE type = 'terminal_exited';
