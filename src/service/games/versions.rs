//! Reads of games' current versions, shared by concurrent requests: each view checks the state
//! this instance kept against the database's version of the game, and the checks that arrive
//! together cost the database one query ([`super::batches`]).
//!
//! A check goes into a query that starts after it arrived, never into one already running (which
//! may have read before the request's last write committed): every view shows a version at least
//! as new as the last one committed before the request arrived.

use std::collections::HashMap;
use std::sync::Arc;

use uuid::Uuid;

use crate::service::batches::Job;
use crate::store::{EventStore, StoreError, VERSIONS_PER_READ};

/// Reads the versions of batches of games: `None` for a game unknown or cancelled.
pub struct VersionRead(pub Arc<dyn EventStore>);

impl Job for VersionRead {
    type Request = Uuid;
    type Answer = Result<Option<i64>, StoreError>;

    const MAX: usize = VERSIONS_PER_READ;

    fn concurrent(&self) -> usize {
        1
    }

    fn key(_: &Uuid) -> Option<Uuid> {
        None
    }

    async fn run(&self, games: Vec<Uuid>) -> Vec<Self::Answer> {
        let mut ids = games.clone();
        ids.sort_unstable();
        ids.dedup();
        match self.0.game_versions(&ids).await {
            Ok(found) => {
                let found: HashMap<Uuid, i64> = found.into_iter().collect();
                games.iter().map(|id| Ok(found.get(id).copied())).collect()
            }
            Err(error) => vec![Err(error); games.len()],
        }
    }

    fn unanswered(why: &'static str) -> Self::Answer {
        Err(StoreError::Internal(format!("a read of versions: {why}")))
    }
}
