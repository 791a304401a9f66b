-- Accounts (v1.2): the same table as migrations/postgres/0005_accounts.sql. created_at is TEXT
-- in the store's fixed UTC form, as games.created_at.
CREATE TABLE accounts (
    -- 3 to 24 of a-z 0-9 _ -, starting with a letter: stored lowercase, compared as stored.
    username     TEXT PRIMARY KEY NOT NULL CHECK (username = lower(username)),
    display_name TEXT NOT NULL,
    -- Unique: a request's account is found by the hash of its token (account_by_token).
    token_hash   BLOB NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    created_at   TEXT NOT NULL
) STRICT;
