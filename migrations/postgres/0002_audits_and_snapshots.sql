-- The audit of a finished game, computed once when it ends (GET /v1/games/{id}/audit): NULL until
-- then, and for games finished before this migration until their audit is first asked for.
ALTER TABLE games ADD COLUMN audit_verified boolean;
-- The first log entry the audit found at fault (NULL when none, or not audited yet).
ALTER TABLE games ADD COLUMN audit_first_bad_seq bigint;

-- The engine's state after the append that dealt each hole: a replay of any entry starts from the
-- nearest snapshot at or before it, so its cost is bounded by one hole, whatever the game's length.
-- Games stored before this migration have none and are replayed from their first entry.
CREATE TABLE snapshots (
    game_id uuid   NOT NULL REFERENCES games (id),
    -- The seq of the last entry the state includes: always where a command's events end.
    seq     bigint NOT NULL CHECK (seq >= 1),
    state   jsonb  NOT NULL,
    PRIMARY KEY (game_id, seq)
);
