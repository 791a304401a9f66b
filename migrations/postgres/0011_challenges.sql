-- Challenges (v1.2): an account invites 1 to 3 others (or, for a rematch, the accounts of a
-- finished game) to a game; when every one has accepted, the game is created with every seat
-- taken, in the transaction of the last answer.
CREATE TABLE challenges (
    id         uuid    PRIMARY KEY,
    author     text    NOT NULL REFERENCES accounts (username),
    holes      integer NOT NULL,
    -- The resolved rule options of the game to create.
    rules      jsonb   NOT NULL,
    rated      boolean NOT NULL,
    -- The built-in bots seated after the accounts (a rematch's), as a JSON array of strategies.
    bots       jsonb   NOT NULL,
    status     text    NOT NULL
        CHECK (status IN ('open', 'accepted', 'declined', 'cancelled', 'expired')),
    -- Moved by every answer, cancellation and expiry: an answer is written only if the
    -- challenge is still as its writer read it (answer_challenge).
    version    integer NOT NULL DEFAULT 0,
    game_id    uuid    REFERENCES games (id),
    -- The store's fixed RFC 3339 form, compared byte by byte.
    created_at text    COLLATE "C" NOT NULL,
    expires_at text    COLLATE "C" NOT NULL
);
-- expire_challenges: the open challenges past their expiry.
CREATE INDEX challenges_open_expiry ON challenges (expires_at) WHERE status = 'open';
-- open_challenges: those an account sent.
CREATE INDEX challenges_open_by_author ON challenges (author) WHERE status = 'open';

-- The challenged accounts, in the order of `to` (their seats after the author's), and answers.
CREATE TABLE challenge_invitees (
    challenge_id uuid    NOT NULL REFERENCES challenges (id),
    position     integer NOT NULL,
    account      text    NOT NULL REFERENCES accounts (username),
    answer       text    CHECK (answer IN ('accepted', 'declined')),
    PRIMARY KEY (challenge_id, position)
);
-- open_challenges: those an account received.
CREATE INDEX challenge_invitees_account ON challenge_invitees (account);
