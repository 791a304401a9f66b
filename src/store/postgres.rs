//! The PostgreSQL backend.
//!
//! An append locks its game row with `SELECT ... FOR NO KEY UPDATE` (the lock its own `UPDATE`
//! takes: it never changes the key), so appends to one game queue behind each other and the loser
//! of a race sees the new version (`Conflict`); appends to different games never wait for each
//! other. Every statement on game data names its `game_id`, so the schema can
//! be distributed by it (docs/SCALING.md).

use std::str::FromStr;

use async_trait::async_trait;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions};
use sqlx::types::Json;
use sqlx::{Postgres, QueryBuilder};
use uuid::Uuid;

use super::rows::{self, EntryRow, GameRow, HeadRow, LobbyRow, ResponseRow};
use super::{
    CreateIdempotency, EVENTS_PER_INSERT, Entry, EventStore, GameRecord, GameUpdate,
    IDEMPOTENCY_TTL, LobbyCursor, LobbyGame, MoveIdempotency, NewEvent, NewGame, NewSeat,
    PoolOptions, StoreError, StoredResponse, chain, entry_bytes, normalize_created_at, seal,
};

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
}

/// `games.created_at` as the store's fixed UTC text form.
macro_rules! created_at_text {
    () => {
        r#"to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at"#
    };
}

/// The idempotency TTL as the float seconds `make_interval` takes.
fn ttl_secs() -> f64 {
    IDEMPOTENCY_TTL.as_secs_f64()
}

