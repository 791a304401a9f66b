//! The one [`EventStore`] implementation, [`SqlStore`], generic over the two backends.
//!
//! Every call's logic is written once, here. What differs between PostgreSQL and SQLite is a
//! [`Backend`]: how a write transaction starts, how the idempotency ttl binds, and the
//! [`Statements`] that read differently in the two dialects, each written whole in
//! `postgres.rs` and `sqlite.rs`. A statement that reads the same in both is written once, below,
//! where it runs (the rows a write inserts besides the game row: in `sql/inserts.rs`).
//!
//! Plain generic code rather than a macro, so that rustfmt, compiler errors and editors see all
//! of it. The price is the `where` clauses: Rust does not infer from `DB: Backend` that, say, a
//! `Uuid` binds on `DB`, so each `impl` block states the bounds its code uses.

mod inserts;

use std::future::Future;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use sqlx::types::Json;
use sqlx::{Database, Encode, Executor, FromRow, IntoArguments, Pool, Transaction, Type};
use uuid::Uuid;

use super::notify::Changes;
use super::rows::{self, EntryRow, GameRow, HeadRow, LobbyRow, ResponseRow, SnapshotRow};
use super::{
    Append, AuditResult, CreateIdempotency, Entry, EventStore, GameRecord, GameUpdate, Head,
    LobbyCursor, LobbyGame, MoveIdempotency, NewEvent, NewGame, PURGE_BATCH, RawJson, Snapshot,
    StoreError, StoredResponse, VERSIONS_PER_READ, chain, normalize_created_at, seal,
};

/// The statements whose text differs between the dialects, each complete.
///
/// Parameters are numbered as [`SqlStore`] binds them; in every statement on idempotency records,
/// `$1` is [`Backend::IDEMPOTENCY_TTL`]. `games.created_at` is read back in the store's fixed
/// text form (UTC, microseconds). The lobby statements spell "not private" as the partial index
/// `games_lobby` does, so that the planner uses the index.
pub struct Statements {
    /// Inserts a game row: `$1` id, `$2` created_at (RFC 3339 text), `$3` status, `$4` version,
    /// `$5` seats, `$6` holes, `$7` rules, `$8` commitment, `$9` server_seed,
    /// `$10` host_token_hash, `$11` private, `$12` stacked, `$13` decks, `$14` projection,
    /// `$15` head_hash.
    pub insert_game: &'static str,
    /// The row of game `$1` unless cancelled, with `seat_tokens`, the JSON array
    /// `[[seat, hex token hash or null], ...]` of its seats in seat order ([`GameRow`]).
    pub load_game: &'static str,
    /// Stores a move's response (`$2` game_id, `$3` seat, `$4` key, `$5` fingerprint,
    /// `$6` status, `$7` body), replacing an expired record with the same key only.
    pub insert_move_response: &'static str,
    /// Stores a creation's response (`$2` key, `$3` fingerprint, `$4` status, `$5` body),
    /// replacing an expired record with the same key only.
    pub insert_create_response: &'static str,
    /// The unexpired response for game `$2`, seat `$3`, key `$4` ([`ResponseRow`]).
    pub find_move_response: &'static str,
    /// The unexpired response for creation key `$2` ([`ResponseRow`]).
    pub find_create_response: &'static str,
    /// Deletes up to `$2` expired move responses.
    pub purge_move_responses: &'static str,
    /// Deletes up to `$2` expired creation responses.
    pub purge_create_responses: &'static str,
    /// The first `$1` games of the lobby, newest first ([`LobbyRow`]).
    pub list_waiting: &'static str,
    /// The next `$1` games of the lobby after created_at `$2` (RFC 3339 text) and id `$3`.
    pub list_waiting_after: &'static str,
    /// Up to `$2` ids of games whose deadline is at or before `$1` (RFC 3339 text), earliest
    /// first.
    pub overdue_games: &'static str,
    /// Up to `$2` ids of waiting games created at or before `$1` (RFC 3339 text), oldest first.
    pub expired_waiting_games: &'static str,
    /// Cancels game `$1` if it is waiting (one row affected); where the backend announces
    /// changes through the database ([`Backend::NOTIFIES_ON_COMMIT`]), the same statement
    /// announces it.
    pub cancel_game: &'static str,
}

