//! The PostgreSQL backend: how it connects, starts a write, and its [`Statements`].
//!
//! An append is one statement ([`APPEND`]) whose `UPDATE ... WHERE version = $expected` of the
//! game row comes first: appends to one game queue behind its row lock and the loser of a race
//! finds the version moved (`Conflict`); appends to different games never wait for each other. Every statement on game data names its `game_id`, so the schema can
//! be distributed by it (docs/SCALING.md).

use std::str::FromStr;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgQueryResult};
use sqlx::types::Json;
use sqlx::{Postgres, Transaction};
use uuid::Uuid;

use super::notify::Changes;
use super::sql::{Backend, Sealed, SqlStore, Statements};
use super::{IDEMPOTENCY_TTL, PoolOptions, StoreError, entry_bytes};

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

/// An append in one statement: it moves the game's head only if the game is at version `$2`
/// (`$1` game, `$3` new version, `$4` head hash, `$5` status, `$6` projection); its other parts
/// insert only when the head moved: the entries (`$7`..`$12`, one array per column), the seat
/// taken (`$13`..`$17`, null when none), the move's stored response (`$19`..`$23`, null when
/// none; `$18` the ttl in seconds) and the snapshots (`$24`, `$25`). It returns one row when it
/// wrote, none when another writer moved the game first (or cancelled it). A taken seat or a
/// recorded key fails the whole statement with a unique violation (`Conflict`); an expired
/// record with the same key is deleted first (`expired`, evaluated before `answered` reads its
/// count), as `insert_move_response` replaces one.
///
/// The `UPDATE`'s row lock makes a concurrent append to the same game wait for this one's
/// commit, then find the version moved: it writes nothing. `pg_notify` in the same statement
/// costs no round trip; the notification leaves on commit.
const APPEND: &str = "\
    WITH head AS ( \
        UPDATE games SET version = $3, head_hash = $4, status = $5, projection = $6, \
            players = players + (CASE WHEN $13::integer IS NULL THEN 0 ELSE 1 END) \
        WHERE id = $1 AND version = $2 AND status <> 'cancelled' \
        RETURNING id), \
    appended AS ( \
        INSERT INTO events (game_id, seq, type, data, at, salt, hash) \
        SELECT head.id, e.seq, e.type, e.data, e.at, e.salt, e.hash \
        FROM head, unnest($7::bigint[], $8::text[], $9::jsonb[], $10::text[], $11::bytea[], \
                          $12::bytea[]) AS e (seq, type, data, at, salt, hash)), \
    seated AS ( \
        INSERT INTO seats (game_id, seat, name, bot, client_seed, token_hash) \
        SELECT head.id, $13, $14, $15, $16, $17 FROM head WHERE $13::integer IS NOT NULL), \
    expired AS ( \
        DELETE FROM move_idempotency \
        WHERE game_id = $1 AND seat = $19 AND key = $20 \
            AND created_at <= now() - make_interval(secs => $18) AND EXISTS (SELECT FROM head) \
        RETURNING 1), \
    answered AS ( \
        INSERT INTO move_idempotency (game_id, seat, key, fingerprint, status, body) \
        SELECT head.id, $19, $20, $21, $22, $23 FROM head \
        WHERE $20::text IS NOT NULL AND (SELECT count(*) FROM expired) >= 0), \
    kept AS ( \
        INSERT INTO snapshots (game_id, seq, state) \
        SELECT head.id, s.seq, s.state FROM head, unnest($24::bigint[], $25::jsonb[]) AS s (seq, state)) \
    SELECT pg_notify('golf_events', id::text) FROM head";

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
        cancel_game: "\
            WITH cancelled AS ( \
                UPDATE games SET status = 'cancelled' WHERE id = $1 AND status = 'waiting' \
                RETURNING id) \
            SELECT pg_notify('golf_events', id::text) FROM cancelled",
    };

    /// Appends and cancellations `NOTIFY golf_events` (see [`Changes::listening`]).
    const NOTIFIES_ON_COMMIT: bool = true;

    /// A plain transaction.
    async fn begin_write(pool: &PgPool) -> Result<Transaction<'static, Postgres>, sqlx::Error> {
        pool.begin().await
    }

    /// One statement (see [`APPEND`]), so one round trip and one commit.
    async fn append_sealed(
        pool: &PgPool,
        game_id: Uuid,
        expected_version: i64,
        sealed: Sealed<'_>,
    ) -> Result<bool, StoreError> {
        let entries = sealed.entries;
        let mut salts = Vec::with_capacity(entries.len());
        let mut hashes = Vec::with_capacity(entries.len());
        for entry in entries {
            let (salt, hash) = entry_bytes(entry)?;
            salts.push(salt);
            hashes.push(hash);
        }
        let update = sealed.update;
        let seat = update.new_seat.as_ref();
        let idem = sealed.idem;
        let snapshots = &update.snapshots;
        let moved = sqlx::query(APPEND)
            .bind(game_id)
            .bind(expected_version)
            .bind(expected_version + entries.len() as i64)
            .bind(sealed.head_hash.to_vec())
            .bind(&update.status)
            .bind(Json(&update.projection))
            .bind(entries.iter().map(|e| e.seq).collect::<Vec<_>>())
            .bind(entries.iter().map(|e| e.kind.as_str()).collect::<Vec<_>>())
            .bind(entries.iter().map(|e| Json(&e.data)).collect::<Vec<_>>())
            .bind(entries.iter().map(|e| e.at.as_str()).collect::<Vec<_>>())
            .bind(salts)
            .bind(hashes)
            .bind(seat.map(|s| s.seat))
            .bind(seat.map(|s| s.name.as_str()))
            .bind(seat.and_then(|s| s.bot.as_deref()))
            .bind(seat.map(|s| s.client_seed.as_str()))
            .bind(seat.and_then(|s| s.token_hash.map(|h| h.to_vec())))
            .bind(IDEMPOTENCY_TTL.as_secs_f64())
            .bind(idem.map(|i| i.seat))
            .bind(idem.map(|i| i.key.as_str()))
            .bind(idem.map(|i| i.fingerprint.as_str()))
            .bind(idem.map(|i| i32::from(i.response_status)))
            .bind(idem.map(|i| Json(&i.response_body)))
            .bind(snapshots.iter().map(|s| s.seq).collect::<Vec<_>>())
            .bind(snapshots.iter().map(|s| Json(&s.state)).collect::<Vec<_>>())
            .fetch_optional(pool)
            .await?;
        Ok(moved.is_some())
    }

    /// One array parameter: one prepared statement whatever the number of games.
    async fn game_versions(pool: &PgPool, ids: &[Uuid]) -> Result<Vec<(Uuid, i64)>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT id, version FROM games WHERE id = ANY($1) AND status <> 'cancelled'",
        )
        .bind(ids)
        .fetch_all(pool)
        .await?)
    }

    fn rows_affected(result: &PgQueryResult) -> u64 {
        result.rows_affected()
    }
}
