//! Where games live: the connection to PostgreSQL or the embedded SQLite file, and the
//! migrations that shape both.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use thiserror::Error;

/// Pool settings shared by both backends.
#[derive(Debug, Clone)]
pub struct PoolOptions {
    /// Connections kept open at most.
    pub max_connections: u32,
    /// How long a caller waits for a connection before the store reports `Unavailable`.
    pub acquire_timeout: Duration,
}

/// What can go wrong in the store.
#[derive(Debug, Error)]
pub enum StoreError {
    /// The database cannot be reached or did not answer in time.
    #[error("the database is unavailable: {0}")]
    Unavailable(String),
    /// Anything else the database reported.
    #[error("database error: {0}")]
    Internal(String),
}

impl From<sqlx::Error> for StoreError {
    fn from(error: sqlx::Error) -> Self {
        if is_unavailable(&error) {
            StoreError::Unavailable(error.to_string())
        } else {
            StoreError::Internal(error.to_string())
        }
    }
}

/// Errors that mean "the database cannot serve us now" rather than "this query is wrong".
fn is_unavailable(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(db) => db.code().is_some_and(|code| {
            // 08: connection exceptions; 57P0x: shutdown or restart in progress;
            // 3D000: the database no longer exists; 53300: too many connections.
            code.starts_with("08") || code.starts_with("57P0") || code == "3D000" || code == "53300"
        }),
        _ => false,
    }
}

/// The storage of games, implemented for PostgreSQL and SQLite.
#[async_trait]
pub trait EventStore: Send + Sync {
    /// Answers when the database answers a trivial query.
    async fn ping(&self) -> Result<(), StoreError>;
}

/// Opens the database named by `url` and brings its schema up to date.
pub async fn connect(url: &str, options: &PoolOptions) -> Result<Arc<dyn EventStore>, StoreError> {
    if url.starts_with("sqlite:") {
        let connect = SqliteConnectOptions::from_str(url)
            .map_err(|e| StoreError::Internal(e.to_string()))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .busy_timeout(Duration::from_secs(5));
        let pool = SqlitePoolOptions::new()
            .max_connections(options.max_connections)
            .acquire_timeout(options.acquire_timeout)
            .connect_with(connect)
            .await?;
        sqlx::migrate!("migrations/sqlite")
            .run(&pool)
            .await
            .map_err(|e| StoreError::Internal(e.to_string()))?;
        Ok(Arc::new(SqliteStore { pool }))
    } else {
        let connect =
            PgConnectOptions::from_str(url).map_err(|e| StoreError::Internal(e.to_string()))?;
        let pool = PgPoolOptions::new()
            .max_connections(options.max_connections)
            .acquire_timeout(options.acquire_timeout)
            .connect_with(connect)
            .await?;
        sqlx::migrate!("migrations/postgres")
            .run(&pool)
            .await
            .map_err(|e| StoreError::Internal(e.to_string()))?;
        Ok(Arc::new(PgStore { pool }))
    }
}

struct SqliteStore {
    pool: SqlitePool,
}

#[async_trait]
impl EventStore for SqliteStore {
    async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }
}

struct PgStore {
    pool: PgPool,
}

#[async_trait]
impl EventStore for PgStore {
    async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }
}
