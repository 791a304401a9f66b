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
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteQueryResult,
};
use sqlx::types::Json;
use sqlx::{QueryBuilder, Sqlite, Transaction};
use uuid::Uuid;

use super::notify::Changes;
use super::sql::{Backend, Sealed, SqlStore, Statements};
use super::{IDEMPOTENCY_TTL, PoolOptions, StoreError, normalize_created_at};

/// A pool of connections to one SQLite file.
pub type SqliteStore = SqlStore<Sqlite>;

impl SqliteStore {
    /// Opens (creating the file if missing) and migrates.
    pub async fn connect(url: &str, options: &PoolOptions) -> Result<Self, StoreError> {
        let connect_options = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .foreign_keys(true)
            .busy_timeout(options.acquire_timeout);
        let pool = SqlitePoolOptions::new()
            .max_connections(options.max_connections)
            .acquire_timeout(options.acquire_timeout)
            .connect_with(connect_options)
            .await?;
        sqlx::migrate!("migrations/sqlite").run(&pool).await?;
        Ok(SqlStore {
            pool,
            changes: Changes::in_process(),
        })
    }
}

impl Backend for Sqlite {
    /// Seconds, as `unixepoch()` counts them.
    type Ttl = i64;

    const IDEMPOTENCY_TTL: i64 = IDEMPOTENCY_TTL.as_secs() as i64;

    const STATEMENTS: Statements = Statements {
        insert_game: "\
            INSERT INTO games (id, created_at, status, version, seats, holes, rules, commitment, \
                server_seed, host_token_hash, private, stacked, decks, projection, head_hash) \
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
        load_game: "\
            SELECT id, created_at, status, version, seats, holes, players, rules, commitment, \
                server_seed, host_token_hash, private, stacked, decks, projection, head_hash, \
                audit_verified, audit_first_bad_seq, \
                (SELECT json_group_array(json_array(seat, \
                            CASE WHEN token_hash IS NULL THEN NULL \
                                 ELSE lower(hex(token_hash)) END)) \
                 FROM (SELECT seat, token_hash FROM seats \
                       WHERE seats.game_id = games.id ORDER BY seat)) AS seat_tokens \
            FROM games WHERE id = $1 AND status <> 'cancelled'",
        insert_move_response: "\
            INSERT INTO move_idempotency (game_id, seat, key, fingerprint, status, body) \
            VALUES ($2, $3, $4, $5, $6, $7) \
            ON CONFLICT (game_id, seat, key) DO UPDATE \
            SET fingerprint = excluded.fingerprint, status = excluded.status, \
                body = excluded.body, created_at = unixepoch() \
            WHERE move_idempotency.created_at <= unixepoch() - $1",
        insert_create_response: "\
            INSERT INTO create_idempotency (key, fingerprint, status, body) \
            VALUES ($2, $3, $4, $5) \
            ON CONFLICT (key) DO UPDATE \
            SET fingerprint = excluded.fingerprint, status = excluded.status, \
                body = excluded.body, created_at = unixepoch() \
            WHERE create_idempotency.created_at <= unixepoch() - $1",
        find_move_response: "\
            SELECT fingerprint, status, body FROM move_idempotency \
            WHERE game_id = $2 AND seat = $3 AND key = $4 AND created_at > unixepoch() - $1",
        find_create_response: "\
            SELECT fingerprint, status, body FROM create_idempotency \
            WHERE key = $2 AND created_at > unixepoch() - $1",
        purge_move_responses: "\
            DELETE FROM move_idempotency WHERE (game_id, seat, key) IN \
                (SELECT game_id, seat, key FROM move_idempotency \
                 WHERE created_at <= unixepoch() - $1 LIMIT $2)",
        purge_create_responses: "\
            DELETE FROM create_idempotency WHERE key IN \
                (SELECT key FROM create_idempotency \
                 WHERE created_at <= unixepoch() - $1 LIMIT $2)",
        list_waiting: "\
            SELECT id, created_at, version, seats, players, projection FROM games \
            WHERE status = 'waiting' AND private = 0 AND players < seats \
            ORDER BY created_at DESC, id DESC LIMIT $1",
        list_waiting_after: "\
            SELECT id, created_at, version, seats, players, projection FROM games \
            WHERE status = 'waiting' AND private = 0 AND players < seats \
                AND (created_at, id) < ($2, $3) \
            ORDER BY created_at DESC, id DESC LIMIT $1",
        overdue_games: "\
            SELECT id FROM games WHERE deadline_at IS NOT NULL AND deadline_at <= $1 \
            ORDER BY deadline_at LIMIT $2",
        expired_waiting_games: "\
            SELECT id FROM games WHERE status = 'waiting' AND created_at <= $1 \
            ORDER BY created_at LIMIT $2",
        cancel_game: "UPDATE games SET status = 'cancelled' WHERE id = $1 AND status = 'waiting'",
    };

    /// One process owns the file: the store wakes its own hub after each commit.
    const NOTIFIES_ON_COMMIT: bool = false;

    /// One: SQLite writes one transaction at a time, and a second batch would only wait for the
    /// write lock in SQLite's busy handler, which sleeps in steps of up to 100 ms and lets other
    /// writers (a creation, an audit) starve past the lock timeout.
    const CONCURRENT_BATCHES: usize = 1;

    /// `BEGIN IMMEDIATE`: the write lock up front (see the module doc).
    async fn begin_write(pool: &SqlitePool) -> Result<Transaction<'static, Sqlite>, sqlx::Error> {
        pool.begin_with("BEGIN IMMEDIATE").await
    }

    /// One transaction under the write lock; each append's first statement checks its version.
    async fn append_sealed(
        pool: &SqlitePool,
        appends: &[Sealed<'_>],
    ) -> Result<Vec<bool>, StoreError> {
        let mut tx = Self::begin_write(pool).await?;
        let mut written = Vec::with_capacity(appends.len());
        for sealed in appends {
            let game_id = sealed.game_id;
            // In the one text form whose order is its time order, as SQLite compares it.
            let deadline_at = sealed
                .update
                .deadline_at
                .as_deref()
                .map(normalize_created_at)
                .transpose()?;
            let moved = sqlx::query(
                "UPDATE games SET version = $3, head_hash = $4, status = $5, projection = $6, \
                     players = players + $7, deadline_at = $8 \
                 WHERE id = $1 AND version = $2 AND status <> 'cancelled'",
            )
            .bind(game_id)
            .bind(sealed.expected_version)
            .bind(sealed.expected_version + sealed.entries.len() as i64)
            .bind(sealed.head_hash.to_vec())
            .bind(&sealed.update.status)
            .bind(Json(&sealed.update.projection))
            .bind(i32::from(sealed.update.new_seat.is_some()))
            .bind(deadline_at)
            .execute(&mut *tx)
            .await?;
            written.push(moved.rows_affected() == 1);
            if moved.rows_affected() == 0 {
                continue;
            }
            SqliteStore::insert_events(&mut tx, game_id, sealed.entries).await?;
            if let Some(seat) = &sealed.update.new_seat {
                SqliteStore::insert_seat(&mut tx, game_id, seat).await?;
            }
            if let Some(idem) = sealed.idem {
                SqliteStore::insert_move_response(&mut tx, game_id, idem).await?;
            }
            SqliteStore::insert_snapshots(&mut tx, game_id, &sealed.update.snapshots).await?;
        }
        tx.commit().await?;
        Ok(written)
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
