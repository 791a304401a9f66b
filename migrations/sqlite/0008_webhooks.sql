-- Webhooks (v1.2): the same tables and indexes as migrations/postgres/0008_webhooks.sql; times
-- are TEXT in the store's fixed form.

CREATE TABLE webhooks (
    account       TEXT    PRIMARY KEY REFERENCES accounts (username),
    url           TEXT    NOT NULL,
    events        TEXT    CHECK (events IS NULL OR json_valid(events)),
    secret        TEXT    NOT NULL,
    enqueued_to   INTEGER NOT NULL,
    failing_since TEXT,
    disabled      INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1))
) STRICT;

CREATE TABLE webhook_deliveries (
    account  TEXT    NOT NULL REFERENCES webhooks (account) ON DELETE CASCADE,
    event_id INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    due_at   TEXT    NOT NULL,
    lease    BLOB,
    PRIMARY KEY (account, event_id)
) STRICT;
-- claim_deliveries: the earliest due first.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (due_at);

CREATE TABLE webhook_attempts (
    account     TEXT    NOT NULL,
    event_id    INTEGER NOT NULL,
    attempt     INTEGER NOT NULL,
    at          TEXT    NOT NULL,
    status      INTEGER,
    error       TEXT,
    duration_ms INTEGER NOT NULL,
    PRIMARY KEY (account, event_id, attempt)
) STRICT;
-- webhook_attempts of an account, newest first; the purge by age.
CREATE INDEX webhook_attempts_recent ON webhook_attempts (account, at DESC);
CREATE INDEX webhook_attempts_at ON webhook_attempts (at);
