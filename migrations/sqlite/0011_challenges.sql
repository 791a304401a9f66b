-- Challenges (v1.2): the same tables and indexes as migrations/postgres/0011_challenges.sql;
-- booleans are 0/1, JSON is TEXT.
CREATE TABLE challenges (
    id         BLOB    PRIMARY KEY NOT NULL,
    author     TEXT    NOT NULL REFERENCES accounts (username),
    holes      INTEGER NOT NULL,
    rules      TEXT    NOT NULL CHECK (json_valid(rules)),
    rated      INTEGER NOT NULL CHECK (rated IN (0, 1)),
    bots       TEXT    NOT NULL CHECK (json_valid(bots)),
    status     TEXT    NOT NULL
        CHECK (status IN ('open', 'accepted', 'declined', 'cancelled', 'expired')),
    version    INTEGER NOT NULL DEFAULT 0,
    game_id    BLOB    REFERENCES games (id),
    created_at TEXT    NOT NULL,
    expires_at TEXT    NOT NULL
) STRICT;
-- expire_challenges: the open challenges past their expiry.
CREATE INDEX challenges_open_expiry ON challenges (expires_at) WHERE status = 'open';
-- open_challenges: those an account sent.
CREATE INDEX challenges_open_by_author ON challenges (author) WHERE status = 'open';

CREATE TABLE challenge_invitees (
    challenge_id BLOB    NOT NULL REFERENCES challenges (id),
    position     INTEGER NOT NULL,
    account      TEXT    NOT NULL REFERENCES accounts (username),
    answer       TEXT    CHECK (answer IN ('accepted', 'declined')),
    PRIMARY KEY (challenge_id, position)
) STRICT;
-- open_challenges: those an account received.
CREATE INDEX challenge_invitees_account ON challenge_invitees (account);
