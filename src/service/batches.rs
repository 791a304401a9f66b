//! One batching primitive: requests that arrive together are answered by one call of a [`Job`]
//! (one query, one statement, one commit), each request answered only after that call.
//!
//! There is no waiting for a batch to fill: a batch starts at once when fewer than the job's
//! [`Job::concurrent`] batches run, and the requests that arrive meanwhile make the next one. So
//! a request always goes into a batch that starts after it arrived, never into one already
//! running. A batch holds at most [`Job::MAX`] requests and at most one per [`Job::key`], and none
//! whose key a running batch holds (it waits for a later batch, which then sees the first one's
//! effect). A panic in a job (a bug) fails its batch's requests, never the batches after it.

use std::collections::HashSet;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, MutexGuard};

use futures_util::FutureExt;
use tokio::sync::oneshot;
use uuid::Uuid;

/// Work done for a batch of requests at once.
pub trait Job: Send + Sync + 'static {
    /// One request.
    type Request: Send + 'static;
    /// The answer to one request.
    type Answer: Send + 'static;

    /// Requests one batch holds at most.
    const MAX: usize;

    /// Batches that may run at once (at least one).
    fn concurrent(&self) -> usize;

    /// The game a request must hold alone, if any: two requests with the same key are never in
    /// one batch, nor in two batches running at once.
    fn key(request: &Self::Request) -> Option<Uuid>;

    /// The answers to `requests`, one each, in order.
    fn run(&self, requests: Vec<Self::Request>) -> impl Future<Output = Vec<Self::Answer>> + Send;

    /// The answer of a request whose batch failed without answering it (`why` says how).
    fn unanswered(why: &'static str) -> Self::Answer;
}

type Reply<J> = oneshot::Sender<<J as Job>::Answer>;

/// The requests waiting for a batch of `J`, and the batches running.
pub struct Batches<J: Job> {
    job: Arc<J>,
    pending: Mutex<Pending<J>>,
}

struct Pending<J: Job> {
    /// Batches running.
    running: usize,
    /// The keys of their requests.
    held: HashSet<Uuid>,
    waiting: Vec<(J::Request, Reply<J>)>,
}

impl<J: Job> Batches<J> {
    /// Batches of `job`.
    pub fn new(job: J) -> Self {
        Batches {
            job: Arc::new(job),
            pending: Mutex::new(Pending {
                running: 0,
                held: HashSet::new(),
                waiting: Vec::new(),
            }),
        }
    }

    /// The answer to `request`, once a batch holding it has run.
    pub async fn submit(self: &Arc<Self>, request: J::Request) -> J::Answer {
        let (reply, answer) = oneshot::channel();
        let lead = {
            let mut pending = self.lock();
            pending.waiting.push((request, reply));
            let lead = pending.running < self.job.concurrent().max(1);
            pending.running += usize::from(lead);
            lead
        };
        if lead {
            // A task of its own, so that a request that goes away does not strand the others.
            tokio::spawn(Arc::clone(self).drain());
        }
        answer
            .await
            .unwrap_or_else(|_| J::unanswered("a batch ended without an answer"))
    }

    /// Runs batches until no request waits that a running batch does not hold back (that
    /// batch's runner takes it next).
    async fn drain(self: Arc<Self>) {
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
            let (requests, replies): (Vec<J::Request>, Vec<Reply<J>>) = batch.into_iter().unzip();
            let keys: Vec<Uuid> = requests.iter().filter_map(J::key).collect();
            // Left to unwind, a panic would keep this runner's slot and these keys forever, and
            // every later request with them would wait for a batch that never comes.
            let answers = AssertUnwindSafe(self.job.run(requests))
                .catch_unwind()
                .await
                .unwrap_or_default();
            {
                let mut pending = self.lock();
                for key in &keys {
                    pending.held.remove(key);
                }
            }
            let mut answers = answers.into_iter();
            for reply in replies {
                let answer = answers
                    .next()
                    .unwrap_or_else(|| J::unanswered("a batch failed before answering"));
                // The asker may have gone: nobody to answer then.
                let _ = reply.send(answer);
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, Pending<J>> {
        self.pending
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl<J: Job> Pending<J> {
    /// The oldest waiting requests, at most [`Job::MAX`], one per key and none whose key a
    /// running batch holds, now held by this batch; the others keep their order.
    fn take_batch(&mut self) -> Vec<(J::Request, Reply<J>)> {
        let mut batch = Vec::new();
        let mut rest = Vec::new();
        for (request, reply) in std::mem::take(&mut self.waiting) {
            let free =
                batch.len() < J::MAX && J::key(&request).is_none_or(|key| self.held.insert(key));
            if free {
                batch.push((request, reply));
            } else {
                rest.push((request, reply));
            }
        }
        self.waiting = rest;
        batch
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Answers each request with the size of its batch; panics on a request of 0.
    struct Sizes {
        batches: AtomicUsize,
    }

    impl Job for Sizes {
        type Request = u128;
        type Answer = Result<usize, &'static str>;
        const MAX: usize = 3;

        fn concurrent(&self) -> usize {
            1
        }

        fn key(request: &u128) -> Option<Uuid> {
            Some(Uuid::from_u128(*request))
        }

        async fn run(&self, requests: Vec<u128>) -> Vec<Self::Answer> {
            self.batches.fetch_add(1, Ordering::SeqCst);
            assert!(!requests.contains(&0), "a bug in the job");
            vec![Ok(requests.len()); requests.len()]
        }

        fn unanswered(why: &'static str) -> Self::Answer {
            Err(why)
        }
    }

    fn waiting(games: &[u128]) -> Pending<Sizes> {
        Pending {
            running: 1,
            held: HashSet::new(),
            waiting: games.iter().map(|&g| (g, oneshot::channel().0)).collect(),
        }
    }

    fn requests(batch: &[(u128, Reply<Sizes>)]) -> Vec<u128> {
        batch.iter().map(|(request, _)| *request).collect()
    }

    #[test]
    fn a_batch_takes_one_request_per_key_not_held_and_at_most_its_size() {
        let mut pending = waiting(&[1, 2, 1, 3, 2]);
        assert_eq!(requests(&pending.take_batch()), [1, 2, 3]);
        assert_eq!(requests(&pending.waiting), [1, 2]);
        // Keys 1, 2 and 3 are held by the running batch: their next requests wait for it.
        assert!(pending.take_batch().is_empty());
        pending.held.clear();
        assert_eq!(requests(&pending.take_batch()), [1, 2]);

        let mut pending = waiting(&[4, 5, 6, 7, 8]);
        assert_eq!(requests(&pending.take_batch()), [4, 5, 6]);
        assert_eq!(requests(&pending.waiting), [7, 8]);
    }

    #[tokio::test]
    async fn a_panicking_job_fails_its_batch_and_the_next_batches_still_run() {
        let batches = Arc::new(Batches::new(Sizes {
            batches: AtomicUsize::new(0),
        }));
        assert!(
            batches.submit(0).await.is_err(),
            "the panicking batch fails"
        );
        assert_eq!(
            batches.submit(1).await,
            Ok(1),
            "the next request is answered"
        );
        let together = futures_util::future::join_all((10..20).map(|g| batches.submit(g))).await;
        assert!(together.iter().all(Result::is_ok));
        assert!(batches.job.batches.load(Ordering::SeqCst) >= 2 + 10 / Sizes::MAX);
        assert_eq!(
            batches.lock().running,
            0,
            "no runner is left marked running"
        );
        assert!(batches.lock().held.is_empty(), "no key is left held");
    }
}
