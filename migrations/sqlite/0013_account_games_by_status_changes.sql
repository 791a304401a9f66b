-- An account's games without a write per move: the same indexes as
-- migrations/postgres/0013_account_games_by_status_changes.sql. The your_turn column is no longer
-- read (new rows write 0); SQLite cannot give it a default without rebuilding the table, and the
-- previous release's instances still write it.

CREATE INDEX account_games_finished ON account_games (account, updated_at DESC, game_id DESC)
    WHERE status = 'finished';
CREATE INDEX account_games_unfinished ON account_games (account) WHERE status <> 'finished';

DROP INDEX account_games_recent;
DROP INDEX account_games_by_status;
DROP INDEX account_games_your_turn;
