//! The SQLite backend, for a single instance (development, small deployments): how it connects,
//! starts a write, and its [`Statements`].
//!
//! The file runs in WAL mode (readers never wait for the writer) with foreign keys on. Every write
//! transaction starts with `BEGIN IMMEDIATE`, which takes the database's write lock up front: a
//! second writer waits for it (up to `busy_timeout`, set to the pool's acquire timeout) and then
//! reads the version its predecessor wrote, so a lost race is a `Conflict`. A database still busy
//! or locked after that is `Busy` (a 409 that asks the client to try again), never
//! `Unavailable`: the database is there, another writer holds it.

use std::str::FromStr;

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions,
    SqliteQueryResult,
};
use sqlx::{QueryBuilder, Sqlite, Transaction};
use uuid::Uuid;

use super::accounts::ACCOUNT_EVENTS_TTL;
use super::notify::Changes;
use super::sql::{
    AccountStatements, Backend, Batch, RatingStatements, SqlStore, Statements, WebhookStatements,
    due_deliveries, hooks_behind,
};
use super::{IDEMPOTENCY_TTL, PoolOptions, StoreError};

/// How long opening the file for its migration, and the migration's wait for another process's
/// write lock on it, may take.
const MIGRATION_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// A pool of connections to one SQLite file.
pub type SqliteStore = SqlStore<Sqlite>;

impl SqliteStore {
    /// Opens (creating the file if missing) and migrates.
    ///
    /// The migration runs on a connection of its own, outside the pool: opening a file and
    /// migrating it may rightly take longer than a request may wait for a connection (on a busy
    /// machine, a second or more), and a start that fails for that would be no answer at all.
    pub async fn connect(url: &str, options: &PoolOptions) -> Result<Self, StoreError> {
        let connect_options = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .foreign_keys(true);
        let migrating = SqlitePoolOptions::new()
            .max_connections(1)
            .acquire_timeout(MIGRATION_WAIT)
            .connect_with(connect_options.clone().busy_timeout(MIGRATION_WAIT))
            .await?;
        let migrated = sqlx::migrate!("migrations/sqlite").run(&migrating).await;
        migrating.close().await;
        migrated?;
        let pool = SqlitePoolOptions::new()
            .max_connections(options.max_connections)
            .acquire_timeout(options.acquire_timeout)
            .connect_lazy_with(connect_options.busy_timeout(options.acquire_timeout));
        Ok(SqlStore {
            pool,
            changes: Changes::in_process(),
            distributed: None,
        })
    }
}

/// The statements of an append, in order, each reading one named part of a [`Batch`] (`$1`)
/// with `jsonb_each`, whose rows `->>` reads as they are (with `json_each`, each `->>` parsed
/// its row's text again): the first moves the game rows (`$1` the games part) that are at their
/// expected version and not cancelled and returns their ids; the others insert the rows of those
/// games only (`$2`, the JSON array of their ids). Bytes arrive as hex (`unhex`), ids as
/// hyphenated UUIDs; `->` keeps a projection, a state or an event's data as JSON text.
const MOVE_GAMES: &str = "\
    WITH documents AS MATERIALIZED (SELECT key + 1 AS place, value FROM json_each($2)) \
    UPDATE games SET version = g.version, head_hash = unhex(g.head_hash), status = g.status, \
        projection = (SELECT value FROM documents WHERE place = g.projection), \
        players = players + g.joined, deadline_at = g.deadline_at, \
        last_entry_seq = g.last_entry_seq, last_entry_at = g.last_entry_at \
    FROM (SELECT unhex(value ->> 'id', '-') AS id, value ->> 'expected' AS expected, \
              value ->> 'version' AS version, value ->> 'head_hash' AS head_hash, \
              value ->> 'status' AS status, value ->> 'projection' AS projection, \
              value ->> 'joined' AS joined, value ->> 'deadline_at' AS deadline_at, \
              value ->> 'last_entry_seq' AS last_entry_seq, \
              value ->> 'last_entry_at' AS last_entry_at \
          FROM jsonb_each($1)) AS g \
    WHERE games.id = g.id AND games.version = g.expected AND games.status <> 'cancelled' \
    RETURNING games.id";

