//! The one [`EventStore`] implementation, [`SqlStore`], generic over the two backends.
//!
//! Every call's logic is written once, here. What differs between PostgreSQL and SQLite is a
//! [`Backend`]: how a write transaction starts, how the idempotency ttl binds, and the
//! [`Statements`] that read differently in the two dialects, each written whole in
//! `postgres.rs` and `sqlite.rs`. A statement that reads the same in both is written once, below,
//! where it runs. The rows an append writes are built once, as a [`Batch`] of named parts
//! (`sql/batch.rs`), which each backend's append statements read whole.
//!
//! Plain generic code rather than a macro, so that rustfmt, compiler errors and editors see all
//! of it. The price is the `where` clauses: Rust does not infer from `DB: Backend` that, say, a
//! `Uuid` binds on `DB`, so each `impl` block states the bounds its code uses.

mod accounts;
mod batch;
mod challenges;
mod creations;
mod distributed;
mod ratings;
mod seeks;
mod statements;
mod webhooks;

use std::future::Future;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use sqlx::types::Json;
use sqlx::{Database, Encode, Executor, FromRow, IntoArguments, Pool, Transaction, Type};
use uuid::Uuid;

use super::accounts::{AccountStore, wake_key};
use super::challenges::ChallengeStore;
use super::notify::Changes;
use super::ratings::RatingStore;
use super::rows::{self, AccountRow, EntryRow, GameRow, LobbyRow, ResponseRow, SnapshotRow};
use super::seeks::SeekStore;
use super::webhooks::WebhookStore;
use super::{
    Append, AuditResult, CreateIdempotency, Entry, EventStore, GameIdempotency, GameRecord,
    GameUpdate, LobbyCursor, LobbyGame, NewEvent, NewGame, PURGE_BATCH, RawJson, Snapshot,
    StoreError, StoredResponse, VERSIONS_PER_READ, seal,
};
use crate::engine::{Rules, Timestamp};
pub use accounts::AccountStatements;
pub use batch::Batch;
pub use distributed::Distributed;
pub use ratings::RatingStatements;
pub use statements::Statements;
pub use webhooks::WebhookStatements;
pub(super) use webhooks::{due_deliveries, hooks_behind};

/// A database the store runs on: its dialect and how it starts a write.
pub trait Backend: Database<Arguments: IntoArguments<Self>> {
    /// The type [`Self::IDEMPOTENCY_TTL`] binds as.
    type Ttl: Bind<Self> + Copy + Send + Sync;

    /// [`IDEMPOTENCY_TTL`](super::IDEMPOTENCY_TTL) in the unit the statements' `$1` expects.
    const IDEMPOTENCY_TTL: Self::Ttl;

    /// The statements in this backend's dialect.
    const STATEMENTS: Statements;

    /// [`ACCOUNT_EVENTS_TTL`](super::accounts::ACCOUNT_EVENTS_TTL) in the unit of [`Self::Ttl`].
    const ACCOUNT_EVENTS_TTL: Self::Ttl;

    /// The statements on accounts in this backend's dialect.
    const ACCOUNT_STATEMENTS: AccountStatements;

    /// The statements on webhooks in this backend's dialect.
    const WEBHOOK_STATEMENTS: WebhookStatements;

    /// The statements on ratings in this backend's dialect.
    const RATING_STATEMENTS: RatingStatements;

    /// The statement that locks a key (`$1`: a pool of seeks, an author's challenges) until the
    /// transaction ends, if a write transaction does not already exclude every other writer.
    const KEY_LOCK: Option<&'static str>;

    /// Whether the database itself announces appends to every instance on commit (PostgreSQL's
    /// `NOTIFY`); otherwise the store wakes its own hub after each commit.
    const NOTIFIES_ON_COMMIT: bool;

    /// See [`EventStore::concurrent_batches`].
    const CONCURRENT_BATCHES: usize;

    /// Starts a write transaction (SQLite: with the database's write lock).
    fn begin_write(
        pool: &Pool<Self>,
    ) -> impl Future<Output = Result<Transaction<'static, Self>, sqlx::Error>> + Send;

