-- Seeks (v1.2): an account asks for a game of a given shape. Waiting seeks of one pool (the same
-- seats, holes, rules and rated) whose rating ranges admit each other are matched oldest first:
-- the game is created and every matched account seated in the transaction of the seek that
-- completes it, under a lock on the pool (place_seek).
CREATE TABLE seeks (
    id           uuid             PRIMARY KEY,
    account      text             NOT NULL REFERENCES accounts (username),
    -- The name seated and the rating matched on, as they were when the seek was placed.
    display_name text             NOT NULL,
    rating       double precision NOT NULL,
    seats        integer          NOT NULL,
    holes        integer          NOT NULL,
    -- The resolved rule options of the game to create.
    rules        jsonb            NOT NULL,
    rated        boolean          NOT NULL,
    -- seats, holes, rules and rated in one canonical text: what must be equal to match.
    pool         text             COLLATE "C" NOT NULL,
    -- The opponents' ratings this seek accepts, both or neither.
    range_lo     double precision,
    range_hi     double precision,
    bots_after_s integer,
    status       text             NOT NULL
        CHECK (status IN ('waiting', 'matched', 'cancelled', 'expired')),
    game_id      uuid             REFERENCES games (id),
    seat         integer,
    -- The store's fixed RFC 3339 form, compared byte by byte.
    created_at   text             COLLATE "C" NOT NULL,
    expires_at   text             COLLATE "C" NOT NULL,
    -- When the free seats go to the greedy bot (created_at + bots_after_s), if ever.
    bots_at      text             COLLATE "C"
);
-- place_seek: a pool's waiting seeks, oldest first.
CREATE INDEX seeks_waiting_by_pool ON seeks (pool, created_at, id) WHERE status = 'waiting';
-- An account waits in one seek at a time.
CREATE UNIQUE INDEX seeks_waiting_account ON seeks (account) WHERE status = 'waiting';
-- The sweep: seeks whose wait for bots is over, and seeks past their expiry.
CREATE INDEX seeks_waiting_bots ON seeks (bots_at) WHERE status = 'waiting' AND bots_at IS NOT NULL;
CREATE INDEX seeks_waiting_expiry ON seeks (expires_at) WHERE status = 'waiting';
