//! Group commit: the appends that concurrent writes of different games make are written by one
//! store call (on PostgreSQL one statement and one commit), each acknowledged only after it.
//!
//! There is no waiting for a batch to fill: a batch is written at once when fewer than the
//! store's [`EventStore::concurrent_batches`] are being written, and the appends that arrive
//! meanwhile make the next one. A batch
//! holds at most [`BATCH`] appends, at most one per game, and none of a game that a batch being
//! written holds (it waits for a later batch, where the first one's version decides it). Each game's version is checked on its own
//! row, so a stale append fails alone.

use std::collections::HashSet;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};

use futures_util::FutureExt;
use tokio::sync::oneshot;
use uuid::Uuid;

use crate::store::{Append, Entry, EventStore, StoreError};

/// Appends written by one store call at most.
const BATCH: usize = 64;

type Reply = oneshot::Sender<Result<Vec<Entry>, StoreError>>;

/// The appends waiting for a batch, and the batches being written.
pub struct Commits {
    /// Batches written at once at most.
    writers: usize,
    pending: Mutex<Pending>,
}

#[derive(Default)]
struct Pending {
    /// Batches being written.
    running: usize,
    /// The games of those batches.
    writing: HashSet<Uuid>,
    waiting: Vec<(Append, Reply)>,
}

impl Commits {
    /// Writes up to `writers` batches at once (at least one).
    pub fn new(writers: usize) -> Self {
        Commits {
            writers: writers.max(1),
            pending: Mutex::default(),
        }
    }

    /// Writes `append` with the others that wait, as [`EventStore::append`] would.
    pub async fn append(
        self: &Arc<Self>,
        store: &Arc<dyn EventStore>,
        append: Append,
    ) -> Result<Vec<Entry>, StoreError> {
        let (reply, answer) = oneshot::channel();
        let lead = {
            let mut pending = self.lock();
            pending.waiting.push((append, reply));
            let lead = pending.running < self.writers;
            pending.running += usize::from(lead);
            lead
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

    /// Writes batches until no append waits that another batch being written does not hold back
    /// (that one's writer takes it next).
    async fn drain(self: Arc<Self>, store: Arc<dyn EventStore>) {
        loop {
            let batch = {
                let mut pending = self.lock();
                let batch = pending.take_batch();
                if batch.is_empty() {
                    pending.running -= 1;
                    return;
                }
                batch
            };
            let (appends, replies): (Vec<Append>, Vec<Reply>) = batch.into_iter().unzip();
            let games: Vec<Uuid> = appends.iter().map(|append| append.game_id).collect();
            // A panic in the store (a bug) fails this batch's appends, not the writer: left to
            // unwind, it would keep this writer's slot and these games forever, and every later
            // append of them would wait for a batch that never comes.
            let results = AssertUnwindSafe(store.append(appends))
                .catch_unwind()
                .await
                .unwrap_or_else(|_| {
                    games
                        .iter()
                        .map(|_| {
                            Err(StoreError::Internal(
                                "a group commit's write panicked".to_owned(),
                            ))
                        })
                        .collect()
                });
            {
                let mut pending = self.lock();
                for game in &games {
                    pending.writing.remove(game);
                }
            }
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
    /// The oldest waiting appends of distinct games that no batch being written holds, at most
    /// [`BATCH`], now held by this one; the others keep their order for a later batch.
    fn take_batch(&mut self) -> Vec<(Append, Reply)> {
        let mut batch = Vec::new();
        let mut rest = Vec::new();
        for (append, reply) in std::mem::take(&mut self.waiting) {
            if batch.len() < BATCH && self.writing.insert(append.game_id) {
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
                status: crate::engine::Status::Playing,
                projection: Default::default(),
                new_seat: None,
                snapshots: Vec::new(),
                deadline_at: None,
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
    fn a_batch_takes_one_append_per_game_not_being_written_and_at_most_its_size() {
        let mut pending = Pending {
            running: 1,
            writing: HashSet::new(),
            waiting: [1, 2, 1, 3, 2].map(waiting).into(),
        };
        assert_eq!(games(&pending.take_batch()), [1, 2, 3]);
        assert_eq!(games(&pending.waiting), [1, 2]);
        // Games 1, 2 and 3 are being written: their next appends wait for that batch.
        assert!(pending.take_batch().is_empty());
        pending.writing.clear();
        assert_eq!(games(&pending.take_batch()), [1, 2]);
        assert!(pending.waiting.is_empty());

        pending.writing.clear();
        pending.waiting = (0..BATCH as u128 + 5).map(waiting).collect();
        assert_eq!(pending.take_batch().len(), BATCH);
        let rest: Vec<u128> = (BATCH as u128..BATCH as u128 + 5).collect();
        assert_eq!(games(&pending.waiting), rest);
    }
}
