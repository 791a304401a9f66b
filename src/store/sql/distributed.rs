//! Appends on a database distributed by game over a Citus cluster: each append of a batch is
//! written apart, in a transaction of its own, so that its game's rows are one shard's work
//! ([`Backend::append_distributed`]); the batch's appends are written side by side.

use futures_util::future::join_all;
use sqlx::Executor;
use uuid::Uuid;

use super::{Backend, Batch, Bind, Sealed, SqlStore};
use crate::store::StoreError;

/// How a store writes on a distributed database.
pub struct Distributed {
    /// The statement that begins an append's transaction: it sets the lock timeout for the
    /// transaction, which Citus passes on to the workers where the row locks are waited for (it
    /// passes on `SET LOCAL` only, not a session's settings).
    pub(in crate::store) begin_append: String,
}

impl<DB: Backend> SqlStore<DB> {
    /// Writes each of `appends` in a commit of its own, all at once; answers for each whether it
    /// was written.
    pub(super) async fn write_apart(
        &self,
        distributed: &Distributed,
        appends: &[Sealed<'_>],
    ) -> Vec<Result<bool, StoreError>> {
        let begin = distributed.begin_append.as_str();
        join_all(appends.iter().map(|one| async move {
            let batch = Batch::of(std::slice::from_ref(one))?;
            let moved = DB::append_distributed(&self.pool, &batch, one.game_id, begin).await?;
            Ok(moved == [one.game_id])
        }))
        .await
    }
}

impl<DB> SqlStore<DB>
where
    DB: Backend,
    for<'c> &'c sqlx::Pool<DB>: Executor<'c, Database = DB>,
    String: Bind<DB>,
{
    /// Tells the listeners that game `id` was cancelled. The cancelling statement's own
    /// notification ran on the game's worker, unheard: this one reads no table, so it runs on
    /// the coordinator, which every listener hears.
    pub(super) async fn notify_cancelled(&self, id: Uuid) -> Result<(), StoreError> {
        sqlx::query("SELECT pg_notify('golf_events', $1)")
            .bind(id.to_string())
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}