/// See [`MOVE_GAMES`]: the entries (`$1` the events part).
const INSERT_EVENTS: &str = "\
    INSERT INTO events (game_id, seq, type, data, at, salt, hash) \
    SELECT unhex(value ->> 'game_id', '-'), value ->> 'seq', value ->> 'type', value -> 'data', \
        value ->> 'at', unhex(value ->> 'salt'), unhex(value ->> 'hash') \
    FROM jsonb_each($1) WHERE value ->> 'game_id' IN (SELECT value FROM json_each($2))";

/// See [`MOVE_GAMES`]: the seats taken (`$1` the seats part).
const INSERT_SEATS: &str = "\
    INSERT INTO seats (game_id, seat, name, bot, client_seed, token_hash, account) \
    SELECT unhex(value ->> 'game_id', '-'), value ->> 'seat', value ->> 'name', value ->> 'bot', \
        value ->> 'client_seed', unhex(value ->> 'token_hash'), value ->> 'account' \
    FROM jsonb_each($1) WHERE value ->> 'game_id' IN (SELECT value FROM json_each($2))";

/// See [`MOVE_GAMES`]: first deletes the expired records (older than `$3` seconds) with the
/// keys of the stored responses (`$1` the responses part), which [`INSERT_RESPONSES`] replaces.
const EXPIRE_RESPONSES: &str = "\
    DELETE FROM move_idempotency \
    WHERE created_at <= unixepoch() - $3 AND (game_id, seat, key) IN \
        (SELECT unhex(value ->> 'game_id', '-'), value ->> 'seat', value ->> 'key' \
         FROM jsonb_each($1) WHERE value ->> 'game_id' IN (SELECT value FROM json_each($2)))";

/// See [`MOVE_GAMES`]: the stored responses (`$1` the responses part); a key still
/// recorded fails with a unique violation (`Conflict`).
const INSERT_RESPONSES: &str = "\
    INSERT INTO move_idempotency (game_id, seat, key, fingerprint, status, body) \
    SELECT unhex(value ->> 'game_id', '-'), value ->> 'seat', value ->> 'key', \
        value ->> 'fingerprint', value ->> 'status', value -> 'body' \
    FROM jsonb_each($1) WHERE value ->> 'game_id' IN (SELECT value FROM json_each($2))";

/// See [`MOVE_GAMES`]: the snapshots (`$1` the snapshots part, `$3` the documents).
const INSERT_SNAPSHOTS: &str = "\
    WITH documents AS MATERIALIZED (SELECT key + 1 AS place, value FROM json_each($3)) \
    INSERT INTO snapshots (game_id, seq, state) \
    SELECT unhex(s.value ->> 'game_id', '-'), s.value ->> 'seq', \
        (SELECT d.value FROM documents AS d WHERE d.place = s.value ->> 'state') \
    FROM jsonb_each($1) AS s WHERE s.value ->> 'game_id' IN (SELECT value FROM json_each($2))";

/// See [`MOVE_GAMES`]: where the games stand for their accounts (`$1` the account games part).
const LIST_ACCOUNT_GAMES: &str = "\
    INSERT INTO account_games (game_id, account, seat, status, updated_at, your_turn, won) \
    SELECT unhex(value ->> 'game_id', '-'), value ->> 'account', value ->> 'seat', \
        value ->> 'status', value ->> 'updated_at', 0, value ->> 'won' \
    FROM jsonb_each($1) WHERE value ->> 'game_id' IN (SELECT value FROM json_each($2)) \
    ON CONFLICT (game_id, account) DO UPDATE SET status = excluded.status, \
        updated_at = excluded.updated_at, won = excluded.won";

/// See [`MOVE_GAMES`]: the accounts' events (`$1` the account events part), numbered after each
/// account's `last_event_id` in the order of `ord` (the write lock keeps the numbers apart).
const INSERT_ACCOUNT_EVENTS: &str = "\
    WITH noticed AS (SELECT value ->> 'game_id' AS game_id, value ->> 'account' AS account, \
            value ->> 'ord' AS ord, value ->> 'at' AS at, value ->> 'type' AS type, \
            value -> 'data' AS data \
        FROM jsonb_each($1) WHERE value ->> 'game_id' IN (SELECT value FROM json_each($2))) \
    INSERT INTO account_events (account, id, at, type, game_id, data) \
    SELECT n.account, a.last_event_id + row_number() OVER (PARTITION BY n.account ORDER BY n.ord), \
        n.at, n.type, unhex(n.game_id, '-'), n.data \
    FROM noticed AS n JOIN accounts AS a ON a.username = n.account";

