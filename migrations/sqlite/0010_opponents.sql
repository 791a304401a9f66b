-- Opponents (v1.2): the same columns, table, indexes and rows as
-- migrations/postgres/0010_opponents.sql. Booleans are 0/1.

ALTER TABLE accounts ADD COLUMN rating_value REAL NOT NULL DEFAULT 1500;
ALTER TABLE accounts ADD COLUMN rating_deviation REAL NOT NULL DEFAULT 500;
ALTER TABLE accounts ADD COLUMN rated_games INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN rating_provisional INTEGER NOT NULL DEFAULT 1
    CHECK (rating_provisional IN (0, 1));
-- GET /v1/leaderboard: the established ratings, best first, paged by (rating_value, username).
CREATE INDEX accounts_leaderboard ON accounts (rating_value DESC, username)
    WHERE rating_provisional = 0;

ALTER TABLE games ADD COLUMN rated INTEGER NOT NULL DEFAULT 0 CHECK (rated IN (0, 1));
ALTER TABLE games ADD COLUMN ratings_applied INTEGER NOT NULL DEFAULT 0
    CHECK (ratings_applied IN (0, 1));
-- apply_due_rating: the finished rated games still to apply (a handful at any time).
CREATE INDEX games_ratings_due ON games (id)
    WHERE rated = 1 AND status = 'finished' AND ratings_applied = 0;

CREATE TABLE rating_history (
    account          TEXT    NOT NULL REFERENCES accounts (username),
    game_id          BLOB    NOT NULL REFERENCES games (id),
    at               TEXT    NOT NULL,
    games            INTEGER NOT NULL,
    before_value     REAL    NOT NULL,
    before_deviation REAL    NOT NULL,
    after_value      REAL    NOT NULL,
    after_deviation  REAL    NOT NULL,
    PRIMARY KEY (account, game_id)
) STRICT;
-- GET /v1/accounts/{username}/ratings: an account's updates in the order they were applied.
CREATE UNIQUE INDEX rating_history_by_games ON rating_history (account, games);

-- The built-in bots; no token reaches them (their token hashes are no SHA-256 image).
INSERT OR IGNORE INTO accounts (username, display_name, token_hash, created_at) VALUES
    ('bot-random', 'Random bot', x'0000000000000000000000000000000000000000000000000000000000000001', strftime('%Y-%m-%dT%H:%M:%S.000000Z', 'now')),
    ('bot-greedy', 'Greedy bot', x'0000000000000000000000000000000000000000000000000000000000000002', strftime('%Y-%m-%dT%H:%M:%S.000000Z', 'now')),
    ('bot-expert', 'Expert bot', x'0000000000000000000000000000000000000000000000000000000000000003', strftime('%Y-%m-%dT%H:%M:%S.000000Z', 'now'));

-- A challenge_received event belongs to no game yet: SQLite cannot drop a NOT NULL, so the table
-- is rebuilt with its rows and index.
CREATE TABLE account_events_new (
    account    TEXT    NOT NULL REFERENCES accounts (username),
    id         INTEGER NOT NULL,
    at         TEXT    NOT NULL,
    type       TEXT    NOT NULL,
    game_id    BLOB    REFERENCES games (id),
    data       TEXT    NOT NULL CHECK (json_valid(data)),
    created_at INTEGER NOT NULL DEFAULT (unixepoch()),
    PRIMARY KEY (account, id)
) STRICT;
INSERT INTO account_events_new (account, id, at, type, game_id, data, created_at)
    SELECT account, id, at, type, game_id, data, created_at FROM account_events;
DROP TABLE account_events;
ALTER TABLE account_events_new RENAME TO account_events;
CREATE INDEX account_events_created_at ON account_events (created_at);
