//! Group commit: the appends that concurrent writes of different games make are written by one
//! store call ([`EventStore::append`]: on PostgreSQL one statement and one commit), each
//! acknowledged only after it. A batch ([`super::batches`]) holds one append per game at most,
//! and none of a game that a batch being written holds: that append waits for a later batch,
//! where the first one's version decides it. Each game's version is checked on its own row, so a
//! stale append fails alone.

use std::sync::Arc;

use uuid::Uuid;

use crate::service::batches::Job;
use crate::store::{Append, Entry, EventStore, StoreError};

/// Writes batches of appends to the store.
pub struct GroupCommit(pub Arc<dyn EventStore>);

impl Job for GroupCommit {
    type Request = Append;
    type Answer = Result<Vec<Entry>, StoreError>;

    const MAX: usize = 64;

    fn concurrent(&self) -> usize {
        self.0.concurrent_batches()
    }

    fn key(append: &Append) -> Option<Uuid> {
        Some(append.game_id)
    }

    async fn run(&self, appends: Vec<Append>) -> Vec<Self::Answer> {
        self.0.append(appends).await
    }

    fn unanswered(why: &'static str) -> Self::Answer {
        Err(StoreError::Internal(format!(
            "a group commit's write: {why}"
        )))
    }
}