    /// Writes `batch` on `conn`, all or nothing: moves each game row of `batch.games` from its
    /// expected version to its new head, but only if it is still at the expected version and
    /// not cancelled, and inserts the other parts' rows of the games it moved. Returns the ids of
    /// the games moved; a taken seat or recorded key (`Conflict`), or any other error, fails the
    /// whole batch. On PostgreSQL one statement (its own transaction unless `conn` is in one),
    /// on SQLite several, run inside the caller's write transaction.
    fn write_batch(
        conn: &mut Self::Connection,
        batch: &Batch<'_>,
    ) -> impl Future<Output = Result<Vec<Uuid>, StoreError>> + Send;

    /// [`Backend::write_batch`] of `batch`, of the one game `game_id`, on a database distributed
    /// by game (Citus): the game's rows on its shard, then its accounts' events on theirs.
    /// Returns the game's id if it moved. Only PostgreSQL is ever distributed.
    fn write_distributed(
        conn: &mut Self::Connection,
        batch: &Batch<'_>,
        _game_id: Uuid,
    ) -> impl Future<Output = Result<Vec<Uuid>, StoreError>> + Send {
        Self::write_batch(conn, batch)
    }

    /// [`Backend::write_distributed`] in a transaction of its own, begun by `begin`.
    fn append_distributed(
        pool: &Pool<Self>,
        batch: &Batch<'_>,
        _game_id: Uuid,
        _begin: &str,
    ) -> impl Future<Output = Result<Vec<Uuid>, StoreError>> + Send {
        Self::append_batch(pool, batch)
    }

    /// [`Backend::write_batch`] in a write of its own: one commit for the whole batch.
    fn append_batch(
        pool: &Pool<Self>,
        batch: &Batch<'_>,
    ) -> impl Future<Output = Result<Vec<Uuid>, StoreError>> + Send;

    /// The versions of those of games `ids` that exist and are not cancelled, in one query
    /// (see [`EventStore::game_versions`]).
    fn game_versions(
        pool: &Pool<Self>,
        ids: &[Uuid],
    ) -> impl Future<Output = Result<Vec<(Uuid, i64)>, StoreError>> + Send;

    /// The rows a statement inserted, changed or deleted.
    fn rows_affected(result: &Self::QueryResult) -> u64;
}

/// An append ready to write: its entries numbered and chained, and what else it stores.
#[derive(Clone, Copy)]
pub struct Sealed<'a> {
    pub game_id: Uuid,
    pub expected_version: i64,
    pub entries: &'a [Entry],
    /// The hash of the last entry (the previous head when there is none).
    pub head_hash: [u8; 32],
    pub update: &'a GameUpdate,
    pub idem: Option<&'a GameIdempotency>,
}

/// A value that binds as a statement parameter on `DB`.
pub trait Bind<DB: Database>: for<'q> Encode<'q, DB> + Type<DB> {}

impl<DB: Database, T: for<'q> Encode<'q, DB> + Type<DB>> Bind<DB> for T {}

/// A pool of connections to a database of backend `DB`.
pub struct SqlStore<DB: Database> {
    pub(super) pool: Pool<DB>,
    /// Who waits for which game's new entries, in this instance.
    pub(super) changes: Arc<Changes>,
    /// Set when the game tables are distributed by game over a Citus cluster (`golf-server
    /// distribute`): then each append is written on its own, so that it is one shard's work.
    pub(super) distributed: Option<Distributed>,
}

impl<DB: Backend> SqlStore<DB> {
    /// Wakes this instance's streams of `game_id` after a commit, unless the database announces
    /// the change itself (then the listening connection wakes them, here as on other instances).
    fn announce(&self, game_id: Uuid) {
        if !DB::NOTIFIES_ON_COMMIT {
            self.changes.wake(game_id);
        }
    }

