//! The [`EventStore`](super::EventStore) implementation of both backends, written once.
//!
//! The backends differ only in how a write transaction starts, in whether an append must lock
//! its game row, and in a few fragments of SQL. `postgres.rs` and `sqlite.rs` each expand
//! [`event_store!`] with their store type, their database and those fragments; every statement
//! and all the logic around them are below.

/// Implements `EventStore` for `$store`, a struct of the invoking module with a
/// `pool: sqlx::Pool<$db>` field and a method
/// `async fn begin_write(&self) -> Result<sqlx::Transaction<'static, $db>, StoreError>`.
///
/// The fragments of SQL, each a string literal:
/// - `lock_row`: ends the `SELECT` that reads the game row in an append, so that the row stays
///   locked until the transaction ends (empty when `begin_write` already locks the database);
/// - `timestamp`: follows a bound RFC 3339 text to make it a `games.created_at` (a cast, or empty);
/// - `created_at`: the `games.created_at` column in the store's fixed UTC text form, named
///   `created_at`;
/// - `seat_tokens`: the JSON array `[[seat, hex token hash or null], ...]` of the seats of
///   `games.id` in seat order, named `seat_tokens`;
/// - `public`: the predicate of a game that is not private (as the partial index `games_lobby`
///   spells it, so that the planner uses the index);
/// - `now`: the current time as the idempotency tables' `created_at` hold it;
/// - `expired`: the `created_at` at or before which an idempotency record has expired, reading
///   the expression `ttl` (the [`IDEMPOTENCY_TTL`](super::IDEMPOTENCY_TTL) in the unit `expired`
///   needs) as `$1`.
macro_rules! event_store {
    (
        store: $store:ident,
        database: $db:ty,
        lock_row: $lock_row:literal,
        timestamp: $timestamp:literal,
        created_at: $created_at:literal,
        seat_tokens: $seat_tokens:literal,
        public: $public:literal,
        now: $now:literal,
        expired: $expired:literal,
        ttl: $ttl:expr $(,)?
    ) => {
        mod shared {
            // The arguments are written in the invoking module: they mean here what they mean
            // there.
            use super::*;

            use async_trait::async_trait;
            use sqlx::QueryBuilder;
            use sqlx::types::Json;
            use uuid::Uuid;

            use $crate::store::rows::{self, EntryRow, GameRow, HeadRow, LobbyRow, ResponseRow};
            use $crate::store::{
                CreateIdempotency, EVENTS_PER_INSERT, Entry, EventStore, GameRecord, GameUpdate, PURGE_BATCH,
                LobbyCursor, LobbyGame, MoveIdempotency, NewEvent, NewGame, NewSeat, StoreError,
                StoredResponse, chain, entry_bytes, normalize_created_at, seal,
            };

            type Connection = <$db as sqlx::Database>::Connection;

            async fn insert_events(
                conn: &mut Connection,
                game_id: Uuid,
                entries: &[Entry],
            ) -> Result<(), StoreError> {
                // One statement per chunk, not per event: the request that seats the last bot of
                // a bot game appends the whole game at once.
                for chunk in entries.chunks(EVENTS_PER_INSERT) {
                    let rows = chunk
                        .iter()
                        .map(|entry| entry_bytes(entry).map(|(salt, hash)| (entry, salt, hash)))
                        .collect::<Result<Vec<_>, _>>()?;
                    let mut insert = QueryBuilder::<$db>::new(
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
                conn: &mut Connection,
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
                conn: &mut Connection,
                game_id: Uuid,
                idem: &MoveIdempotency,
            ) -> Result<(), StoreError> {
                let stored = sqlx::query(concat!(
                    "INSERT INTO move_idempotency (game_id, seat, key, fingerprint, status, body) \
                     VALUES ($2, $3, $4, $5, $6, $7) \
                     ON CONFLICT (game_id, seat, key) DO UPDATE \
                     SET fingerprint = excluded.fingerprint, status = excluded.status, \
                         body = excluded.body, created_at = ",
                    $now,
                    " WHERE move_idempotency.created_at <= ",
                    $expired
                ))
                .bind($ttl)
                .bind(game_id)
                .bind(idem.seat)
                .bind(&idem.key)
                .bind(&idem.fingerprint)
                .bind(i32::from(idem.response_status))
                .bind(Json(&idem.response_body))
                .execute(&mut *conn)
                .await?;
                if stored.rows_affected() == 0 {
                    return Err(StoreError::Conflict);
                }
                Ok(())
            }

            /// Stores a creation's response; an unexpired record with the same key is a
            /// `Conflict`.
            async fn insert_create_response(
                conn: &mut Connection,
                idem: &CreateIdempotency,
            ) -> Result<(), StoreError> {
                let stored = sqlx::query(concat!(
                    "INSERT INTO create_idempotency (key, fingerprint, status, body) \
                     VALUES ($2, $3, $4, $5) \
                     ON CONFLICT (key) DO UPDATE \
                     SET fingerprint = excluded.fingerprint, status = excluded.status, \
                         body = excluded.body, created_at = ",
                    $now,
                    " WHERE create_idempotency.created_at <= ",
                    $expired
                ))
                .bind($ttl)
                .bind(&idem.key)
                .bind(&idem.fingerprint)
                .bind(i32::from(idem.response_status))
                .bind(Json(&idem.response_body))
                .execute(&mut *conn)
                .await?;
                if stored.rows_affected() == 0 {
                    return Err(StoreError::Conflict);
                }
                Ok(())
            }

            #[async_trait]
            impl EventStore for $store {
                async fn create_game(
                    &self,
                    game: NewGame,
                    events: Vec<NewEvent>,
                    idem: Option<CreateIdempotency>,
                ) -> Result<Vec<Entry>, StoreError> {
                    let created_at = normalize_created_at(&game.created_at)?;
                    let (entries, head) = seal(&game.server_seed, chain::GENESIS, 1, events)?;
                    let mut tx = self.begin_write().await?;
                    sqlx::query(concat!(
                        "INSERT INTO games (id, created_at, status, version, seats, holes, rules, \
                             commitment, server_seed, host_token_hash, private, stacked, decks, \
                             projection, head_hash) \
                         VALUES ($1, $2",
                        $timestamp,
                        ", $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)"
                    ))
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
                        $created_at,
                        ", status, version, seats, holes, players, rules, commitment, \
                         server_seed, host_token_hash, private, stacked, decks, projection, \
                         head_hash, ",
                        $seat_tokens,
                        " FROM games WHERE id = $1 AND status <> 'cancelled'"
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
                    let mut tx = self.begin_write().await?;
                    let row: Option<HeadRow> = sqlx::query_as(concat!(
                        "SELECT version, status, server_seed, head_hash FROM games WHERE id = $1 ",
                        $lock_row
                    ))
                    .bind(game_id)
                    .fetch_optional(&mut *tx)
                    .await?;
                    let head = HeadRow::check(row, expected_version)?;
                    let (entries, new_head) =
                        seal(&head.server_seed, head.hash, head.version + 1, events)?;
                    insert_events(&mut tx, game_id, &entries).await?;
                    if let Some(seat) = &update.new_seat {
                        insert_seat(&mut tx, game_id, seat).await?;
                    }
                    if let Some(idem) = &idem {
                        insert_move_response(&mut tx, game_id, idem).await?;
                    }
                    sqlx::query(
                        "UPDATE games SET version = $2, head_hash = $3, status = $4, \
                             projection = $5, players = players + $6 \
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
                    let row: Option<ResponseRow> = sqlx::query_as(concat!(
                        "SELECT fingerprint, status, body FROM move_idempotency \
                         WHERE game_id = $2 AND seat = $3 AND key = $4 AND created_at > ",
                        $expired
                    ))
                    .bind($ttl)
                    .bind(game_id)
                    .bind(seat)
                    .bind(key)
                    .fetch_optional(&self.pool)
                    .await?;
                    row.map(StoredResponse::try_from).transpose()
                }

                async fn find_create_response(
                    &self,
                    key: &str,
                ) -> Result<Option<StoredResponse>, StoreError> {
                    let row: Option<ResponseRow> = sqlx::query_as(concat!(
                        "SELECT fingerprint, status, body FROM create_idempotency \
                         WHERE key = $2 AND created_at > ",
                        $expired
                    ))
                    .bind($ttl)
                    .bind(key)
                    .fetch_optional(&self.pool)
                    .await?;
                    row.map(StoredResponse::try_from).transpose()
                }

                async fn purge_expired_idempotency(&self) -> Result<u64, StoreError> {
                    // Small batches, each its own statement: a backlog after a long stop never
                    // makes one statement outlast statement_timeout, nor holds many row locks
                    // (or SQLite's write lock) at once; a purge cut short has still kept what it
                    // deleted.
                    let batches = [
                        concat!(
                            "DELETE FROM move_idempotency WHERE (game_id, seat, key) IN \
                             (SELECT game_id, seat, key FROM move_idempotency \
                              WHERE created_at <= ",
                            $expired,
                            " LIMIT $2)"
                        ),
                        concat!(
                            "DELETE FROM create_idempotency WHERE key IN \
                             (SELECT key FROM create_idempotency WHERE created_at <= ",
                            $expired,
                            " LIMIT $2)"
                        ),
                    ];
                    let mut purged = 0;
                    for batch in batches {
                        loop {
                            let deleted = sqlx::query(batch)
                                .bind($ttl)
                                .bind(PURGE_BATCH)
                                .execute(&self.pool)
                                .await?
                                .rows_affected();
                            purged += deleted;
                            if deleted < PURGE_BATCH as u64 {
                                break;
                            }
                        }
                    }
                    Ok(purged)
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
                    // The WHERE repeats the predicate of the partial index games_lobby.
                    let rows: Vec<LobbyRow> = match cursor {
                        None => {
                            sqlx::query_as(concat!(
                                "SELECT id, ",
                                $created_at,
                                ", version, seats, players, projection FROM games \
                                 WHERE status = 'waiting' AND ",
                                $public,
                                " AND players < seats \
                                 ORDER BY created_at DESC, id DESC LIMIT $1"
                            ))
                            .bind(limit)
                            .fetch_all(&self.pool)
                            .await?
                        }
                        Some(cursor) => {
                            sqlx::query_as(concat!(
                                "SELECT id, ",
                                $created_at,
                                ", version, seats, players, projection FROM games \
                                 WHERE status = 'waiting' AND ",
                                $public,
                                " AND players < seats AND (created_at, id) < ($2",
                                $timestamp,
                                ", $3) ORDER BY created_at DESC, id DESC LIMIT $1"
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
                        "UPDATE games SET status = 'cancelled' \
                         WHERE id = $1 AND status = 'waiting'",
                    )
                    .bind(id)
                    .execute(&self.pool)
                    .await?;
                    if cancelled.rows_affected() == 1 {
                        return Ok(());
                    }
                    // Not waiting when the update ran, and a status never goes back to waiting:
                    // what it is now says why.
                    let status: Option<String> =
                        sqlx::query_scalar("SELECT status FROM games WHERE id = $1")
                            .bind(id)
                            .fetch_optional(&self.pool)
                            .await?;
                    match status.as_deref() {
                        None | Some("cancelled") => Err(StoreError::NotFound),
                        Some(_) => Err(StoreError::NotWaiting),
                    }
                }

                async fn game_ids(
                    &self,
                    after: Option<Uuid>,
                    limit: i64,
                ) -> Result<Vec<Uuid>, StoreError> {
                    // Without `after`, start after the nil id, which sorts before every other.
                    Ok(sqlx::query_scalar(
                        "SELECT id FROM games WHERE status <> 'cancelled' AND id > $1 \
                         ORDER BY id LIMIT $2",
                    )
                    .bind(after.unwrap_or(Uuid::nil()))
                    .bind(limit)
                    .fetch_all(&self.pool)
                    .await?)
                }

                async fn ping(&self) -> Result<(), StoreError> {
                    sqlx::query("SELECT 1").execute(&self.pool).await?;
                    Ok(())
                }
            }
        }
    };
}

pub(super) use event_store;
