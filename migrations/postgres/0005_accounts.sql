-- Accounts (v1.2): one identity across games. The token is kept only as its SHA-256; rotating it
-- replaces the hash, so the old token is refused at once by every instance (none caches them).
CREATE TABLE accounts (
    -- 3 to 24 of a-z 0-9 _ -, starting with a letter: stored lowercase, compared as stored.
    username     text        PRIMARY KEY CHECK (username = lower(username)),
    display_name text        NOT NULL,
    -- Unique: a request's account is found by the hash of its token (account_by_token).
    token_hash   bytea       NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
    created_at   timestamptz NOT NULL
);
