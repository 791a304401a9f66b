-- Whether a finished game's analysis is stored: the same column, rows and index as
-- migrations/postgres/0016_games_unanalysed.sql. Booleans are 0/1.
ALTER TABLE games ADD COLUMN analysed INTEGER NOT NULL DEFAULT 0 CHECK (analysed IN (0, 1));
UPDATE games SET analysed = 1 WHERE id IN (SELECT game_id FROM analyses);
CREATE INDEX games_unanalysed ON games (id) WHERE status = 'finished' AND analysed = 0;
