//! The PostgreSQL backend: how it connects, starts a write, and its [`Statements`].
//!
//! An append locks its game row with `SELECT ... FOR NO KEY UPDATE` (the lock its own `UPDATE`
//! takes: it never changes the key), so appends to one game queue behind each other and the loser
//! of a race sees the new version (`Conflict`); appends to different games never wait for each
//! other. Every statement on game data names its `game_id`, so the schema can
//! be distributed by it (docs/SCALING.md).

use std::str::FromStr;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgQueryResult};
use sqlx::{Postgres, Transaction};

use super::notify::Changes;
use super::sql::{Backend, SqlStore, Statements};
use super::{IDEMPOTENCY_TTL, PoolOptions, StoreError};

/// A pool of PostgreSQL connections.
pub type PgStore = SqlStore<Postgres>;

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
        let changes = Changes::listening(&server);
        let statement_ms = options.statement_timeout.as_millis().max(1);
        let lock_ms = statement_ms.div_ceil(2);
        let pool = pool_options()
            .max_connections(options.max_connections)
            .connect_with(server.options([
                ("statement_timeout", statement_ms),
                ("lock_timeout", lock_ms),
            ]))
            .await?;
        Ok(SqlStore { pool, changes })
    }
}

impl Backend for Postgres {
    /// Seconds, as `make_interval(secs => $1)` takes them.
    type Ttl = f64;

    const IDEMPOTENCY_TTL: f64 = IDEMPOTENCY_TTL.as_secs_f64();

    const STATEMENTS: Statements = Statements {
        insert_game: "\
            INSERT INTO games (id, created_at, status, version, seats, holes, rules, commitment, \
                server_seed, host_token_hash, private, stacked, decks, projection, head_hash) \
            VALUES ($1, $2::timestamptz, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
        load_game: "\
            SELECT id, \
                to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') \
                    AS created_at, \
                status, version, seats, holes, players, rules, commitment, server_seed, \
                host_token_hash, private, stacked, decks, projection, head_hash, audit_verified, \
                audit_first_bad_seq, \
                (SELECT COALESCE(json_agg(json_build_array(seat, encode(token_hash, 'hex')) \
                                          ORDER BY seat), '[]'::json) \
                 FROM seats WHERE seats.game_id = games.id) AS seat_tokens \
            FROM games WHERE id = $1 AND status <> 'cancelled'",
        lock_head: "\
            SELECT version, status, server_seed, head_hash FROM games WHERE id = $1 \
            FOR NO KEY UPDATE",
        insert_move_response: "\
            INSERT INTO move_idempotency (game_id, seat, key, fingerprint, status, body) \
            VALUES ($2, $3, $4, $5, $6, $7) \
            ON CONFLICT (game_id, seat, key) DO UPDATE \
            SET fingerprint = excluded.fingerprint, status = excluded.status, \
                body = excluded.body, created_at = now() \
            WHERE move_idempotency.created_at <= now() - make_interval(secs => $1)",
        insert_create_response: "\
            INSERT INTO create_idempotency (key, fingerprint, status, body) \
            VALUES ($2, $3, $4, $5) \
            ON CONFLICT (key) DO UPDATE \
            SET fingerprint = excluded.fingerprint, status = excluded.status, \
                body = excluded.body, created_at = now() \
            WHERE create_idempotency.created_at <= now() - make_interval(secs => $1)",
        find_move_response: "\
            SELECT fingerprint, status, body FROM move_idempotency \
            WHERE game_id = $2 AND seat = $3 AND key = $4 \
                AND created_at > now() - make_interval(secs => $1)",
        find_create_response: "\
            SELECT fingerprint, status, body FROM create_idempotency \
            WHERE key = $2 AND created_at > now() - make_interval(secs => $1)",
        purge_move_responses: "\
            DELETE FROM move_idempotency WHERE (game_id, seat, key) IN \
                (SELECT game_id, seat, key FROM move_idempotency \
                 WHERE created_at <= now() - make_interval(secs => $1) LIMIT $2)",
        purge_create_responses: "\
            DELETE FROM create_idempotency WHERE key IN \
                (SELECT key FROM create_idempotency \
                 WHERE created_at <= now() - make_interval(secs => $1) LIMIT $2)",
        list_waiting: "\
            SELECT id, \
                to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') \
                    AS created_at, \
                version, seats, players, projection \
            FROM games \
            WHERE status = 'waiting' AND NOT private AND players < seats \
            ORDER BY created_at DESC, id DESC LIMIT $1",
        list_waiting_after: "\
            SELECT id, \
                to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') \
                    AS created_at, \
                version, seats, players, projection \
            FROM games \
            WHERE status = 'waiting' AND NOT private AND players < seats \
                AND (created_at, id) < ($2::timestamptz, $3) \
            ORDER BY created_at DESC, id DESC LIMIT $1",
        // pg_notify in the same statement costs no round trip; the notification leaves on
        // commit (never for a rolled-back append).
        update_head: "\
            WITH updated AS ( \
                UPDATE games SET version = $2, head_hash = $3, status = $4, projection = $5, \
                    players = players + $6, deadline_at = $7::timestamptz \
                WHERE id = $1 RETURNING id) \
            SELECT pg_notify('golf_events', id::text) FROM updated",
        overdue_games: "\
            SELECT id FROM games WHERE deadline_at IS NOT NULL AND deadline_at <= $1::timestamptz \
            ORDER BY deadline_at LIMIT $2",
        expired_waiting_games: "\
            SELECT id FROM games WHERE status = 'waiting' AND created_at <= $1::timestamptz \
            ORDER BY created_at LIMIT $2",
        cancel_game: "\
            WITH cancelled AS ( \
                UPDATE games SET status = 'cancelled' WHERE id = $1 AND status = 'waiting' \
                RETURNING id) \
            SELECT pg_notify('golf_events', id::text) FROM cancelled",
    };

    /// Appends and cancellations `NOTIFY golf_events` (see [`Changes::listening`]).
    const NOTIFIES_ON_COMMIT: bool = true;

    /// A plain transaction: an append then locks its game row (see the module doc).
    async fn begin_write(pool: &PgPool) -> Result<Transaction<'static, Postgres>, sqlx::Error> {
        pool.begin().await
    }

    fn rows_affected(result: &PgQueryResult) -> u64 {
        result.rows_affected()
    }
}
