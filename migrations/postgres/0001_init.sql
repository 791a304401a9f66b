-- The event store's schema on PostgreSQL (see src/store/mod.rs).
-- Every table holding game data has game_id first in its primary key, so each can be distributed by
-- game_id on Citus with all of one game's rows on one shard (docs/SCALING.md).

-- One row per game: its settings, its secrets, and a cache of where its log ends.
CREATE TABLE games (
    id              uuid        PRIMARY KEY,
    created_at      timestamptz NOT NULL,
    status          text        NOT NULL CHECK (status IN ('waiting', 'playing', 'finished', 'cancelled')),
    -- The seq of the last entry of the log (0 before the first); the optimistic-concurrency token.
    version         bigint      NOT NULL CHECK (version >= 0),
    seats           integer     NOT NULL,
    holes           integer     NOT NULL,
    rules           jsonb       NOT NULL,
    commitment      text        NOT NULL,
    server_seed     bytea       NOT NULL CHECK (octet_length(server_seed) = 32),
    host_token_hash bytea       NOT NULL CHECK (octet_length(host_token_hash) = 32),
    private         boolean     NOT NULL,
    stacked         boolean     NOT NULL,
    -- The explicit decks of a stacked game; secret until the game ends.
    decks           jsonb,
    -- The rules engine's state after the last entry, so a request need not replay the log.
    projection      jsonb       NOT NULL,
    -- The hash of the last entry (32 zero bytes before the first).
    head_hash       bytea       NOT NULL CHECK (octet_length(head_hash) = 32),
    -- Seats taken so far.
    players         integer     NOT NULL DEFAULT 0 CHECK (players >= 0 AND players <= seats)
);

-- The lobby (list_waiting) pages through public waiting games newest first by (created_at, id);
-- only those games are indexed, so the index stays as small as the lobby.
CREATE INDEX games_lobby ON games (created_at DESC, id DESC)
    WHERE status = 'waiting' AND NOT private;

-- The append-only log. The primary key makes a duplicate seq impossible and serves paging by seq.
CREATE TABLE events (
    game_id uuid   NOT NULL REFERENCES games (id),
    seq     bigint NOT NULL CHECK (seq >= 1),
    type    text   NOT NULL,
    data    jsonb  NOT NULL,
    -- RFC 3339, stored verbatim: it is hashed as written.
    at      text   NOT NULL,
    salt    bytea  NOT NULL CHECK (octet_length(salt) = 16),
    hash    bytea  NOT NULL CHECK (octet_length(hash) = 32),
    PRIMARY KEY (game_id, seq)
);

-- Seats taken; the token hash authenticates a player (NULL for a bot).
CREATE TABLE seats (
    game_id     uuid    NOT NULL REFERENCES games (id),
    seat        integer NOT NULL CHECK (seat >= 0),
    name        text    NOT NULL,
    bot         text,
    client_seed text    NOT NULL,
    token_hash  bytea   CHECK (octet_length(token_hash) = 32),
    PRIMARY KEY (game_id, seat)
);

-- Responses to moves sent with an Idempotency-Key, scoped to game and seat.
CREATE TABLE move_idempotency (
    game_id     uuid        NOT NULL REFERENCES games (id),
    seat        integer     NOT NULL,
    key         text        NOT NULL,
    fingerprint text        NOT NULL,
    status      integer     NOT NULL,
    body        jsonb       NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (game_id, seat, key)
);

-- Responses to game creations sent with an Idempotency-Key.
CREATE TABLE create_idempotency (
    key         text        PRIMARY KEY,
    fingerprint text        NOT NULL,
    status      integer     NOT NULL,
    body        jsonb       NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- purge_expired_idempotency deletes by age; without these it would read every record.
CREATE INDEX move_idempotency_created_at ON move_idempotency (created_at);
CREATE INDEX create_idempotency_created_at ON create_idempotency (created_at);
