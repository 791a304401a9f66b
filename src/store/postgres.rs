//! The PostgreSQL backend.
//!
//! An append locks its game row with `SELECT ... FOR NO KEY UPDATE` (the lock its own `UPDATE`
//! takes: it never changes the key), so appends to one game queue behind each other and the loser
//! of a race sees the new version (`Conflict`); appends to different games never wait for each
//! other. Every statement on game data names its `game_id`, so the schema can
//! be distributed by it (docs/SCALING.md).

use std::str::FromStr;

use sqlx::Postgres;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};

use super::{IDEMPOTENCY_TTL, PoolOptions, StoreError};

/// A pool of PostgreSQL connections.
pub struct PgStore {
    pool: PgPool,
}

impl PgStore {
    /// Connects (failing within `acquire_timeout` if the server does not answer) and migrates.
    ///
    /// Every connection of the pool carries `statement_timeout` and `lock_timeout` (see
    /// [`PoolOptions::statement_timeout`]), so no call waits unbounded for a lock or a slow server.
    pub async fn connect(url: &str, options: &PoolOptions) -> Result<Self, StoreError> {
        let server = PgConnectOptions::from_str(url)?;
        // A pool bounds opening its first connection by acquire_timeout, as every acquire.
        let pool_options = || PgPoolOptions::new().acquire_timeout(options.acquire_timeout);
        // A migration may rightly run longer than a request's statement, or wait for another
        // instance's migration lock: it runs on a connection of its own, without the timeouts.
        let migrating = pool_options()
            .max_connections(1)
            .connect_with(server.clone())
            .await?;
        let migrated = sqlx::migrate!("migrations/postgres").run(&migrating).await;
        migrating.close().await;
        migrated?;
        let statement_ms = options.statement_timeout.as_millis().max(1);
        let lock_ms = statement_ms.div_ceil(2);
        let pool = pool_options()
            .max_connections(options.max_connections)
            .connect_with(server.options([
                ("statement_timeout", statement_ms),
                ("lock_timeout", lock_ms),
            ]))
            .await?;
        Ok(PgStore { pool })
    }

    /// Starts a write transaction; an append then locks its game row (see the module doc).
    async fn begin_write(&self) -> Result<sqlx::Transaction<'static, Postgres>, StoreError> {
        Ok(self.pool.begin().await?)
    }
}

super::shared::event_store! {
    store: PgStore,
    database: Postgres,
    lock_row: "FOR NO KEY UPDATE",
    timestamp: "::timestamptz",
    created_at: r#"to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at"#,
    seat_tokens: "(SELECT COALESCE(json_agg(json_build_array(seat, encode(token_hash, 'hex')) \
                                   ORDER BY seat), '[]'::json) \
                   FROM seats WHERE seats.game_id = games.id) AS seat_tokens",
    public: "NOT private",
    now: "now()",
    expired: "now() - make_interval(secs => $1)",
    ttl: IDEMPOTENCY_TTL.as_secs_f64(),
}
