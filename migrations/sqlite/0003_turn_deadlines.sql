-- When the greedy bot may take the seats a running game waits for (the `turn_timeout_s` rule), as
-- RFC 3339 UTC text with microseconds (the form of created_at: its text order is its time order):
-- every append sets it from the game's new state, NULL when the game has no timeout or waits for
-- nobody. Games stored before this migration have no timeout, so NULL is right for them.
ALTER TABLE games ADD COLUMN deadline_at TEXT;

-- The sweeper's overdue_games: games whose deadline has passed, earliest first. Only games with a
-- deadline are indexed, so the index stays as small as the set of running games with a timeout.
CREATE INDEX games_deadline ON games (deadline_at) WHERE deadline_at IS NOT NULL;

-- The sweeper's expired_waiting_games: waiting games (public or private) created before a time.
CREATE INDEX games_waiting_since ON games (created_at) WHERE status = 'waiting';
