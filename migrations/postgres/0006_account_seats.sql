-- Seats bound to accounts (v1.2): the account whose token takes a seat, and the account whose
-- token created a game (its host). NULL for everything stored before, and for anonymous seats.
ALTER TABLE seats ADD COLUMN account text REFERENCES accounts (username);
ALTER TABLE games ADD COLUMN host_account text REFERENCES accounts (username);

-- An account holds at most one seat per game (409 already_seated): the database settles two
-- concurrent joins of one account, whatever the instance. Only bound seats are indexed.
CREATE UNIQUE INDEX seats_account ON seats (game_id, account) WHERE account IS NOT NULL;
