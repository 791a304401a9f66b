//! [`AccountStore`] on both backends: the statements on `accounts`, which read the same in both
//! dialects but for the form of `created_at` ([`AccountStatements`]).

use async_trait::async_trait;
use sqlx::types::Json;
use sqlx::{Executor, FromRow};
use uuid::Uuid;

use super::{Backend, Bind, SqlStore};
use crate::engine::Status;
use crate::store::accounts::{
    AccountEventRecord, AccountRecord, AccountStore, GamesCursor, ListedGame, NewAccount,
    NewAccountEvent, wake_key,
};
use crate::store::rows::{AccountEventRow, AccountRow, ListedGameRow, TokenEventRow};
use crate::store::{CreateIdempotency, StoreError};

/// The statements on accounts whose text differs between the dialects.
pub struct AccountStatements {
    /// Inserts an account: `$1` username, `$2` display name, `$3` token hash, `$4` created_at
    /// (the store's RFC 3339 text).
    pub insert: &'static str,
    /// The account ([`AccountRow`]) whose token hash is `$1`.
    pub by_token: &'static str,
    /// The account ([`AccountRow`]) named `$1`.
    pub by_name: &'static str,
    /// Up to `$4` games of account `$1` after (time of the last entry `$2`, game id `$3`), of
    /// status `$5` unless it is empty, newest first ([`ListedGameRow`]). The finished ones come
    /// from the index `account_games_finished` in that order, where `updated_at` is final; the
    /// unfinished ones are all the account's in `account_games_unfinished`, each timed by its
    /// game's last entry (from the game's row when the row says which entry it describes and
    /// that is its head, else from the entry: `migrations/postgres/0018_games_last_entry.sql`),
    /// and sorted. Each dialect compares the times byte by byte its way.
    pub list_games: &'static str,
    /// Deletes up to `$2` account events stored more than `$1` ([`Backend::Ttl`]) ago (on
    /// SQLite, those among the `$2` oldest: see `migrations/sqlite/0017_account_events_lean.sql`).
    pub purge_events: &'static str,
}

/// Where the first page starts: after every time the store writes, and every id.
const FIRST_PAGE: (&str, Uuid) = ("~", Uuid::max());

