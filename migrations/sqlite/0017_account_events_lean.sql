-- Account events cost a move less on SQLite too (as migrations/postgres/0014 did there): the table
-- is rebuilt without its checks and without its index on created_at.
--
-- An account event is inserted only by the append that moves its game's head and numbers it from
-- its account's row (the statement joins both), so the rows it names exist by construction and
-- its data is JSON the server wrote: the foreign keys and json_valid cost every event two lookups
-- and a parse. Rows are appended in the order they are written, so their rowids rise with
-- created_at, and the purge reads the oldest rows in rowid order, as PostgreSQL's block-range
-- index does: a second B-tree on created_at cost every insert for a sweep a few times an hour.
CREATE TABLE account_events_new (
    account    TEXT    NOT NULL,
    id         INTEGER NOT NULL,
    at         TEXT    NOT NULL,
    type       TEXT    NOT NULL,
    game_id    BLOB,
    data       TEXT    NOT NULL,
    created_at INTEGER NOT NULL DEFAULT (unixepoch()),
    PRIMARY KEY (account, id)
) STRICT;
INSERT INTO account_events_new (account, id, at, type, game_id, data, created_at)
    SELECT account, id, at, type, game_id, data, created_at FROM account_events
    ORDER BY created_at, account, id;
DROP TABLE account_events;
ALTER TABLE account_events_new RENAME TO account_events;