/// After [`INSERT_ACCOUNT_EVENTS`]: each account's `last_event_id` moves to its last event.
const NUMBER_ACCOUNT_EVENTS: &str = "\
    UPDATE accounts SET last_event_id = \
        (SELECT max(id) FROM account_events WHERE account = accounts.username) \
    WHERE username IN (SELECT value ->> 'account' FROM jsonb_each($1) \
        WHERE value ->> 'game_id' IN (SELECT value FROM json_each($2)))";

impl Backend for Sqlite {
    /// Seconds, as `unixepoch()` counts them.
    type Ttl = i64;

    const IDEMPOTENCY_TTL: i64 = IDEMPOTENCY_TTL.as_secs() as i64;

    const STATEMENTS: Statements = Statements {
        insert_game: "\
            INSERT INTO games (id, created_at, status, version, seats, holes, rules, commitment, \
                server_seed, host_token_hash, private, stacked, decks, projection, head_hash, \
                host_account, rated) \
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)",
        load_game: "\
            SELECT id, created_at, status, version, seats, holes, players, rules, commitment, \
                server_seed, host_token_hash, private, stacked, decks, projection, head_hash, \
                audit_verified, audit_first_bad_seq, host_account, \
                (SELECT json_group_array(json_array(seat, \
                            CASE WHEN token_hash IS NULL THEN NULL \
                                 ELSE lower(hex(token_hash)) END, account)) \
                 FROM (SELECT seat, token_hash, account FROM seats \
                       WHERE seats.game_id = games.id ORDER BY seat)) AS seat_tokens \
            FROM games WHERE id = $1 AND status <> 'cancelled'",
        insert_create_response: "\
            INSERT INTO create_idempotency (key, fingerprint, status, body) \
            VALUES ($2, $3, $4, $5) \
            ON CONFLICT (key) DO UPDATE \
            SET fingerprint = excluded.fingerprint, status = excluded.status, \
                body = excluded.body, created_at = unixepoch() \
            WHERE create_idempotency.created_at <= unixepoch() - $1",
        find_game_response: "\
            SELECT fingerprint, status, body FROM move_idempotency \
            WHERE game_id = $2 AND seat = $3 AND key = $4 AND created_at > unixepoch() - $1",
        find_create_response: "\
            SELECT fingerprint, status, body FROM create_idempotency \
            WHERE key = $2 AND created_at > unixepoch() - $1",
        purge_game_responses: "\
            DELETE FROM move_idempotency WHERE (game_id, seat, key) IN \
                (SELECT game_id, seat, key FROM move_idempotency \
                 WHERE created_at <= unixepoch() - $1 LIMIT $2)",
        purge_create_responses: "\
            DELETE FROM create_idempotency WHERE key IN \
                (SELECT key FROM create_idempotency \
                 WHERE created_at <= unixepoch() - $1 LIMIT $2)",
        list_waiting: "\
            SELECT id, created_at, version, seats, players, projection FROM games \
            WHERE status = 'waiting' AND private = 0 AND stacked = 0 AND players < seats \
            ORDER BY created_at DESC, id DESC LIMIT $1",
        list_waiting_after: "\
            SELECT id, created_at, version, seats, players, projection FROM games \
            WHERE status = 'waiting' AND private = 0 AND stacked = 0 AND players < seats \
                AND (created_at, id) < ($2, $3) \
            ORDER BY created_at DESC, id DESC LIMIT $1",
        overdue_games: "\
            SELECT id FROM games WHERE deadline_at IS NOT NULL AND deadline_at <= $1 \
            ORDER BY deadline_at LIMIT $2",
        postpone_deadline: "\
            UPDATE games SET deadline_at = $2 WHERE id = $1 AND deadline_at <= $3",
        expired_waiting_games: "\
            SELECT id FROM games WHERE status = 'waiting' AND created_at <= $1 \
            ORDER BY created_at LIMIT $2",
        cancel_game: "UPDATE games SET status = 'cancelled' WHERE id = $1 AND status = 'waiting'",
        unanalysed_games: "\
            SELECT id FROM ( \
                SELECT id, ended, row_number() OVER ( \
                    PARTITION BY host_account ORDER BY ended DESC, id) AS turn \
                FROM (SELECT id, host_account, COALESCE(last_entry_at, '') AS ended FROM games \
                      WHERE status = 'finished' AND analysed = 0 ORDER BY id LIMIT 1000) AS backlog \
            ) AS unanalysed \
            ORDER BY turn, ended DESC, id LIMIT $1",
        mark_analysed: "UPDATE games SET analysed = 1 WHERE id = $1",
        unaudited_games: "\
            SELECT id FROM games WHERE status = 'finished' AND audit_verified IS NULL \
            ORDER BY id LIMIT $1",
    };