/// A database the store runs on: its dialect and how it starts a write.
pub trait Backend: Database<Arguments: IntoArguments<Self>> {
    /// The type [`Self::IDEMPOTENCY_TTL`] binds as.
    type Ttl: Bind<Self> + Copy + Send + Sync;

    /// [`IDEMPOTENCY_TTL`](super::IDEMPOTENCY_TTL) in the unit the statements' `$1` expects.
    const IDEMPOTENCY_TTL: Self::Ttl;

    /// The statements in this backend's dialect.
    const STATEMENTS: Statements;

    /// Whether the database itself announces appends to every instance on commit (PostgreSQL's
    /// `NOTIFY`); otherwise the store wakes its own hub after each commit.
    const NOTIFIES_ON_COMMIT: bool;

    /// See [`EventStore::concurrent_batches`].
    const CONCURRENT_BATCHES: usize;

    /// Starts a write transaction (SQLite: with the database's write lock).
    fn begin_write(
        pool: &Pool<Self>,
    ) -> impl Future<Output = Result<Transaction<'static, Self>, sqlx::Error>> + Send;

    /// Writes appends to distinct games, all or nothing: each moves its game's head from its
    /// `expected_version` to its last entry and inserts its entries, seat, idempotency record and
    /// snapshots, but only if its game is at `expected_version` and not cancelled. Returns, for
    /// each, whether it was written; a taken seat or recorded key (`Conflict`), or any other
    /// error, writes none of them.
    fn append_sealed(
        pool: &Pool<Self>,
        appends: &[Sealed<'_>],
    ) -> impl Future<Output = Result<Vec<bool>, StoreError>> + Send;

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
    pub idem: Option<&'a MoveIdempotency>,
}

/// A value that binds as a statement parameter on `DB`.
pub trait Bind<DB: Database>: for<'q> Encode<'q, DB> + Type<DB> {}

impl<DB: Database, T: for<'q> Encode<'q, DB> + Type<DB>> Bind<DB> for T {}

/// A pool of connections to a database of backend `DB`.
pub struct SqlStore<DB: Database> {
    pub(super) pool: Pool<DB>,
    /// Who waits for which game's new entries, in this instance.
    pub(super) changes: Arc<Changes>,
}

impl<DB: Backend> SqlStore<DB> {
    /// Wakes this instance's streams of `game_id` after a commit, unless the database announces
    /// the change itself (then the listening connection wakes them, here as on other instances).
    fn announce(&self, game_id: Uuid) {
        if !DB::NOTIFIES_ON_COMMIT {
            self.changes.wake(game_id);
        }
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
    Option<String>: Bind<DB>,
    for<'a> &'a str: Bind<DB>,
    Vec<u8>: Bind<DB>,
    Option<Vec<u8>>: Bind<DB>,
    Option<i64>: Bind<DB>,
    for<'a> Json<&'a Value>: Bind<DB>,
    for<'a> Json<&'a RawJson>: Bind<DB>,
    Option<Json<Value>>: Bind<DB>,
    for<'r> GameRow: FromRow<'r, DB::Row>,
    for<'r> SnapshotRow: FromRow<'r, DB::Row>,
    for<'r> HeadRow: FromRow<'r, DB::Row>,
    for<'r> EntryRow: FromRow<'r, DB::Row>,
    for<'r> LobbyRow: FromRow<'r, DB::Row>,
    for<'r> ResponseRow: FromRow<'r, DB::Row>,
    for<'r> (String,): FromRow<'r, DB::Row>,
    for<'r> (Uuid,): FromRow<'r, DB::Row>,
    for<'r> (i64,): FromRow<'r, DB::Row>,
{
    async fn create_game(
        &self,
        game: NewGame,
        events: Vec<NewEvent>,
        idem: Option<CreateIdempotency>,
    ) -> Result<Vec<Entry>, StoreError> {
        let created_at = normalize_created_at(&game.created_at)?;
        let (entries, head) = seal(&game.server_seed, chain::GENESIS, 1, events)?;
        let mut tx = DB::begin_write(&self.pool).await?;
        sqlx::query(DB::STATEMENTS.insert_game)
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
            .bind(game.decks.map(Json))
            .bind(Json(&game.projection))
            .bind(head.to_vec())
            .execute(&mut *tx)
            .await?;
        Self::insert_events(&mut tx, game.id, &entries).await?;
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

    async fn append(
        &self,
        game_id: Uuid,
        expected_version: i64,
        events: Vec<NewEvent>,
        update: GameUpdate,
        idem: Option<MoveIdempotency>,
    ) -> Result<Vec<Entry>, StoreError> {
        // The read takes no lock: the append is written only if the game is still at this
        // version, which is then also the version the caller expected.
        let row: Option<HeadRow> = sqlx::query_as(
            "SELECT version, status, server_seed, head_hash FROM games WHERE id = $1",
        )
        .bind(game_id)
        .fetch_optional(&self.pool)
        .await?;
        let head = HeadRow::check(row, expected_version)?;
        self.append_after(game_id, head, events, update, idem).await
    }

    async fn append_after(
        &self,
        game_id: Uuid,
        head: Head,
        events: Vec<NewEvent>,
        update: GameUpdate,
        idem: Option<MoveIdempotency>,
    ) -> Result<Vec<Entry>, StoreError> {
        let (entries, head_hash) = seal(&head.server_seed, head.hash, head.version + 1, events)?;
        let sealed = Sealed {
            game_id,
            expected_version: head.version,
            entries: &entries,
            head_hash,
            update: &update,
            idem: idem.as_ref(),
        };
        if DB::append_sealed(&self.pool, &[sealed]).await? != [true] {
            return Err(StoreError::Conflict);
        }
        self.announce(game_id);
        Ok(entries)
    }

    async fn append_batch(&self, mut appends: Vec<Append>) -> Vec<Result<Vec<Entry>, StoreError>> {
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
        let mut written = match DB::append_sealed(&self.pool, &ready).await {
            Ok(written) => written.into_iter().map(Ok).collect(),
            // One append's taken seat or recorded key fails them all: write each on its own,
            // so that it fails alone.
            Err(StoreError::Conflict) if ready.len() > 1 => {
                let mut written = Vec::with_capacity(ready.len());
                for one in &ready {
                    written.push(
                        DB::append_sealed(&self.pool, std::slice::from_ref(one))
                            .await
                            .map(|moved| moved == [true]),
                    );
                }
                written
            }
            Err(error) => vec![Err(error); ready.len()],
        }
        .into_iter();
        sealed
            .into_iter()
            .zip(&appends)
            .map(|(sealed, append)| {
                let (entries, _) = sealed?;
                match written.next() {
                    Some(Ok(true)) => {
                        self.announce(append.game_id);
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

    async fn game_version(&self, id: Uuid) -> Result<Option<i64>, StoreError> {
        Ok(
            sqlx::query_scalar("SELECT version FROM games WHERE id = $1 AND status <> 'cancelled'")
                .bind(id)
                .fetch_optional(&self.pool)
                .await?,
        )
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

    async fn find_move_response(
        &self,
        game_id: Uuid,
        seat: i32,
        key: &str,
    ) -> Result<Option<StoredResponse>, StoreError> {
        let row: Option<ResponseRow> = sqlx::query_as(DB::STATEMENTS.find_move_response)
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
            DB::STATEMENTS.purge_move_responses,
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
                    .bind(normalize_created_at(&cursor.created_at)?)
                    .bind(cursor.id)
                    .fetch_all(&self.pool)
                    .await?
            }
        };
        Ok(rows.into_iter().map(LobbyGame::from).collect())
    }

    async fn cancel_game(&self, id: Uuid) -> Result<(), StoreError> {
        let cancelled = sqlx::query(DB::STATEMENTS.cancel_game)
            .bind(id)
            .execute(&self.pool)
            .await?;
        if DB::rows_affected(&cancelled) == 1 {
            // Its streams close when they find the game gone.
            self.announce(id);
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

    async fn overdue_games(&self, now: &str, limit: i64) -> Result<Vec<Uuid>, StoreError> {
        Ok(sqlx::query_scalar(DB::STATEMENTS.overdue_games)
            .bind(normalize_created_at(now)?)
            .bind(limit)
            .fetch_all(&self.pool)
            .await?)
    }

    async fn expired_waiting_games(
        &self,
        created_before: &str,
        limit: i64,
    ) -> Result<Vec<Uuid>, StoreError> {
        Ok(sqlx::query_scalar(DB::STATEMENTS.expired_waiting_games)
            .bind(normalize_created_at(created_before)?)
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

    async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }
}
