//! The PostgreSQL backend: how it connects, starts a write, and its [`Statements`].
//!
//! An append is one statement ([`APPEND`]) whose `UPDATE ... WHERE version = $expected` of the
//! game row comes first: appends to one game queue behind its row lock and the loser of a race
//! finds the version moved (`Conflict`); appends to different games never wait for each other. Every statement on game data names its `game_id`, so the schema can
//! be distributed by it (docs/SCALING.md).

use std::str::FromStr;

use serde_json::Value;
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
        let changes = if options.listen {
            Changes::listening(&server)
        } else {
            Changes::in_process()
        };
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

/// Appends to distinct games in one statement, one array per column. Each game's head moves only
/// if it is at its expected version and not cancelled (`$1` ids, `$2` expected versions, `$3` new
/// versions, `$4` head hashes, `$5` statuses, `$6` projections as JSON text, `$7` seats taken: 0
/// or 1, `$31` turn deadlines: RFC 3339 text or NULL); the other parts insert only for the games
/// whose head moved: the entries (`$8` their games, `$9`..`$14`), the seats taken (`$15` games,
/// `$16`..`$20`), the moves' stored responses (`$22` games, `$23`..`$27`; `$21` the ttl in
/// seconds) and the snapshots (`$28` games, `$29`, `$30` states as JSON text).
/// It returns the ids of the games written; the others were moved on or cancelled by another
/// writer. A taken seat or a recorded key fails the whole statement with a unique violation
/// (`Conflict`); an expired record with the same key is deleted first (`expired`, evaluated
/// before `answered` reads its count), as `insert_move_response` replaces one.
///
/// The `UPDATE`'s row locks make a concurrent append to one of these games wait for this
/// statement's commit, then find the version moved: it writes nothing. `pg_notify` in the same
/// statement costs no round trip; the notifications leave on commit.
const APPEND: &str = "\
    WITH head AS ( \
        UPDATE games SET version = input.version, head_hash = input.head_hash, \
            status = input.status, projection = input.projection::json, \
            players = players + input.joined, deadline_at = input.deadline_at::timestamptz \
        FROM unnest($1::uuid[], $2::bigint[], $3::bigint[], $4::bytea[], $5::text[], \
                    $6::text[], $7::integer[], $31::text[]) \
            AS input (id, expected, version, head_hash, status, projection, joined, deadline_at) \
        WHERE games.id = input.id AND games.version = input.expected \
            AND games.status <> 'cancelled' \
        RETURNING games.id), \
    appended AS ( \
        INSERT INTO events (game_id, seq, type, data, at, salt, hash) \
        SELECT e.game_id, e.seq, e.type, e.data, e.at, e.salt, e.hash \
        FROM unnest($8::uuid[], $9::bigint[], $10::text[], $11::jsonb[], $12::text[], \
                    $13::bytea[], $14::bytea[]) AS e (game_id, seq, type, data, at, salt, hash) \
        WHERE e.game_id IN (SELECT id FROM head)), \
    seated AS ( \
        INSERT INTO seats (game_id, seat, name, bot, client_seed, token_hash) \
        SELECT s.game_id, s.seat, s.name, s.bot, s.client_seed, s.token_hash \
        FROM unnest($15::uuid[], $16::integer[], $17::text[], $18::text[], $19::text[], \
                    $20::bytea[]) AS s (game_id, seat, name, bot, client_seed, token_hash) \
        WHERE s.game_id IN (SELECT id FROM head)), \
    expired AS ( \
        DELETE FROM move_idempotency m \
        USING unnest($22::uuid[], $23::integer[], $24::text[]) AS k (game_id, seat, key) \
        WHERE m.game_id = k.game_id AND m.seat = k.seat AND m.key = k.key \
            AND m.created_at <= now() - make_interval(secs => $21) \
            AND k.game_id IN (SELECT id FROM head) \
        RETURNING 1), \
    answered AS ( \
        INSERT INTO move_idempotency (game_id, seat, key, fingerprint, status, body) \
        SELECT k.game_id, k.seat, k.key, k.fingerprint, k.status, k.body \
        FROM unnest($22::uuid[], $23::integer[], $24::text[], $25::text[], $26::integer[], \
                    $27::jsonb[]) AS k (game_id, seat, key, fingerprint, status, body) \
        WHERE k.game_id IN (SELECT id FROM head) AND (SELECT count(*) FROM expired) >= 0), \
    kept AS ( \
        INSERT INTO snapshots (game_id, seq, state) \
        SELECT s.game_id, s.seq, s.state::json \
        FROM unnest($28::uuid[], $29::bigint[], $30::text[]) AS s (game_id, seq, state) \
        WHERE s.game_id IN (SELECT id FROM head)) \
    SELECT id FROM head, LATERAL (SELECT pg_notify('golf_events', id::text)) AS notified";