    const ACCOUNT_EVENTS_TTL: i64 = ACCOUNT_EVENTS_TTL.as_secs() as i64;

    /// The write transaction holds the database: no other claim runs meanwhile.
    const WEBHOOK_STATEMENTS: WebhookStatements = WebhookStatements {
        hooks_behind: hooks_behind!(),
        due_deliveries: due_deliveries!(),
        hooks_behind_unlocked: hooks_behind!(),
        due_deliveries_unlocked: due_deliveries!(),
    };

    const ACCOUNT_STATEMENTS: AccountStatements = AccountStatements {
        list_games: "\
            SELECT game_id, seat, updated_at, version, projection FROM ( \
                SELECT * FROM ( \
                    SELECT ag.game_id, ag.seat, \
                        CASE WHEN g.last_entry_seq = g.version THEN g.last_entry_at \
                            ELSE (SELECT e.at FROM events AS e \
                                  WHERE e.game_id = g.id AND e.seq = g.version) \
                        END AS updated_at, g.version, g.projection \
                    FROM account_games AS ag JOIN games AS g ON g.id = ag.game_id \
                    WHERE ag.account = $1 AND ag.status <> 'finished' \
                        AND g.status <> 'cancelled' AND ($5 = '' OR ag.status = $5)) AS unfinished \
                WHERE (updated_at, game_id) < ($2, $3) \
                UNION ALL \
                SELECT * FROM ( \
                    SELECT ag.game_id, ag.seat, ag.updated_at, g.version, g.projection \
                    FROM account_games AS ag JOIN games AS g ON g.id = ag.game_id \
                    WHERE ag.account = $1 AND ag.status = 'finished' AND $5 IN ('', 'finished') \
                        AND (ag.updated_at, ag.game_id) < ($2, $3) \
                    ORDER BY ag.updated_at DESC, ag.game_id DESC LIMIT $4) AS finished) AS listed \
            ORDER BY updated_at DESC, game_id DESC LIMIT $4",
        purge_events: "\
            DELETE FROM account_events WHERE rowid IN \
                (SELECT rowid FROM (SELECT rowid, created_at FROM account_events \
                     ORDER BY rowid LIMIT $2) \
                 WHERE created_at <= unixepoch() - $1)",
        insert: "\
            INSERT INTO accounts (username, display_name, token_hash, created_at) \
            VALUES ($1, $2, $3, $4)",
        by_token: "\
            SELECT username, display_name, token_hash, created_at, rating_value, \
                rating_deviation, rated_games \
            FROM accounts WHERE token_hash = $1",
        by_name: "\
            SELECT username, display_name, token_hash, created_at, rating_value, \
                rating_deviation, rated_games \
            FROM accounts WHERE username = $1",
    };

