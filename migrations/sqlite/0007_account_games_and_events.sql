-- An account's games and events (v1.2): the same tables and indexes as
-- migrations/postgres/0007_account_games_and_events.sql; times of entries are TEXT in the store's
-- fixed form, created_at Unix seconds.

CREATE TABLE account_games (
    game_id    BLOB    NOT NULL REFERENCES games (id),
    account    TEXT    NOT NULL REFERENCES accounts (username),
    seat       INTEGER NOT NULL,
    status     TEXT    NOT NULL,
    updated_at TEXT    NOT NULL,
    your_turn  INTEGER NOT NULL CHECK (your_turn IN (0, 1)),
    won        INTEGER NOT NULL CHECK (won IN (0, 1)),
    PRIMARY KEY (game_id, account)
) STRICT;
-- list_account_games: an account's games, newest first, paged by (updated_at, game_id).
CREATE INDEX account_games_recent ON account_games (account, updated_at DESC, game_id DESC);
-- list_account_games with status=: the same order within one status.
CREATE INDEX account_games_by_status
    ON account_games (account, status, updated_at DESC, game_id DESC);
-- list_account_games with turn=mine: only the games waiting for the account are indexed.
CREATE INDEX account_games_your_turn ON account_games (account, updated_at DESC, game_id DESC)
    WHERE your_turn = 1;

-- The last id given to one of the account's events (ids increase per account).
ALTER TABLE accounts ADD COLUMN last_event_id INTEGER NOT NULL DEFAULT 0;

-- Account events (game_started, your_turn, game_ended), kept 30 days.
CREATE TABLE account_events (
    account    TEXT    NOT NULL REFERENCES accounts (username),
    id         INTEGER NOT NULL,
    at         TEXT    NOT NULL,
    type       TEXT    NOT NULL,
    game_id    BLOB    NOT NULL REFERENCES games (id),
    data       TEXT    NOT NULL CHECK (json_valid(data)),
    created_at INTEGER NOT NULL DEFAULT (unixepoch()),
    PRIMARY KEY (account, id)
) STRICT;
-- purge_expired_idempotency also deletes events older than 30 days by this.
CREATE INDEX account_events_created_at ON account_events (created_at);
