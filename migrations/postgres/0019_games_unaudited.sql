-- unaudited_games: the finished games whose audit is not stored, which the audit job of every
-- instance works through (after a crash, a lost wake-up, or for games finished before audits
-- were stored). None once the job is through, so the index stays small.
CREATE INDEX games_unaudited ON games (id) WHERE status = 'finished' AND audit_verified IS NULL;
