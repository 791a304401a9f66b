//! The SQLite backend, for a single instance (development, small deployments).
//!
//! The file runs in WAL mode (readers never wait for the writer) with foreign keys on. Every write
//! transaction starts with `BEGIN IMMEDIATE`, which takes the database's write lock up front: a
//! second writer waits for it (up to `busy_timeout`, set to the pool's acquire timeout) and then
//! reads the version its predecessor wrote, so a lost race is a `Conflict`. A database still busy
//! or locked after that is `Busy` (a 409 that asks the client to try again), never
//! `Unavailable`: the database is there, another writer holds it.

use std::str::FromStr;

use sqlx::Sqlite;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};

use super::{IDEMPOTENCY_TTL, PoolOptions, StoreError};

/// A pool of connections to one SQLite file.
pub struct SqliteStore {
    pool: SqlitePool,
}

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
        Ok(SqliteStore { pool })
    }

    /// Starts a write transaction holding the write lock (see the module doc).
    async fn begin_write(&self) -> Result<sqlx::Transaction<'static, Sqlite>, StoreError> {
        Ok(self.pool.begin_with("BEGIN IMMEDIATE").await?)
    }
}

super::shared::event_store! {
    store: SqliteStore,
    database: Sqlite,
    lock_row: "",
    timestamp: "",
    created_at: "created_at",
    seat_tokens: "(SELECT json_group_array(json_array(seat, \
                       CASE WHEN token_hash IS NULL THEN NULL ELSE lower(hex(token_hash)) END)) \
                   FROM (SELECT seat, token_hash FROM seats \
                         WHERE seats.game_id = games.id ORDER BY seat)) AS seat_tokens",
    public: "private = 0",
    now: "unixepoch()",
    expired: "unixepoch() - $1",
    ttl: IDEMPOTENCY_TTL.as_secs() as i64,
}
