//! What a creation writes besides its game's first append (the game row at version 0), and the
//! record that answers retries of a creation (of a game, or an account), on both backends.

use serde_json::Value;
use sqlx::Executor;
use sqlx::types::Json;
use uuid::Uuid;

use super::batch::Batch;
use super::{Backend, Bind, Sealed, SqlStore, seal};
use crate::engine::Rules;
use crate::store::{
    CreateIdempotency, Entry, GameUpdate, NewEvent, NewGame, RawJson, StoreError, chain,
};

/// The rows `create_game` writes besides its first append.
impl<DB> SqlStore<DB>
where
    DB: Backend,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    Uuid: Bind<DB>,
    i64: Bind<DB>,
    i32: Bind<DB>,
    bool: Bind<DB>,
    String: Bind<DB>,
    Vec<u8>: Bind<DB>,
    for<'a> Json<&'a Value>: Bind<DB>,
    for<'a> Json<&'a RawJson>: Bind<DB>,
    for<'a> Json<&'a Rules>: Bind<DB>,
    Option<Json<Value>>: Bind<DB>,
    Option<String>: Bind<DB>,
{
    /// Creates `game` on `conn`: its row, then its first `events` written by an append that
    /// brings the row to `update` (with its seats, and what it tells their accounts). Returns
    /// the stored entries.
    pub(super) async fn write_new_game(
        &self,
        conn: &mut DB::Connection,
        game: &NewGame,
        events: Vec<NewEvent>,
        update: &GameUpdate,
    ) -> Result<Vec<Entry>, StoreError> {
        let (entries, head_hash) = seal(&game.server_seed, chain::GENESIS, 1, events)?;
        // The row starts before its first entry; its first append writes them, as any other.
        let batch = Batch::of(&[Sealed {
            game_id: game.id,
            expected_version: 0,
            entries: &entries,
            head_hash,
            update,
            idem: None,
        }])?;
        Self::insert_game(conn, game).await?;
        let moved = if self.distributed.is_some() {
            DB::write_distributed(conn, &batch, game.id).await?
        } else {
            DB::write_batch(conn, &batch).await?
        };
        if moved != [game.id] {
            return Err(StoreError::Internal(format!(
                "game {} was not at its start when created",
                game.id
            )));
        }
        Ok(entries)
    }

    /// The game row at version 0, before its first entry (the head is [`chain::GENESIS`]).
    async fn insert_game(conn: &mut DB::Connection, game: &NewGame) -> Result<(), StoreError> {
        sqlx::query(DB::STATEMENTS.insert_game)
            .bind(game.id)
            .bind(game.created_at.to_string())
            .bind(game.status.name().to_owned())
            .bind(0_i64)
            .bind(game.seats)
            .bind(game.holes)
            .bind(Json(&game.rules))
            .bind(game.commitment.clone())
            .bind(game.server_seed.to_vec())
            .bind(game.host_token_hash.to_vec())
            .bind(game.private)
            .bind(game.stacked)
            .bind(game.decks.clone().map(Json))
            .bind(Json(&game.projection))
            .bind(chain::GENESIS.to_vec())
            .bind(game.host_account.clone())
            .bind(game.rated)
            .execute(conn)
            .await?;
        Ok(())
    }
}

/// The record that answers retries of a creation (of a game, or an account).
impl<DB> SqlStore<DB>
where
    DB: Backend,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    String: Bind<DB>,
    i32: Bind<DB>,
    for<'a> Json<&'a Value>: Bind<DB>,
{
    /// Stores a creation's response; an unexpired record with the same key is a `Conflict`.
    pub(super) async fn insert_create_response(
        conn: &mut DB::Connection,
        idem: &CreateIdempotency,
    ) -> Result<(), StoreError> {
        let stored = sqlx::query(DB::STATEMENTS.insert_create_response)
            .bind(DB::IDEMPOTENCY_TTL)
            .bind(idem.key.clone())
            .bind(idem.fingerprint.clone())
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