    /// [`SqlStore::announce`] of an append that brought `game_id` to `version`.
    fn announce_at(&self, game_id: Uuid, version: i64) {
        if !DB::NOTIFIES_ON_COMMIT {
            self.changes.announce(game_id, version);
        }
    }

    /// Writes `appends` in one batch, answering for each whether it was written. When the
    /// database refused the batch because of one game (its taken seat or recorded key:
    /// `Conflict`; another writer holding its row past `lock_timeout`: `Busy`), nothing was
    /// written, and each is written on its own, so that only that game's append fails. Any other
    /// failure is answered to all: after a lost connection the batch may have committed, and
    /// writing it again would answer a stored move with a `Conflict` that the caller retries
    /// as a new request.
    async fn write_each(&self, appends: &[Sealed<'_>]) -> Vec<Result<bool, StoreError>> {
        if let Some(distributed) = &self.distributed {
            return self.write_apart(distributed, appends).await;
        }
        match Self::write(&self.pool, appends).await {
            Ok(written) => written.into_iter().map(Ok).collect(),
            Err(StoreError::Conflict | StoreError::Busy) if appends.len() > 1 => {
                self.write_alone(appends).await
            }
            Err(error) => vec![Err(error); appends.len()],
        }
    }

    /// Writes each of `appends` in a commit of its own, answering for each whether it was
    /// written. Once one fails with `Unavailable`, the database is what fails, not a game: the
    /// rest fail with it untried, or an outage would take one timeout per append to answer.
    async fn write_alone(&self, appends: &[Sealed<'_>]) -> Vec<Result<bool, StoreError>> {
        let mut written = Vec::with_capacity(appends.len());
        for one in appends {
            let alone = match written.last() {
                Some(Err(unavailable @ StoreError::Unavailable(_))) => Err(unavailable.clone()),
                _ => Self::write(&self.pool, std::slice::from_ref(one))
                    .await
                    .map(|moved| moved == [true]),
            };
            written.push(alone);
        }
        written
    }

    /// Writes `appends` in one commit; answers for each whether its game moved.
    async fn write(pool: &Pool<DB>, appends: &[Sealed<'_>]) -> Result<Vec<bool>, StoreError> {
        let moved = DB::append_batch(pool, &Batch::of(appends)?).await?;
        Ok(appends
            .iter()
            .map(|sealed| moved.contains(&sealed.game_id))
            .collect())
    }
}

#[async_trait]
impl<DB> EventStore for SqlStore<DB>
where
    DB: Backend,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    Uuid: Bind<DB>,
    i64: Bind<DB>,
    i32: Bind<DB>,
    bool: Bind<DB>,
    String: Bind<DB>,
    for<'a> &'a str: Bind<DB>,
    Vec<u8>: Bind<DB>,
    Option<i64>: Bind<DB>,
    for<'a> Json<&'a Value>: Bind<DB>,
    for<'a> Json<&'a RawJson>: Bind<DB>,
    for<'a> Json<&'a Rules>: Bind<DB>,
    Option<Json<Value>>: Bind<DB>,
    for<'r> GameRow: FromRow<'r, DB::Row>,
    for<'r> SnapshotRow: FromRow<'r, DB::Row>,
    for<'r> EntryRow: FromRow<'r, DB::Row>,
    for<'r> LobbyRow: FromRow<'r, DB::Row>,
    for<'r> ResponseRow: FromRow<'r, DB::Row>,
    for<'r> (String,): FromRow<'r, DB::Row>,
    for<'r> (Uuid,): FromRow<'r, DB::Row>,
    for<'r> (i64,): FromRow<'r, DB::Row>,
    for<'r> AccountRow: FromRow<'r, DB::Row>,
    for<'r> rows::ListedGameRow: FromRow<'r, DB::Row>,
    for<'r> rows::AccountEventRow: FromRow<'r, DB::Row>,
    for<'r> rows::TokenEventRow: FromRow<'r, DB::Row>,
    for<'r> (i64, i64): FromRow<'r, DB::Row>,
    Option<String>: Bind<DB>,
    Option<i32>: Bind<DB>,
    for<'r> webhooks::PendingHook: FromRow<'r, DB::Row>,
    for<'r> webhooks::DeliveryRow: FromRow<'r, DB::Row>,
    for<'r> webhooks::WebhookRow: FromRow<'r, DB::Row>,
    for<'r> webhooks::AttemptRow: FromRow<'r, DB::Row>,
    for<'r> (i64, String): FromRow<'r, DB::Row>,
    for<'r> (Option<String>,): FromRow<'r, DB::Row>,
    f64: Bind<DB>,
    for<'r> (f64, f64, i32): FromRow<'r, DB::Row>,
    for<'r> ratings::DueRow: FromRow<'r, DB::Row>,
    for<'r> ratings::HistoryRow: FromRow<'r, DB::Row>,
    for<'r> ratings::RankedRow: FromRow<'r, DB::Row>,
    Option<Uuid>: Bind<DB>,
    for<'a> Json<&'a Vec<String>>: Bind<DB>,
    for<'r> (String, Option<String>): FromRow<'r, DB::Row>,
    for<'r> challenges::ChallengeRow: FromRow<'r, DB::Row>,
    Option<f64>: Bind<DB>,
    for<'r> seeks::SeekRow: FromRow<'r, DB::Row>,
{
    async fn create_game(
        &self,
        game: NewGame,
        events: Vec<NewEvent>,
        idem: Option<CreateIdempotency>,
    ) -> Result<Vec<Entry>, StoreError> {
        let update = GameUpdate {
            status: game.status,
            projection: game.projection.clone(),
            new_seats: Vec::new(),
            snapshots: Vec::new(),
            deadline_at: None,
            account_games: Vec::new(),
            account_events: Vec::new(),
        };
        let mut tx = DB::begin_write(&self.pool).await?;
        let entries = self.write_new_game(&mut tx, &game, events, &update).await?;
        if let Some(idem) = &idem {
            Self::insert_create_response(&mut tx, idem).await?;
        }
        tx.commit().await?;
        Ok(entries)
    }

    async fn load_game(&self, id: Uuid) -> Result<Option<GameRecord>, StoreError> {
        let row: Option<GameRow> = sqlx::query_as(DB::STATEMENTS.load_game)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.map(GameRecord::try_from).transpose()
    }

    async fn append(&self, mut appends: Vec<Append>) -> Vec<Result<Vec<Entry>, StoreError>> {
        let sealed: Vec<Result<(Vec<Entry>, [u8; 32]), StoreError>> = appends
            .iter_mut()
            .map(|append| {
                let head = append.head;
                let events = std::mem::take(&mut append.events);
                seal(&head.server_seed, head.hash, head.version + 1, events)
            })
            .collect();
        let ready: Vec<Sealed<'_>> = appends
            .iter()
            .zip(&sealed)
            .filter_map(|(append, sealed)| {
                let (entries, head_hash) = sealed.as_ref().ok()?;
                Some(Sealed {
                    game_id: append.game_id,
                    expected_version: append.head.version,
                    entries,
                    head_hash: *head_hash,
                    update: &append.update,
                    idem: append.idem.as_ref(),
                })
            })
            .collect();
        let mut written = self.write_each(&ready).await.into_iter();
        sealed
            .into_iter()
            .zip(&appends)
            .map(|(sealed, append)| {
                let (entries, _) = sealed?;
                match written.next() {
                    Some(Ok(true)) => {
                        let version = entries.last().map_or(append.head.version, |e| e.seq);
                        self.announce_at(append.game_id, version);
                        for event in &append.update.account_events {
                            self.announce(wake_key(&event.account));
                        }
                        Ok(entries)
                    }
                    Some(Ok(false)) => Err(StoreError::Conflict),
                    Some(Err(error)) => Err(error),
                    None => Err(StoreError::Internal("an append got no result".to_owned())),
                }
            })
            .collect()
    }

    fn concurrent_batches(&self) -> usize {
        DB::CONCURRENT_BATCHES
    }

    async fn game_versions(&self, ids: &[Uuid]) -> Result<Vec<(Uuid, i64)>, StoreError> {
        if ids.len() > VERSIONS_PER_READ {
            return Err(StoreError::Internal(format!(
                "{} games asked for in one read of versions",
                ids.len()
            )));
        }
        DB::game_versions(&self.pool, ids).await
    }

    async fn record_audit(&self, id: Uuid, audit: AuditResult) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE games SET audit_verified = $2, audit_first_bad_seq = $3 \
             WHERE id = $1 AND audit_verified IS NULL",
        )
        .bind(id)
        .bind(audit.verified)
        .bind(audit.first_bad_seq)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn load_analysis(&self, id: Uuid) -> Result<Option<String>, StoreError> {
        let row: Option<(String,)> =
            sqlx::query_as("SELECT analysis FROM analyses WHERE game_id = $1")
                .bind(id)
                .fetch_optional(&self.pool)
                .await?;
        Ok(row.map(|(analysis,)| analysis))
    }

    async fn record_analysis(&self, id: Uuid, analysis: &str) -> Result<(), StoreError> {
        let mut transaction = DB::begin_write(&self.pool).await?;
        sqlx::query(
            "INSERT INTO analyses (game_id, analysis) VALUES ($1, $2) \
             ON CONFLICT (game_id) DO NOTHING",
        )
        .bind(id)
        .bind(analysis)
        .execute(&mut *transaction)
        .await?;
        sqlx::query(DB::STATEMENTS.mark_analysed)
            .bind(id)
            .execute(&mut *transaction)
            .await?;
        transaction.commit().await?;
        Ok(())
    }

    async fn unanalysed_games(&self, limit: i64) -> Result<Vec<Uuid>, StoreError> {
        let rows: Vec<(Uuid,)> = sqlx::query_as(DB::STATEMENTS.unanalysed_games)
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.into_iter().map(|(id,)| id).collect())
    }

    async fn unaudited_games(&self, limit: i64) -> Result<Vec<Uuid>, StoreError> {
        let rows: Vec<(Uuid,)> = sqlx::query_as(DB::STATEMENTS.unaudited_games)
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.into_iter().map(|(id,)| id).collect())
    }

