//! Reads of games' current versions, shared by concurrent requests: each view checks the state
//! this instance kept against the database's version of the game, and the checks that arrive
//! together cost the database one query.
//!
//! A request's check goes into the next query that starts after it arrived, never into one
//! already running (which may have read before the request's last write committed): every view
//! shows a version at least as new as the last one committed before the request arrived. There is
//! no waiting for a batch to fill: a query starts at once when none runs, and the checks that
//! arrive meanwhile make the next one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;
use uuid::Uuid;

use crate::store::{EventStore, StoreError, VERSIONS_PER_READ};

type Reply = oneshot::Sender<Result<Option<i64>, StoreError>>;

/// The checks waiting for the next query, and whether a query runs.
#[derive(Default)]
pub struct VersionReads {
    pending: Mutex<Pending>,
}

#[derive(Default)]
struct Pending {
    running: bool,
    waiting: Vec<(Uuid, Reply)>,
}

impl VersionReads {
    /// The current version of game `id`, `None` when it is unknown or cancelled.
    pub async fn version(
        self: &Arc<Self>,
        store: &Arc<dyn EventStore>,
        id: Uuid,
    ) -> Result<Option<i64>, StoreError> {
        let (reply, answer) = oneshot::channel();
        let lead = {
            let mut pending = self.lock();
            pending.waiting.push((id, reply));
            !std::mem::replace(&mut pending.running, true)
        };
        if lead {
            // A task of its own, so that a request that goes away does not strand the others.
            tokio::spawn(Arc::clone(self).drain(Arc::clone(store)));
        }
        answer.await.unwrap_or_else(|_| {
            Err(StoreError::Internal(
                "the read of versions ended without an answer".to_owned(),
            ))
        })
    }

    /// Runs queries until no check waits.
    async fn drain(self: Arc<Self>, store: Arc<dyn EventStore>) {
        loop {
            let batch: Vec<(Uuid, Reply)> = {
                let mut pending = self.lock();
                if pending.waiting.is_empty() {
                    pending.running = false;
                    return;
                }
                let take = pending.waiting.len().min(VERSIONS_PER_READ);
                pending.waiting.drain(..take).collect()
            };
            let mut ids: Vec<Uuid> = batch.iter().map(|(id, _)| *id).collect();
            ids.sort_unstable();
            ids.dedup();
            let versions = store
                .game_versions(&ids)
                .await
                .map(|found| found.into_iter().collect::<HashMap<_, _>>());
            for (id, reply) in batch {
                // The asker may have gone: nobody to answer then.
                let _ = reply.send(match &versions {
                    Ok(found) => Ok(found.get(&id).copied()),
                    Err(error) => Err(error.clone()),
                });
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
