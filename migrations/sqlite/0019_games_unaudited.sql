-- unaudited_games: the same index as migrations/postgres/0019_games_unaudited.sql.
CREATE INDEX games_unaudited ON games (id) WHERE status = 'finished' AND audit_verified IS NULL;
