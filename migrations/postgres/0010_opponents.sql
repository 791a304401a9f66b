-- Opponents (v1.2): ratings, their history, the built-in bots as accounts, and account events
-- that belong to no game yet.

-- Every account's rating, on the scale the API shows (Weng-Lin's mu and sigma times 60: a new
-- account is 1500, deviation 500). rating_provisional is kept by the rating update, so that the
-- leaderboard's index can leave provisional ratings out.
ALTER TABLE accounts ADD COLUMN rating_value double precision NOT NULL DEFAULT 1500;
ALTER TABLE accounts ADD COLUMN rating_deviation double precision NOT NULL DEFAULT 500;
ALTER TABLE accounts ADD COLUMN rated_games integer NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN rating_provisional boolean NOT NULL DEFAULT true;
-- GET /v1/leaderboard: the established ratings, best first, paged by (rating_value, username).
CREATE INDEX accounts_leaderboard ON accounts (rating_value DESC, username)
    WHERE NOT rating_provisional;

-- A rated game (created with "rated": true), and whether its end has updated its seats' ratings.
-- A finished rated game not yet applied is the durable record of an update still to make: any
-- instance makes it (store::ratings), after a crash too.
ALTER TABLE games ADD COLUMN rated boolean NOT NULL DEFAULT false;
ALTER TABLE games ADD COLUMN ratings_applied boolean NOT NULL DEFAULT false;
-- apply_due_rating: the finished rated games still to apply (a handful at any time).
CREATE INDEX games_ratings_due ON games (id)
    WHERE rated AND status = 'finished' AND NOT ratings_applied;

-- One row per account and rated game: its rating before and after the game. at is the time of
-- the game's last entry (its end), in the store's fixed RFC 3339 form.
CREATE TABLE rating_history (
    account          text             NOT NULL REFERENCES accounts (username),
    game_id          uuid             NOT NULL REFERENCES games (id),
    at               text             COLLATE "C" NOT NULL,
    -- The order in which the updates were applied (from accounts.rated_games after it).
    games            integer          NOT NULL,
    before_value     double precision NOT NULL,
    before_deviation double precision NOT NULL,
    after_value      double precision NOT NULL,
    after_deviation  double precision NOT NULL,
    PRIMARY KEY (account, game_id)
);
-- GET /v1/accounts/{username}/ratings: an account's updates in the order they were applied.
CREATE UNIQUE INDEX rating_history_by_games ON rating_history (account, games);

-- The built-in bots, rated like everyone. No token reaches them: their token hashes are not
-- SHA-256 images anyone can produce (all zero but the last byte).
INSERT INTO accounts (username, display_name, token_hash, created_at) VALUES
    ('bot-random', 'Random bot', decode(repeat('00', 31) || '01', 'hex'), now()),
    ('bot-greedy', 'Greedy bot', decode(repeat('00', 31) || '02', 'hex'), now()),
    ('bot-expert', 'Expert bot', decode(repeat('00', 31) || '03', 'hex'), now())
ON CONFLICT (username) DO NOTHING;

-- A challenge_received event belongs to no game yet.
ALTER TABLE account_events ALTER COLUMN game_id DROP NOT NULL;
