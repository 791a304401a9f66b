-- Whether a finished game's analysis is stored, kept on the game row so that the analysis
-- threads' search for finished games without one reads those games only: with an anti-join on
-- analyses it read every finished game, a whole table of them on a database where each one is
-- analysed.
ALTER TABLE games ADD COLUMN analysed boolean NOT NULL DEFAULT false;
UPDATE games SET analysed = true WHERE id IN (SELECT game_id FROM analyses);
-- unanalysed_games: the finished games still to analyse (none, once the threads are through).
CREATE INDEX games_unanalysed ON games (id) WHERE status = 'finished' AND NOT analysed;
