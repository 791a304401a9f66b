-- Account events cost a move less (v1.2).

-- purge_account_events finds the events older than 30 days by created_at, which rises with the
-- table's physical order: a block-range index serves it at a fraction of a B-tree's cost to
-- every insert.
CREATE INDEX account_events_created_at_brin ON account_events USING brin (created_at);
DROP INDEX account_events_created_at;

-- An account event is inserted only by the append that moves its game's head and numbers it
-- from its account's row (the statement joins both), so the rows it names exist by
-- construction; the foreign keys' checks cost every event two lookups and row locks.
ALTER TABLE account_events DROP CONSTRAINT account_events_account_fkey;
ALTER TABLE account_events DROP CONSTRAINT account_events_game_id_fkey;
