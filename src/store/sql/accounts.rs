//! [`AccountStore`] on both backends: the statements on `accounts`, which read the same in both
//! dialects but for the form of `created_at` ([`AccountStatements`]).

use async_trait::async_trait;
use sqlx::{Executor, FromRow};

use super::{Backend, Bind, SqlStore};
use crate::store::accounts::{AccountRecord, AccountStore, NewAccount};
use crate::store::rows::AccountRow;
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
}

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
        Ok(DB::rows_affected(&rotated) == 1)
    }
}
