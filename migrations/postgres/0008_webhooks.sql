-- Webhooks (v1.2): an account's webhook, the deliveries waiting for an attempt, and the log of
-- attempts. Deliveries are made from account_events by a worker in every instance, never by
-- the append that stores the events, so a move costs what it did.

-- At most one webhook per account. enqueued_to is the id of the last account event turned into a
-- delivery: the worker enqueues the events past it and moves enqueued_to in one transaction, so an event
-- stored before a crash is delivered after it. Times are the store's fixed RFC 3339 text.
CREATE TABLE webhooks (
    account       text    PRIMARY KEY REFERENCES accounts (username),
    url           text    NOT NULL,
    -- The JSON array of the event types to deliver; NULL for every type.
    events        text,
    -- whsec_ and the base64 of 32 random bytes: the key of the signatures, so kept as it is.
    secret        text    NOT NULL,
    enqueued_to   bigint  NOT NULL,
    failing_since text,
    disabled      boolean NOT NULL DEFAULT false
);

-- A delivery waiting for its next attempt (or in one). due_at is when it may be claimed: a
-- claim moves it past the attempt's end and sets lease, so one instance makes each attempt, and
-- a claim lost with its instance is taken up again once due_at passes.
CREATE TABLE webhook_deliveries (
    account  text    NOT NULL REFERENCES webhooks (account) ON DELETE CASCADE,
    event_id bigint  NOT NULL,
    -- Attempts made so far.
    attempts integer NOT NULL DEFAULT 0,
    due_at   text    COLLATE "C" NOT NULL,
    lease    uuid,
    PRIMARY KEY (account, event_id)
);
-- claim_deliveries: the earliest due first.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (due_at);

-- Every attempt made, kept 30 days: GET /v1/account/webhook/deliveries.
CREATE TABLE webhook_attempts (
    account     text    NOT NULL,
    event_id    bigint  NOT NULL,
    attempt     integer NOT NULL,
    at          text    COLLATE "C" NOT NULL,
    status      integer,
    error       text,
    duration_ms bigint  NOT NULL,
    PRIMARY KEY (account, event_id, attempt)
);
-- webhook_attempts of an account, newest first; the purge by age.
CREATE INDEX webhook_attempts_recent ON webhook_attempts (account, at DESC);
CREATE INDEX webhook_attempts_at ON webhook_attempts (at);
