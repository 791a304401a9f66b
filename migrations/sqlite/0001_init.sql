-- The event store's schema on SQLite: the same tables as migrations/postgres/0001_init.sql.
-- uuid and byte columns are BLOBs, JSON is TEXT (declared TEXT so SQLite never coerces it),
-- booleans are 0/1, and idempotency times are Unix seconds.
-- games.created_at is TEXT in one fixed UTC form (2026-05-01T12:00:00.000000Z, written by the
-- store), so its text order is its time order.

-- One row per game: its settings, its secrets, and a cache of where its log ends.
CREATE TABLE games (
    id              BLOB    PRIMARY KEY NOT NULL,
    created_at      TEXT    NOT NULL,
    status          TEXT    NOT NULL CHECK (status IN ('waiting', 'playing', 'finished', 'cancelled')),
    -- The seq of the last entry of the log (0 before the first); the optimistic-concurrency token.
    version         INTEGER NOT NULL CHECK (version >= 0),
    seats           INTEGER NOT NULL,
    holes           INTEGER NOT NULL,
    rules           TEXT    NOT NULL CHECK (json_valid(rules)),
    commitment      TEXT    NOT NULL,
    server_seed     BLOB    NOT NULL CHECK (length(server_seed) = 32),
    host_token_hash BLOB    NOT NULL CHECK (length(host_token_hash) = 32),
    private         INTEGER NOT NULL CHECK (private IN (0, 1)),
    stacked         INTEGER NOT NULL CHECK (stacked IN (0, 1)),
    -- The explicit decks of a stacked game; secret until the game ends.
    decks           TEXT    CHECK (decks IS NULL OR json_valid(decks)),
    -- The rules engine's state after the last entry, so a request need not replay the log.
    projection      TEXT    NOT NULL CHECK (json_valid(projection)),
    -- The hash of the last entry (32 zero bytes before the first).
    head_hash       BLOB    NOT NULL CHECK (length(head_hash) = 32),
    -- Seats taken so far.
    players         INTEGER NOT NULL DEFAULT 0 CHECK (players >= 0 AND players <= seats)
) STRICT;

-- The lobby (list_waiting) pages through public waiting games newest first by (created_at, id);
-- only those games are indexed, so the index stays as small as the lobby.
CREATE INDEX games_lobby ON games (created_at DESC, id DESC)
    WHERE status = 'waiting' AND private = 0;

-- The append-only log. The primary key makes a duplicate seq impossible and serves paging by seq.
CREATE TABLE events (
    game_id BLOB    NOT NULL REFERENCES games (id),
    seq     INTEGER NOT NULL CHECK (seq >= 1),
    type    TEXT    NOT NULL,
    data    TEXT    NOT NULL CHECK (json_valid(data)),
    -- RFC 3339, stored verbatim: it is hashed as written.
    at      TEXT    NOT NULL,
    salt    BLOB    NOT NULL CHECK (length(salt) = 16),
    hash    BLOB    NOT NULL CHECK (length(hash) = 32),
    PRIMARY KEY (game_id, seq)
) STRICT, WITHOUT ROWID;

-- Seats taken; the token hash authenticates a player (NULL for a bot).
CREATE TABLE seats (
    game_id     BLOB    NOT NULL REFERENCES games (id),
    seat        INTEGER NOT NULL CHECK (seat >= 0),
    name        TEXT    NOT NULL,
    bot         TEXT,
    client_seed TEXT    NOT NULL,
    token_hash  BLOB    CHECK (token_hash IS NULL OR length(token_hash) = 32),
    PRIMARY KEY (game_id, seat)
) STRICT, WITHOUT ROWID;

-- Responses to moves sent with an Idempotency-Key, scoped to game and seat.
CREATE TABLE move_idempotency (
    game_id     BLOB    NOT NULL REFERENCES games (id),
    seat        INTEGER NOT NULL,
    key         TEXT    NOT NULL,
    fingerprint TEXT    NOT NULL,
    status      INTEGER NOT NULL,
    body        TEXT    NOT NULL CHECK (json_valid(body)),
    created_at  INTEGER NOT NULL DEFAULT (unixepoch()),
    PRIMARY KEY (game_id, seat, key)
) STRICT, WITHOUT ROWID;

-- Responses to game creations sent with an Idempotency-Key.
CREATE TABLE create_idempotency (
    key         TEXT    PRIMARY KEY NOT NULL,
    fingerprint TEXT    NOT NULL,
    status      INTEGER NOT NULL,
    body        TEXT    NOT NULL CHECK (json_valid(body)),
    created_at  INTEGER NOT NULL DEFAULT (unixepoch())
) STRICT, WITHOUT ROWID;

-- purge_expired_idempotency deletes by age; without these it would read every record.
CREATE INDEX move_idempotency_created_at ON move_idempotency (created_at);
CREATE INDEX create_idempotency_created_at ON create_idempotency (created_at);
