-- An account's games and events (v1.2), written by the append that changes the game, in the same
-- statement.

-- One row per seat bound to an account: where the game stands for it after the game's last
-- append. GET /v1/account/games reads it alone (no scan of games or seats). updated_at is the
-- time of the game's last entry in the store's fixed RFC 3339 form, compared byte by byte.
CREATE TABLE account_games (
    game_id    uuid    NOT NULL REFERENCES games (id),
    account    text    NOT NULL REFERENCES accounts (username),
    seat       integer NOT NULL,
    status     text    NOT NULL,
    updated_at text    COLLATE "C" NOT NULL,
    your_turn  boolean NOT NULL,
    won        boolean NOT NULL,
    PRIMARY KEY (game_id, account)
);
-- list_account_games: an account's games, newest first, paged by (updated_at, game_id).
CREATE INDEX account_games_recent ON account_games (account, updated_at DESC, game_id DESC);
-- list_account_games with status=: the same order within one status.
CREATE INDEX account_games_by_status
    ON account_games (account, status, updated_at DESC, game_id DESC);
-- list_account_games with turn=mine: only the games waiting for the account are indexed.
CREATE INDEX account_games_your_turn ON account_games (account, updated_at DESC, game_id DESC)
    WHERE your_turn;

-- The last id given to one of the account's events: ids increase per account, with no gap seen
-- by a reader, since the append that takes them holds the account's row until it commits.
ALTER TABLE accounts ADD COLUMN last_event_id bigint NOT NULL DEFAULT 0;

-- Account events (game_started, your_turn, game_ended), kept 30 days.
CREATE TABLE account_events (
    account text   NOT NULL REFERENCES accounts (username),
    id      bigint NOT NULL,
    at      text   NOT NULL,
    type    text   NOT NULL,
    game_id uuid   NOT NULL REFERENCES games (id),
    data    jsonb  NOT NULL,
    -- When it was stored: the purge deletes by it.
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account, id)
);
-- purge_expired_idempotency also deletes events older than 30 days by this.
CREATE INDEX account_events_created_at ON account_events (created_at);