    const RATING_STATEMENTS: RatingStatements = RatingStatements {
        // The write transaction holds the database's write lock.
        lock: None,
        due_game: "\
            SELECT g.id, g.projection, e.at FROM games AS g \
            JOIN events AS e ON e.game_id = g.id AND e.seq = g.version \
            WHERE g.rated = 1 AND g.status = 'finished' AND g.ratings_applied = 0 \
            ORDER BY e.at, g.id LIMIT 1",
        rating_of: "\
            SELECT rating_value, rating_deviation, rated_games FROM accounts WHERE username = $1",
        leaderboard: "\
            SELECT username, display_name, rating_value, rating_deviation, rated_games \
            FROM accounts WHERE rating_provisional = 0 \
            ORDER BY rating_value DESC, username LIMIT $1",
        leaderboard_after: "\
            SELECT username, display_name, rating_value, rating_deviation, rated_games \
            FROM accounts WHERE rating_provisional = 0 AND rating_value <= $2 \
                AND (rating_value < $2 OR username > $3) \
            ORDER BY rating_value DESC, username LIMIT $1",
    };

    /// One process owns the file: the store wakes its own hub after each commit.
    const KEY_LOCK: Option<&'static str> = None;

    const NOTIFIES_ON_COMMIT: bool = false;

    /// One: SQLite writes one transaction at a time, and a second batch would only wait for the
    /// write lock in SQLite's busy handler, which sleeps in steps of up to 100 ms and lets other
    /// writers (a creation, an audit) starve past the lock timeout.
    const CONCURRENT_BATCHES: usize = 1;

    /// `BEGIN IMMEDIATE`: the write lock up front (see the module doc).
    async fn begin_write(pool: &SqlitePool) -> Result<Transaction<'static, Sqlite>, sqlx::Error> {
        pool.begin_with("BEGIN IMMEDIATE").await
    }

    /// [`MOVE_GAMES`], then the rows of the games it moved: one statement per part.
    async fn write_batch(
        conn: &mut SqliteConnection,
        batch: &Batch<'_>,
    ) -> Result<Vec<Uuid>, StoreError> {
        // The documents as one JSON array, which SQLite reads with `json_each`.
        let documents = format!("[{}]", batch.documents.join(","));
        let moved: Vec<Uuid> = sqlx::query_scalar(MOVE_GAMES)
            .bind(&batch.games)
            .bind(&documents)
            .fetch_all(&mut *conn)
            .await?;
        if moved.is_empty() {
            return Ok(moved);
        }
        let written = serde_json::to_string(&moved)
            .map_err(|e| StoreError::Internal(format!("the ids of the games moved: {e}")))?;
        sqlx::query(EXPIRE_RESPONSES)
            .bind(&batch.responses)
            .bind(&written)
            .bind(Self::IDEMPOTENCY_TTL)
            .execute(&mut *conn)
            .await?;
        let parts = [
            (INSERT_EVENTS, &batch.events),
            (INSERT_SEATS, &batch.seats),
            (INSERT_RESPONSES, &batch.responses),
            (LIST_ACCOUNT_GAMES, &batch.account_games),
            (INSERT_ACCOUNT_EVENTS, &batch.account_events),
            (NUMBER_ACCOUNT_EVENTS, &batch.account_events),
        ];
        for (statement, part) in parts {
            sqlx::query(statement)
                .bind(part)
                .bind(&written)
                .execute(&mut *conn)
                .await?;
        }
        sqlx::query(INSERT_SNAPSHOTS)
            .bind(&batch.snapshots)
            .bind(&written)
            .bind(&documents)
            .execute(&mut *conn)
            .await?;
        Ok(moved)
    }

    /// One transaction under the write lock (see the module doc).
    async fn append_batch(pool: &SqlitePool, batch: &Batch<'_>) -> Result<Vec<Uuid>, StoreError> {
        let mut tx = Self::begin_write(pool).await?;
        let moved = Self::write_batch(&mut tx, batch).await?;
        tx.commit().await?;
        Ok(moved)
    }

    /// One parameter per game (SQLite has no arrays).
    async fn game_versions(
        pool: &SqlitePool,
        ids: &[Uuid],
    ) -> Result<Vec<(Uuid, i64)>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut query = QueryBuilder::<Sqlite>::new(
            "SELECT id, version FROM games WHERE status <> 'cancelled' AND id IN (",
        );
        let mut list = query.separated(", ");
        for id in ids {
            list.push_bind(*id);
        }
        query.push(")");
        Ok(query.build_query_as().fetch_all(pool).await?)
    }

    fn rows_affected(result: &SqliteQueryResult) -> u64 {
        result.rows_affected()
    }
}
