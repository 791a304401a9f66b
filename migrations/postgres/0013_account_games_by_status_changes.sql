-- An account's games without a write per move (v1.2). A row of account_games now changes only
-- when the account's seat is taken and when the game's status changes (it starts, it ends), so a
-- move no longer rewrites a row and its three indexes per account seat. Where an unfinished game
-- stands is read from the game itself: the time of its last entry from its last event, and
-- whether the account may move from its projection.

-- list_account_games, finished games: newest first, paged by (updated_at, game_id); updated_at
-- is final once the game has ended. Also account_game_counts.
CREATE INDEX account_games_finished ON account_games (account, updated_at DESC, game_id DESC)
    WHERE status = 'finished';
-- list_account_games, unfinished games: all of one account's, sorted by their last entry's time
-- (an account has few unfinished games at once; its finished ones are the many).
CREATE INDEX account_games_unfinished ON account_games (account) WHERE status <> 'finished';

DROP INDEX account_games_recent;
DROP INDEX account_games_by_status;
DROP INDEX account_games_your_turn;

-- No longer read: new rows write false. The column stays so that instances of the previous
-- release, which write it, keep working during a rolling upgrade.
ALTER TABLE account_games ALTER COLUMN your_turn SET DEFAULT false;