/// The parameters of [`APPEND`]: one vector per array.
#[derive(Default)]
struct Columns<'a> {
    id: Vec<Uuid>,
    expected: Vec<i64>,
    version: Vec<i64>,
    head_hash: Vec<Vec<u8>>,
    status: Vec<&'a str>,
    projection: Vec<&'a str>,
    joined: Vec<i32>,
    deadline_at: Vec<Option<&'a str>>,
    event_game: Vec<Uuid>,
    event_seq: Vec<i64>,
    event_type: Vec<&'a str>,
    event_data: Vec<Json<&'a Value>>,
    event_at: Vec<&'a str>,
    event_salt: Vec<Vec<u8>>,
    event_hash: Vec<Vec<u8>>,
    seat_game: Vec<Uuid>,
    seat: Vec<i32>,
    seat_name: Vec<&'a str>,
    seat_bot: Vec<Option<&'a str>>,
    seat_client_seed: Vec<&'a str>,
    seat_token_hash: Vec<Option<Vec<u8>>>,
    idem_game: Vec<Uuid>,
    idem_seat: Vec<i32>,
    idem_key: Vec<&'a str>,
    idem_fingerprint: Vec<&'a str>,
    idem_status: Vec<i32>,
    idem_body: Vec<Json<&'a Value>>,
    snapshot_game: Vec<Uuid>,
    snapshot_seq: Vec<i64>,
    snapshot_state: Vec<&'a str>,
}

impl<'a> Columns<'a> {
    fn add(&mut self, sealed: &Sealed<'a>) -> Result<(), StoreError> {
        let game = sealed.game_id;
        let update = sealed.update;
        self.id.push(game);
        self.expected.push(sealed.expected_version);
        self.version
            .push(sealed.expected_version + sealed.entries.len() as i64);
        self.head_hash.push(sealed.head_hash.to_vec());
        self.status.push(&update.status);
        self.projection.push(update.projection.get());
        self.joined.push(i32::from(update.new_seat.is_some()));
        self.deadline_at.push(update.deadline_at.as_deref());
        for entry in sealed.entries {
            let (salt, hash) = entry_bytes(entry)?;
            self.event_game.push(game);
            self.event_seq.push(entry.seq);
            self.event_type.push(&entry.kind);
            self.event_data.push(Json(&entry.data));
            self.event_at.push(&entry.at);
            self.event_salt.push(salt);
            self.event_hash.push(hash);
        }
        if let Some(seat) = &update.new_seat {
            self.seat_game.push(game);
            self.seat.push(seat.seat);
            self.seat_name.push(&seat.name);
            self.seat_bot.push(seat.bot.as_deref());
            self.seat_client_seed.push(&seat.client_seed);
            self.seat_token_hash
                .push(seat.token_hash.map(|h| h.to_vec()));
        }
        if let Some(idem) = sealed.idem {
            self.idem_game.push(game);
            self.idem_seat.push(idem.seat);
            self.idem_key.push(&idem.key);
            self.idem_fingerprint.push(&idem.fingerprint);
            self.idem_status.push(i32::from(idem.response_status));
            self.idem_body.push(Json(&idem.response_body));
        }
        for snapshot in &update.snapshots {
            self.snapshot_game.push(game);
            self.snapshot_seq.push(snapshot.seq);
            self.snapshot_state.push(snapshot.state.get());
        }
        Ok(())
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

    /// Two: while one batch waits for its commit, the next one runs on the other core.
    const CONCURRENT_BATCHES: usize = 2;

    /// A plain transaction.
    async fn begin_write(pool: &PgPool) -> Result<Transaction<'static, Postgres>, sqlx::Error> {
        pool.begin().await
    }

    /// One statement (see [`APPEND`]), so one round trip and one commit for all of them.
    async fn append_sealed(pool: &PgPool, appends: &[Sealed<'_>]) -> Result<Vec<bool>, StoreError> {
        let mut games = Columns::default();
        for sealed in appends {
            games.add(sealed)?;
        }
        let written: Vec<Uuid> = sqlx::query_scalar(APPEND)
            .bind(&games.id)
            .bind(&games.expected)
            .bind(&games.version)
            .bind(&games.head_hash)
            .bind(&games.status)
            .bind(&games.projection)
            .bind(&games.joined)
            .bind(&games.event_game)
            .bind(&games.event_seq)
            .bind(&games.event_type)
            .bind(&games.event_data)
            .bind(&games.event_at)
            .bind(&games.event_salt)
            .bind(&games.event_hash)
            .bind(&games.seat_game)
            .bind(&games.seat)
            .bind(&games.seat_name)
            .bind(&games.seat_bot)
            .bind(&games.seat_client_seed)
            .bind(&games.seat_token_hash)
            .bind(IDEMPOTENCY_TTL.as_secs_f64())
            .bind(&games.idem_game)
            .bind(&games.idem_seat)
            .bind(&games.idem_key)
            .bind(&games.idem_fingerprint)
            .bind(&games.idem_status)
            .bind(&games.idem_body)
            .bind(&games.snapshot_game)
            .bind(&games.snapshot_seq)
            .bind(&games.snapshot_state)
            .bind(&games.deadline_at)
            .fetch_all(pool)
            .await?;
        Ok(appends
            .iter()
            .map(|sealed| written.contains(&sealed.game_id))
            .collect())
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