    async fn load_snapshot(&self, id: Uuid, seq: i64) -> Result<Option<Snapshot>, StoreError> {
        let row: Option<SnapshotRow> = sqlx::query_as(
            "SELECT seq, state FROM snapshots WHERE game_id = $1 AND seq <= $2 \
             ORDER BY seq DESC LIMIT 1",
        )
        .bind(id)
        .bind(seq)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|row| Snapshot {
            seq: row.seq,
            state: row.state.0,
        }))
    }

    async fn find_game_response(
        &self,
        game_id: Uuid,
        seat: i32,
        key: &str,
    ) -> Result<Option<StoredResponse>, StoreError> {
        let row: Option<ResponseRow> = sqlx::query_as(DB::STATEMENTS.find_game_response)
            .bind(DB::IDEMPOTENCY_TTL)
            .bind(game_id)
            .bind(seat)
            .bind(key)
            .fetch_optional(&self.pool)
            .await?;
        row.map(StoredResponse::try_from).transpose()
    }

    async fn find_create_response(&self, key: &str) -> Result<Option<StoredResponse>, StoreError> {
        let row: Option<ResponseRow> = sqlx::query_as(DB::STATEMENTS.find_create_response)
            .bind(DB::IDEMPOTENCY_TTL)
            .bind(key)
            .fetch_optional(&self.pool)
            .await?;
        row.map(StoredResponse::try_from).transpose()
    }

    async fn purge_expired_idempotency(&self) -> Result<u64, StoreError> {
        // Small batches, each its own statement: a backlog after a long stop never makes one
        // statement outlast statement_timeout, nor holds many row locks (or SQLite's write lock)
        // at once; a purge cut short has still kept what it deleted.
        let batches = [
            DB::STATEMENTS.purge_game_responses,
            DB::STATEMENTS.purge_create_responses,
        ];
        let mut purged = 0;
        for batch in batches {
            loop {
                let result = sqlx::query(batch)
                    .bind(DB::IDEMPOTENCY_TTL)
                    .bind(PURGE_BATCH)
                    .execute(&self.pool)
                    .await?;
                let deleted = DB::rows_affected(&result);
                purged += deleted;
                if deleted < PURGE_BATCH as u64 {
                    break;
                }
            }
        }
        loop {
            let deleted = self.purge_account_events(PURGE_BATCH).await?;
            purged += deleted;
            if deleted < PURGE_BATCH as u64 {
                return Ok(purged);
            }
        }
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
        let rows: Vec<LobbyRow> = match cursor {
            None => {
                sqlx::query_as(DB::STATEMENTS.list_waiting)
                    .bind(limit)
                    .fetch_all(&self.pool)
                    .await?
            }
            Some(cursor) => {
                sqlx::query_as(DB::STATEMENTS.list_waiting_after)
                    .bind(limit)
                    .bind(cursor.created_at.to_string())
                    .bind(cursor.id)
                    .fetch_all(&self.pool)
                    .await?
            }
        };
        rows::convert(rows)
    }

    async fn cancel_game(&self, id: Uuid) -> Result<(), StoreError> {
        let cancelled = sqlx::query(DB::STATEMENTS.cancel_game)
            .bind(id)
            .execute(&self.pool)
            .await?;
        if DB::rows_affected(&cancelled) == 1 {
            // Its streams close when they find the game gone.
            self.announce(id);
            if self.distributed.is_some() {
                self.notify_cancelled(id).await?;
            }
            return Ok(());
        }
        // Not waiting when the update ran, and a status never goes back to waiting: what it is
        // now says why.
        let status: Option<String> = sqlx::query_scalar("SELECT status FROM games WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        match status.as_deref() {
            None | Some("cancelled") => Err(StoreError::NotFound),
            Some(_) => Err(StoreError::NotWaiting),
        }
    }

    async fn overdue_games(&self, now: Timestamp, limit: i64) -> Result<Vec<Uuid>, StoreError> {
        Ok(sqlx::query_scalar(DB::STATEMENTS.overdue_games)
            .bind(now.to_string())
            .bind(limit)
            .fetch_all(&self.pool)
            .await?)
    }

    async fn postpone_deadline(
        &self,
        id: Uuid,
        now: Timestamp,
        until: Timestamp,
    ) -> Result<(), StoreError> {
        sqlx::query(DB::STATEMENTS.postpone_deadline)
            .bind(id)
            .bind(until.to_string())
            .bind(now.to_string())
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn expired_waiting_games(
        &self,
        created_before: Timestamp,
        limit: i64,
    ) -> Result<Vec<Uuid>, StoreError> {
        Ok(sqlx::query_scalar(DB::STATEMENTS.expired_waiting_games)
            .bind(created_before.to_string())
            .bind(limit)
            .fetch_all(&self.pool)
            .await?)
    }

    async fn game_ids(&self, after: Option<Uuid>, limit: i64) -> Result<Vec<Uuid>, StoreError> {
        // Without `after`, start after the nil id, which sorts before every other.
        Ok(sqlx::query_scalar(
            "SELECT id FROM games WHERE status <> 'cancelled' AND id > $1 ORDER BY id LIMIT $2",
        )
        .bind(after.unwrap_or(Uuid::nil()))
        .bind(limit)
        .fetch_all(&self.pool)
        .await?)
    }

    fn changes(&self) -> &Arc<Changes> {
        &self.changes
    }

    fn accounts(&self) -> &dyn AccountStore {
        self
    }

    fn webhooks(&self) -> &dyn WebhookStore {
        self
    }

    fn ratings(&self) -> &dyn RatingStore {
        self
    }

    fn challenges(&self) -> &dyn ChallengeStore {
        self
    }

    fn seeks(&self) -> &dyn SeekStore {
        self
    }

    async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    async fn close(&self) {
        self.pool.close().await;
    }
}