#[async_trait]
impl<DB> AccountStore for SqlStore<DB>
where
    DB: Backend,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    String: Bind<DB>,
    Vec<u8>: Bind<DB>,
    for<'a> &'a str: Bind<DB>,
    i32: Bind<DB>,
    for<'a> sqlx::types::Json<&'a serde_json::Value>: Bind<DB>,
    for<'r> AccountRow: FromRow<'r, DB::Row>,
    for<'r> ListedGameRow: FromRow<'r, DB::Row>,
    for<'r> AccountEventRow: FromRow<'r, DB::Row>,
    for<'r> TokenEventRow: FromRow<'r, DB::Row>,
    for<'r> (i64, i64): FromRow<'r, DB::Row>,
    Uuid: Bind<DB>,
    i64: Bind<DB>,
{
    async fn create_account(
        &self,
        account: NewAccount,
        idem: Option<CreateIdempotency>,
    ) -> Result<(), StoreError> {
        let mut tx = DB::begin_write(&self.pool).await?;
        sqlx::query(DB::ACCOUNT_STATEMENTS.insert)
            .bind(account.username)
            .bind(account.display_name)
            .bind(account.token_hash.to_vec())
            .bind(account.created_at.to_string())
            .execute(&mut *tx)
            .await?;
        if let Some(idem) = &idem {
            Self::insert_create_response(&mut tx, idem).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn account_by_token(
        &self,
        token_hash: &[u8; 32],
    ) -> Result<Option<AccountRecord>, StoreError> {
        let row: Option<AccountRow> = sqlx::query_as(DB::ACCOUNT_STATEMENTS.by_token)
            .bind(token_hash.to_vec())
            .fetch_optional(&self.pool)
            .await?;
        row.map(AccountRecord::try_from).transpose()
    }

    async fn account_by_name(&self, username: &str) -> Result<Option<AccountRecord>, StoreError> {
        let row: Option<AccountRow> = sqlx::query_as(DB::ACCOUNT_STATEMENTS.by_name)
            .bind(username)
            .fetch_optional(&self.pool)
            .await?;
        row.map(AccountRecord::try_from).transpose()
    }

    async fn list_account_games(
        &self,
        account: &str,
        status: Option<Status>,
        cursor: Option<GamesCursor>,
        limit: i64,
    ) -> Result<Vec<ListedGame>, StoreError> {
        let (updated_at, game_id) = match &cursor {
            Some(cursor) => (cursor.updated_at.as_str(), cursor.game_id),
            None => FIRST_PAGE,
        };
        let rows: Vec<ListedGameRow> = sqlx::query_as(DB::ACCOUNT_STATEMENTS.list_games)
            .bind(account)
            .bind(updated_at)
            .bind(game_id)
            .bind(limit)
            .bind(status.map_or("", Status::name))
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.into_iter().map(ListedGame::from).collect())
    }

    async fn account_game_counts(&self, account: &str) -> Result<(i64, i64), StoreError> {
        Ok(sqlx::query_as(
            "SELECT count(*), COALESCE(SUM(CASE WHEN won THEN 1 ELSE 0 END), 0) \
             FROM account_games WHERE account = $1 AND status = 'finished'",
        )
        .bind(account)
        .fetch_one(&self.pool)
        .await?)
    }

    async fn account_events(
        &self,
        account: &str,
        after: i64,
        limit: i64,
    ) -> Result<Vec<AccountEventRecord>, StoreError> {
        let rows: Vec<AccountEventRow> = sqlx::query_as(
            "SELECT id, at, type, game_id, data FROM account_events \
             WHERE account = $1 AND id > $2 ORDER BY id LIMIT $3",
        )
        .bind(account)
        .bind(after)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(AccountEventRecord::from).collect())
    }

    async fn account_events_for_token(
        &self,
        account: &str,
        token_hash: &[u8; 32],
        after: i64,
        limit: i64,
    ) -> Result<Option<Vec<AccountEventRecord>>, StoreError> {
        // No row: the token is not the account's. Else the events, or one row of nulls.
        let rows: Vec<TokenEventRow> = sqlx::query_as(
            "SELECT e.id, e.at, e.type, e.game_id, e.data FROM accounts AS a \
             LEFT JOIN account_events AS e ON e.account = a.username AND e.id > $3 \
             WHERE a.username = $1 AND a.token_hash = $2 ORDER BY e.id LIMIT $4",
        )
        .bind(account)
        .bind(token_hash.to_vec())
        .bind(after)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        if rows.is_empty() {
            return Ok(None);
        }
        Ok(Some(
            rows.into_iter().filter_map(TokenEventRow::event).collect(),
        ))
    }

    async fn purge_account_events(&self, limit: i64) -> Result<u64, StoreError> {
        let purged = sqlx::query(DB::ACCOUNT_STATEMENTS.purge_events)
            .bind(DB::ACCOUNT_EVENTS_TTL)
            .bind(limit)
            .execute(&self.pool)
            .await?;
        Ok(DB::rows_affected(&purged))
    }

    async fn rotate_account_token(
        &self,
        username: &str,
        old: &[u8; 32],
        new: &[u8; 32],
    ) -> Result<bool, StoreError> {
        let rotated = sqlx::query(
            "UPDATE accounts SET token_hash = $3 WHERE username = $1 AND token_hash = $2",
        )
        .bind(username)
        .bind(old.to_vec())
        .bind(new.to_vec())
        .execute(&self.pool)
        .await?;
        if DB::rows_affected(&rotated) != 1 {
            return Ok(false);
        }
        // The account's open streams check their token again and end.
        let wake = wake_key(username);
        if DB::NOTIFIES_ON_COMMIT {
            sqlx::query("SELECT pg_notify('golf_events', $1)")
                .bind(wake.to_string())
                .execute(&self.pool)
                .await?;
        } else {
            self.changes.wake(wake);
        }
        Ok(true)
    }
}

/// The account events written outside an append (a challenge's, a rating's).
impl<DB> SqlStore<DB>
where
    DB: Backend,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'a> &'a str: Bind<DB>,
    String: Bind<DB>,
    Option<Uuid>: Bind<DB>,
    i64: Bind<DB>,
    for<'a> Json<&'a serde_json::Value>: Bind<DB>,
    for<'r> (i64,): FromRow<'r, DB::Row>,
{
    /// Stores `notices` of game `game_id` (none: of no game, a challenge's), each numbered from
    /// its account's last event id; on PostgreSQL the same transaction announces them to every
    /// instance on commit. The events an append gives are written by the append's statement.
    pub(super) async fn insert_notices(
        conn: &mut DB::Connection,
        notices: &[NewAccountEvent],
        game_id: Option<Uuid>,
    ) -> Result<(), StoreError> {
        for notice in notices {
            let (id,): (i64,) = sqlx::query_as(
                "UPDATE accounts SET last_event_id = last_event_id + 1 WHERE username = $1 \
                 RETURNING last_event_id",
            )
            .bind(notice.account.as_str())
            .fetch_one(&mut *conn)
            .await?;
            sqlx::query(
                "INSERT INTO account_events (account, id, at, type, game_id, data) \
                 VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(notice.account.as_str())
            .bind(id)
            .bind(notice.at.to_string())
            .bind(notice.kind)
            .bind(game_id)
            .bind(Json(&notice.data))
            .execute(&mut *conn)
            .await?;
            if DB::NOTIFIES_ON_COMMIT {
                sqlx::query("SELECT pg_notify('golf_events', $1)")
                    .bind(wake_key(&notice.account).to_string())
                    .execute(&mut *conn)
                    .await?;
            }
        }
        Ok(())
    }
}
