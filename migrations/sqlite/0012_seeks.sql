-- Seeks (v1.2): the same table and indexes as migrations/postgres/0012_seeks.sql; booleans are
-- 0/1, JSON is TEXT. Matching runs under the database's write lock, which every write takes.
CREATE TABLE seeks (
    id           BLOB    PRIMARY KEY NOT NULL,
    account      TEXT    NOT NULL REFERENCES accounts (username),
    display_name TEXT    NOT NULL,
    rating       REAL    NOT NULL,
    seats        INTEGER NOT NULL,
    holes        INTEGER NOT NULL,
    rules        TEXT    NOT NULL CHECK (json_valid(rules)),
    rated        INTEGER NOT NULL CHECK (rated IN (0, 1)),
    pool         TEXT    NOT NULL,
    range_lo     REAL,
    range_hi     REAL,
    bots_after_s INTEGER,
    status       TEXT    NOT NULL
        CHECK (status IN ('waiting', 'matched', 'cancelled', 'expired')),
    game_id      BLOB    REFERENCES games (id),
    seat         INTEGER,
    created_at   TEXT    NOT NULL,
    expires_at   TEXT    NOT NULL,
    bots_at      TEXT
) STRICT;
CREATE INDEX seeks_waiting_by_pool ON seeks (pool, created_at, id) WHERE status = 'waiting';
CREATE UNIQUE INDEX seeks_waiting_account ON seeks (account) WHERE status = 'waiting';
CREATE INDEX seeks_waiting_bots ON seeks (bots_at) WHERE status = 'waiting' AND bots_at IS NOT NULL;
CREATE INDEX seeks_waiting_expiry ON seeks (expires_at) WHERE status = 'waiting';
