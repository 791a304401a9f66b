//! Group commit: the appends that concurrent writes of different games make are written by one
//! store call (on PostgreSQL one statement and one commit), each acknowledged only after it.
//!
//! There is no waiting for a batch to fill: a batch is written at once when none is being
//! written, and the appends that arrive meanwhile make the next one. A batch holds at most one
//! append per game (a second one of the same game waits for the next batch, where the first one's
//! version decides it) and at most [`BATCH`] appends. Each game's version is checked on its own
//! row, so a stale append fails alone.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use crate::store::{Append, Entry, EventStore, StoreError};

/// Appends written by one store call at most.
const BATCH: usize = 64;

type Reply = oneshot::Sender<Result<Vec<Entry>, StoreError>>;

/// The appends waiting for the next batch, and whether a batch is being written.
#[derive(Default)]
pub struct Commits {
    pending: Mutex<Pending>,
}

#[derive(Default)]
struct Pending {
    running: bool,
    waiting: Vec<(Append, Reply)>,
}

impl Commits {
    /// Writes `append` with the others that wait, as [`EventStore::append_after`] would.
    pub async fn append(
        self: &Arc<Self>,
        store: &Arc<dyn EventStore>,
        append: Append,
    ) -> Result<Vec<Entry>, StoreError> {
        let (reply, answer) = oneshot::channel();
        let lead = {
            let mut pending = self.lock();
            pending.waiting.push((append, reply));
            !std::mem::replace(&mut pending.running, true)
        };
        if lead {
            // A task of its own, so that a request that goes away does not strand the others.
            tokio::spawn(Arc::clone(self).drain(Arc::clone(store)));
        }
        answer.await.unwrap_or_else(|_| {
            Err(StoreError::Internal(
                "a group commit ended without an answer".to_owned(),
            ))
        })
    }

    /// Writes batches until no append waits.
    async fn drain(self: Arc<Self>, store: Arc<dyn EventStore>) {
        loop {
            let batch = {
                let mut pending = self.lock();
                if pending.waiting.is_empty() {
                    pending.running = false;
                    return;
                }
                pending.take_batch()
            };
            let (appends, replies): (Vec<Append>, Vec<Reply>) = batch.into_iter().unzip();
            let results = store.append_batch(appends).await;
            for (reply, result) in replies.into_iter().zip(results) {
                // The writer may have gone: nobody to answer then.
                let _ = reply.send(result);
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Pending {
    /// The oldest waiting appends of distinct games, at most [`BATCH`]; the others keep their
    /// order for the next batch.
    fn take_batch(&mut self) -> Vec<(Append, Reply)> {
        let mut games = HashSet::new();
        let mut batch = Vec::new();
        let mut rest = Vec::new();
        for (append, reply) in self.waiting.drain(..) {
            if batch.len() < BATCH && games.insert(append.game_id) {
                batch.push((append, reply));
            } else {
                rest.push((append, reply));
            }
        }
        self.waiting = rest;
        batch
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{GameUpdate, Head};
    use uuid::Uuid;

    fn waiting(game: u128) -> (Append, Reply) {
        let append = Append {
            game_id: Uuid::from_u128(game),
            head: Head {
                version: 1,
                server_seed: [0; 32],
                hash: [0; 32],
            },
            events: Vec::new(),
            update: GameUpdate {
                status: "playing".to_owned(),
                projection: serde_json::Value::Null,
                new_seat: None,
                snapshots: Vec::new(),
            },
            idem: None,
        };
        (append, oneshot::channel().0)
    }

    fn games(batch: &[(Append, Reply)]) -> Vec<u128> {
        batch
            .iter()
            .map(|(append, _)| append.game_id.as_u128())
            .collect()
    }

    #[test]
    fn a_batch_takes_one_append_per_game_and_at_most_its_size() {
        let mut pending = Pending {
            running: true,
            waiting: [1, 2, 1, 3, 2].map(waiting).into(),
        };
        assert_eq!(games(&pending.take_batch()), [1, 2, 3]);
        assert_eq!(games(&pending.waiting), [1, 2]);
        assert_eq!(games(&pending.take_batch()), [1, 2]);
        assert!(pending.waiting.is_empty());

        pending.waiting = (0..BATCH as u128 + 5).map(waiting).collect();
        assert_eq!(pending.take_batch().len(), BATCH);
        let rest: Vec<u128> = (BATCH as u128..BATCH as u128 + 5).collect();
        assert_eq!(games(&pending.waiting), rest);
    }
}