async fn insert_events(
    conn: &mut PgConnection,
    game_id: Uuid,
    entries: &[Entry],
) -> Result<(), StoreError> {
    // One statement per chunk, not per event: the request that seats the last bot of a bot game
    // appends the whole game at once.
    for chunk in entries.chunks(EVENTS_PER_INSERT) {
        let rows = chunk
            .iter()
            .map(|entry| entry_bytes(entry).map(|(salt, hash)| (entry, salt, hash)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut insert = QueryBuilder::<Postgres>::new(
            "INSERT INTO events (game_id, seq, type, data, at, salt, hash) ",
        );
        insert.push_values(rows, |mut row, (entry, salt, hash)| {
            row.push_bind(game_id)
                .push_bind(entry.seq)
                .push_bind(entry.kind.clone())
                .push_bind(Json(entry.data.clone()))
                .push_bind(entry.at.clone())
                .push_bind(salt)
                .push_bind(hash);
        });
        insert.build().execute(&mut *conn).await?;
    }
    Ok(())
}

async fn insert_seat(
    conn: &mut PgConnection,
    game_id: Uuid,
    seat: &NewSeat,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO seats (game_id, seat, name, bot, client_seed, token_hash) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(game_id)
    .bind(seat.seat)
    .bind(&seat.name)
    .bind(&seat.bot)
    .bind(&seat.client_seed)
    .bind(seat.token_hash.map(|h| h.to_vec()))
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Stores a move's response; an unexpired record with the same key is a `Conflict`.
async fn insert_move_response(
    conn: &mut PgConnection,
    game_id: Uuid,
    idem: &MoveIdempotency,
) -> Result<(), StoreError> {
    let stored = sqlx::query(
        "INSERT INTO move_idempotency (game_id, seat, key, fingerprint, status, body) \
         VALUES ($1, $2, $3, $4, $5, $6) \
         ON CONFLICT (game_id, seat, key) DO UPDATE \
         SET fingerprint = excluded.fingerprint, status = excluded.status, \
             body = excluded.body, created_at = now() \
         WHERE move_idempotency.created_at <= now() - make_interval(secs => $7)",
    )
    .bind(game_id)
    .bind(idem.seat)
    .bind(&idem.key)
    .bind(&idem.fingerprint)
    .bind(i32::from(idem.response_status))
    .bind(Json(&idem.response_body))
    .bind(ttl_secs())
    .execute(&mut *conn)
    .await?;
    if stored.rows_affected() == 0 {
        return Err(StoreError::Conflict);
    }
    Ok(())
}

/// Stores a creation's response; an unexpired record with the same key is a `Conflict`.
async fn insert_create_response(
    conn: &mut PgConnection,
    idem: &CreateIdempotency,
) -> Result<(), StoreError> {
    let stored = sqlx::query(
        "INSERT INTO create_idempotency (key, fingerprint, status, body) \
         VALUES ($1, $2, $3, $4) \
         ON CONFLICT (key) DO UPDATE \
         SET fingerprint = excluded.fingerprint, status = excluded.status, \
             body = excluded.body, created_at = now() \
         WHERE create_idempotency.created_at <= now() - make_interval(secs => $5)",
    )
    .bind(&idem.key)
    .bind(&idem.fingerprint)
    .bind(i32::from(idem.response_status))
    .bind(Json(&idem.response_body))
    .bind(ttl_secs())
    .execute(&mut *conn)
    .await?;
    if stored.rows_affected() == 0 {
        return Err(StoreError::Conflict);
    }
    Ok(())
}

#[async_trait]
impl EventStore for PgStore {
    async fn create_game(
        &self,
        game: NewGame,
        events: Vec<NewEvent>,
        idem: Option<CreateIdempotency>,
    ) -> Result<Vec<Entry>, StoreError> {
        let created_at = normalize_created_at(&game.created_at)?;
        let (entries, head) = seal(&game.server_seed, chain::GENESIS, 1, events)?;
        let mut tx = self.pool.begin().await?;
        sqlx::query(
            "INSERT INTO games (id, created_at, status, version, seats, holes, rules, commitment, \
                 server_seed, host_token_hash, private, stacked, decks, projection, head_hash) \
             VALUES ($1, $2::timestamptz, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
        )
        .bind(game.id)
        .bind(&created_at)
        .bind(&game.status)
        .bind(entries.len() as i64)
        .bind(game.seats)
        .bind(game.holes)
        .bind(Json(&game.rules))
        .bind(&game.commitment)
        .bind(game.server_seed.to_vec())
        .bind(game.host_token_hash.to_vec())
        .bind(game.private)
        .bind(game.stacked)
        .bind(game.decks.as_ref().map(Json))
        .bind(Json(&game.projection))
        .bind(head.to_vec())
        .execute(&mut *tx)
        .await?;
        insert_events(&mut tx, game.id, &entries).await?;
        if let Some(idem) = &idem {
            insert_create_response(&mut tx, idem).await?;
        }
        tx.commit().await?;
        Ok(entries)
    }

    async fn load_game(&self, id: Uuid) -> Result<Option<GameRecord>, StoreError> {
        let row: Option<GameRow> = sqlx::query_as(concat!(
            "SELECT id, ",
            created_at_text!(),
            ", status, version, seats, holes, players, rules, commitment, server_seed, \
             host_token_hash, private, stacked, decks, projection, head_hash, \
             (SELECT COALESCE(json_agg(json_build_array(seat, encode(token_hash, 'hex')) \
                                       ORDER BY seat), '[]'::json) \
              FROM seats WHERE seats.game_id = games.id) AS seat_tokens \
             FROM games WHERE id = $1 AND status <> 'cancelled'"
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        row.map(GameRecord::try_from).transpose()
    }

    async fn append(
        &self,
        game_id: Uuid,
        expected_version: i64,
        events: Vec<NewEvent>,
        update: GameUpdate,
        idem: Option<MoveIdempotency>,
    ) -> Result<Vec<Entry>, StoreError> {
        let mut tx = self.pool.begin().await?;
        let row: Option<HeadRow> = sqlx::query_as(
            "SELECT version, status, server_seed, head_hash FROM games WHERE id = $1 \
             FOR NO KEY UPDATE",
        )
        .bind(game_id)
        .fetch_optional(&mut *tx)
        .await?;
        let head = HeadRow::check(row, expected_version)?;
        let (entries, new_head) = seal(&head.server_seed, head.hash, head.version + 1, events)?;
        insert_events(&mut tx, game_id, &entries).await?;
        if let Some(seat) = &update.new_seat {
            insert_seat(&mut tx, game_id, seat).await?;
        }
        if let Some(idem) = &idem {
            insert_move_response(&mut tx, game_id, idem).await?;
        }
        sqlx::query(
            "UPDATE games SET version = $2, head_hash = $3, status = $4, projection = $5, \
                 players = players + $6 \
             WHERE id = $1",
        )
        .bind(game_id)
        .bind(head.version + entries.len() as i64)
        .bind(new_head.to_vec())
        .bind(&update.status)
        .bind(Json(&update.projection))
        .bind(i32::from(update.new_seat.is_some()))
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(entries)
    }

    async fn find_move_response(
        &self,
        game_id: Uuid,
        seat: i32,
        key: &str,
    ) -> Result<Option<StoredResponse>, StoreError> {
        let row: Option<ResponseRow> = sqlx::query_as(
            "SELECT fingerprint, status, body FROM move_idempotency \
             WHERE game_id = $1 AND seat = $2 AND key = $3 \
               AND created_at > now() - make_interval(secs => $4)",
        )
        .bind(game_id)
        .bind(seat)
        .bind(key)
        .bind(ttl_secs())
        .fetch_optional(&self.pool)
        .await?;
        row.map(StoredResponse::try_from).transpose()
    }

    async fn find_create_response(&self, key: &str) -> Result<Option<StoredResponse>, StoreError> {
        let row: Option<ResponseRow> = sqlx::query_as(
            "SELECT fingerprint, status, body FROM create_idempotency \
             WHERE key = $1 AND created_at > now() - make_interval(secs => $2)",
        )
        .bind(key)
        .bind(ttl_secs())
        .fetch_optional(&self.pool)
        .await?;
        row.map(StoredResponse::try_from).transpose()
    }

    async fn purge_expired_idempotency(&self) -> Result<u64, StoreError> {
        let moves = sqlx::query(
            "DELETE FROM move_idempotency WHERE created_at <= now() - make_interval(secs => $1)",
        )
        .bind(ttl_secs())
        .execute(&self.pool)
        .await?;
        let creations = sqlx::query(
            "DELETE FROM create_idempotency WHERE created_at <= now() - make_interval(secs => $1)",
        )
        .bind(ttl_secs())
        .execute(&self.pool)
        .await?;
        Ok(moves.rows_affected() + creations.rows_affected())
    }

    async fn load_events(
        &self,
        game_id: Uuid,
        after: i64,
        limit: i64,
    ) -> Result<Vec<Entry>, StoreError> {
        let rows: Vec<EntryRow> = sqlx::query_as(
            "SELECT seq, at, type, data, salt, hash FROM events \
             WHERE game_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
        )
        .bind(game_id)
        .bind(after)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        rows::convert(rows)
    }

    async fn list_waiting(
        &self,
        limit: i64,
        cursor: Option<LobbyCursor>,
    ) -> Result<Vec<LobbyGame>, StoreError> {
        // The WHERE repeats the predicate of the partial index games_lobby so the planner uses it.
        let rows: Vec<LobbyRow> = match cursor {
            None => {
                sqlx::query_as(concat!(
                    "SELECT id, ",
                    created_at_text!(),
                    ", version, seats, players, projection FROM games \
                     WHERE status = 'waiting' AND NOT private AND players < seats \
                     ORDER BY created_at DESC, id DESC LIMIT $1"
                ))
                .bind(limit)
                .fetch_all(&self.pool)
                .await?
            }
            Some(cursor) => {
                sqlx::query_as(concat!(
                    "SELECT id, ",
                    created_at_text!(),
                    ", version, seats, players, projection FROM games \
                     WHERE status = 'waiting' AND NOT private AND players < seats \
                       AND (created_at, id) < ($2::timestamptz, $3) \
                     ORDER BY created_at DESC, id DESC LIMIT $1"
                ))
                .bind(limit)
                .bind(normalize_created_at(&cursor.created_at)?)
                .bind(cursor.id)
                .fetch_all(&self.pool)
                .await?
            }
        };
        Ok(rows.into_iter().map(LobbyGame::from).collect())
    }

    async fn cancel_game(&self, id: Uuid) -> Result<(), StoreError> {
        let cancelled = sqlx::query(
            "UPDATE games SET status = 'cancelled' WHERE id = $1 AND status = 'waiting'",
        )
        .bind(id)
        .execute(&self.pool)
        .await?;
        if cancelled.rows_affected() == 1 {
            return Ok(());
        }
        let status: Option<String> = sqlx::query_scalar("SELECT status FROM games WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        match status.as_deref() {
            None | Some("cancelled") => Err(StoreError::NotFound),
            Some(_) => Err(StoreError::NotWaiting),
        }
    }

    async fn game_ids(&self, after: Option<Uuid>, limit: i64) -> Result<Vec<Uuid>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT id FROM games WHERE status <> 'cancelled' AND ($1::uuid IS NULL OR id > $1) \
             ORDER BY id LIMIT $2",
        )
        .bind(after)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?)
    }

    async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }
}
