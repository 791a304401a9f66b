//! The rows that `create_game` and the appends write besides the game row: log entries, seats,
//! snapshots and stored responses, each in the caller's transaction.

use serde_json::Value;
use sqlx::types::Json;
use sqlx::{Executor, QueryBuilder};
use uuid::Uuid;

use super::{Backend, Bind, SqlStore};
use crate::store::{
    CreateIdempotency, EVENTS_PER_INSERT, Entry, MoveIdempotency, NewSeat, RawJson, Snapshot,
    StoreError, entry_bytes,
};

/// The writes of `create_game` and `append` besides the game row.
impl<DB> SqlStore<DB>
where
    DB: Backend,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    Uuid: Bind<DB>,
    i64: Bind<DB>,
    i32: Bind<DB>,
    String: Bind<DB>,
    Option<String>: Bind<DB>,
    Vec<u8>: Bind<DB>,
    Option<Vec<u8>>: Bind<DB>,
    for<'a> Json<&'a Value>: Bind<DB>,
    for<'a> Json<&'a RawJson>: Bind<DB>,
{
    pub(in crate::store) async fn insert_events(
        conn: &mut DB::Connection,
        game_id: Uuid,
        entries: &[Entry],
    ) -> Result<(), StoreError> {
        // One statement per chunk, not per event: the request that seats the last bot of a bot
        // game appends the whole game at once.
        for chunk in entries.chunks(EVENTS_PER_INSERT) {
            let rows = chunk
                .iter()
                .map(|entry| entry_bytes(entry).map(|(salt, hash)| (entry, salt, hash)))
                .collect::<Result<Vec<_>, _>>()?;
            let mut insert = QueryBuilder::<DB>::new(
                "INSERT INTO events (game_id, seq, type, data, at, salt, hash) ",
            );
            insert.push_values(rows, |mut row, (entry, salt, hash)| {
                row.push_bind(game_id)
                    .push_bind(entry.seq)
                    .push_bind(&entry.kind)
                    .push_bind(Json(&entry.data))
                    .push_bind(&entry.at)
                    .push_bind(salt)
                    .push_bind(hash);
            });
            insert.build().execute(&mut *conn).await?;
        }
        Ok(())
    }

    pub(in crate::store) async fn insert_seat(
        conn: &mut DB::Connection,
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
        .execute(conn)
        .await?;
        Ok(())
    }

    /// Stores a move's response; an unexpired record with the same key is a `Conflict`.
    pub(in crate::store) async fn insert_move_response(
        conn: &mut DB::Connection,
        game_id: Uuid,
        idem: &MoveIdempotency,
    ) -> Result<(), StoreError> {
        let stored = sqlx::query(DB::STATEMENTS.insert_move_response)
            .bind(DB::IDEMPOTENCY_TTL)
            .bind(game_id)
            .bind(idem.seat)
            .bind(&idem.key)
            .bind(&idem.fingerprint)
            .bind(i32::from(idem.response_status))
            .bind(Json(&idem.response_body))
            .execute(conn)
            .await?;
        if DB::rows_affected(&stored) == 0 {
            return Err(StoreError::Conflict);
        }
        Ok(())
    }

    pub(in crate::store) async fn insert_snapshots(
        conn: &mut DB::Connection,
        game_id: Uuid,
        snapshots: &[Snapshot],
    ) -> Result<(), StoreError> {
        for snapshot in snapshots {
            sqlx::query("INSERT INTO snapshots (game_id, seq, state) VALUES ($1, $2, $3)")
                .bind(game_id)
                .bind(snapshot.seq)
                .bind(Json(&snapshot.state))
                .execute(&mut *conn)
                .await?;
        }
        Ok(())
    }

    /// Stores a creation's response; an unexpired record with the same key is a `Conflict`.
    pub(super) async fn insert_create_response(
        conn: &mut DB::Connection,
        idem: &CreateIdempotency,
    ) -> Result<(), StoreError> {
        let stored = sqlx::query(DB::STATEMENTS.insert_create_response)
            .bind(DB::IDEMPOTENCY_TTL)
            .bind(&idem.key)
            .bind(&idem.fingerprint)
            .bind(i32::from(idem.response_status))
            .bind(Json(&idem.response_body))
            .execute(conn)
            .await?;
        if DB::rows_affected(&stored) == 0 {
            return Err(StoreError::Conflict);
        }
        Ok(())
    }
}
