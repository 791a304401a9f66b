-- Seats bound to accounts (v1.2): the same columns and index as
-- migrations/postgres/0006_account_seats.sql.
ALTER TABLE seats ADD COLUMN account TEXT REFERENCES accounts (username);
ALTER TABLE games ADD COLUMN host_account TEXT REFERENCES accounts (username);

-- An account holds at most one seat per game (409 already_seated). Only bound seats are indexed.
CREATE UNIQUE INDEX seats_account ON seats (game_id, account) WHERE account IS NOT NULL;
