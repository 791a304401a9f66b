//! Every piece of work of an instance that no request waits for, started in one place
//! ([`Jobs::start`]) and owned by one supervisor with one stop signal ([`Jobs::stop`]):
//!
//! | job | runs | woken by | stops on | catches up from |
//! |---|---|---|---|---|
//! | `listener` | PostgreSQL only: the connection that hears other instances' appends | a notification | the stop signal | (wakes every stream after a reconnection) |
//! | `turn timeouts` | seats whose deadline passed, handed to the bot ([`sweeps`]) | `GOLF_SWEEP_INTERVAL_MS` | the stop signal | `games.deadline_at` |
//! | `waiting games` | waiting games past `GOLF_WAITING_EXPIRY_S`, cancelled | the interval | the stop signal | `games.created_at` |
//! | `ratings` | rated games' ends applied, oldest first, once each | a rated game's end, the interval | the stop signal | the games not yet rated |
//! | `challenges` | open challenges past their expiry | the interval | the stop signal | `challenges.expires_at` |
//! | `seek bots` | seeks whose wait for bots is over, filled | the interval | the stop signal | `seeks` |
//! | `seek expiry` | seeks past their expiry | the interval | the stop signal | `seeks.expires_at` |
//! | `idempotency purge` | stored answers past their time to live | a twenty-fourth of it | the stop signal | their `expires_at` |
//! | `webhook deliveries` | account events turned into deliveries, attempted, recorded ([`deliveries`]) | an account's event, a retry due | the stop signal | `webhooks.enqueued_to` and the leases |
//! | `audits` | finished games' logs checked, on a thread of their own ([`audits`]) | a game's end, an audit asked for, a minute | the stop signal, between two games | finished games with no stored audit |
//! | `analyses` | finished games' analyses, on `GOLF_ANALYSIS_THREADS` threads ([`analyses`]) | a game's end, an analysis asked for, a minute | the stop signal, between two games | finished games not analysed |
//!
//! Each periodic job runs and fails on its own ([`every`]): an error is logged with the job's
//! name and the job backs off, and no job's error skips another's pass. The database is every
//! job's queue, so a wake-up lost with a full queue or a crash only delays the work to the next
//! pass, on this instance or another. A stopping instance stops them all within its grace
//! period, then closes its database pool ([`Jobs::stop`]).

pub mod analyses;
pub mod audits;
pub mod background;
pub mod deliveries;
pub mod sweeps;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::service::retry::Backoff;
use crate::service::{ServiceError, Services};
use crate::store::{EventStore, IDEMPOTENCY_TTL};
use background::BackgroundStore;

/// The waits of a periodic job whose passes keep failing.
const FAILING_JOB: Backoff = Backoff {
    first: Duration::from_secs(1),
    max: Duration::from_secs(60),
};

/// When the jobs run.
#[derive(Debug, Clone)]
pub struct JobSettings {
    /// How often the sweeps look for timeouts and expiries.
    pub sweep_interval: Duration,
    /// How long a game may wait for its players.
    pub waiting_expiry: Duration,
    /// Threads that analyse finished games (0: none).
    pub analysis_threads: usize,
}

/// The running jobs of an instance.
pub struct Jobs {
    stop: CancellationToken,
    tasks: JoinSet<()>,
    threads: Vec<std::thread::JoinHandle<()>>,
    store: Arc<dyn EventStore>,
}

impl Jobs {
    /// Starts every job of an instance serving `services`.
    ///
    /// # Panics
    /// Outside a Tokio runtime.
    pub fn start(services: &Services, settings: &JobSettings) -> Jobs {
        let store = Arc::clone(services.store());
        let mut jobs = Jobs {
            stop: CancellationToken::new(),
            tasks: JoinSet::new(),
            threads: Vec::new(),
            store: Arc::clone(&store),
        };
        if let Some(listener) = store.changes().take_listener() {
            jobs.spawn(listener);
        }
        sweeps::start(&mut jobs, services, settings);
        let purge = Arc::clone(&store);
        jobs.every("idempotency purge", IDEMPOTENCY_TTL / 24, None, move || {
            let store = Arc::clone(&purge);
            async move { Ok(store.purge_expired_idempotency().await?) }
        });
        let deliveries = deliveries::Deliveries::new(services);
        jobs.spawn(deliveries.run());
        let background = BackgroundStore::new(Arc::clone(&store));
        let audits = audits::start(background.clone(), services, jobs.stop.clone());
        jobs.threads.extend(audits);
        analyses::start(&mut jobs, background, services, settings.analysis_threads);
        jobs
    }

    /// Runs `task` until it ends or the jobs stop.
    fn spawn(&mut self, task: impl Future<Output = ()> + Send + 'static) {
        let stop = self.stop.clone();
        self.tasks.spawn(async move {
            tokio::select! {
                _ = stop.cancelled() => {}
                _ = task => {}
            }
        });
    }

    /// Runs `pass` every `period` (and whenever `wake` is notified) until the jobs stop; see
    /// [`every`].
    fn every<Pass, Passed>(
        &mut self,
        name: &'static str,
        period: Duration,
        wake: Option<Arc<Notify>>,
        pass: Pass,
    ) where
        Pass: FnMut() -> Passed + Send + 'static,
        Passed: Future<Output = Result<u64, ServiceError>> + Send + 'static,
    {
        self.spawn(every(name, period, wake, pass));
    }

    /// A thread the jobs own, joined when they stop.
    fn own_thread(&mut self, thread: std::thread::JoinHandle<()>) {
        self.threads.push(thread);
    }

    /// Stops every job: signals them, waits up to `grace` for them to end (a job in the middle
    /// of a pass ends at its next await; the audit and analysis threads before their next game),
    /// then closes the database pool, so that SQLite's write-ahead log is folded back into the
    /// database file.
    pub async fn stop(mut self, grace: Duration) {
        self.stop.cancel();
        let tasks = async { while self.tasks.join_next().await.is_some() {} };
        if tokio::time::timeout(grace, tasks).await.is_err() {
            tracing::warn!("jobs still running after the grace period: aborted");
            self.tasks.abort_all();
        }
        let threads = std::mem::take(&mut self.threads);
        let joined = tokio::task::spawn_blocking(move || {
            for thread in threads {
                if thread.join().is_err() {
                    tracing::warn!("a job's thread panicked");
                }
            }
        });
        if tokio::time::timeout(grace, joined).await.is_err() {
            tracing::warn!("a job's thread still running after the grace period: left behind");
        }
        self.store.close().await;
    }
}

impl Drop for Jobs {
    /// Jobs dropped without [`Jobs::stop`] (a server that failed to start, a test's) are
    /// signalled all the same, so that no thread outlives them.
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Runs `pass` now, then again `period` after each pass (sooner when `wake` is notified), until
/// `stop`; a failing pass is logged with the job's `name` and followed by a wait that grows with
/// the failures in a row ([`FAILING_JOB`]), at least `period`. A pass answers how much it did.
pub async fn every<Pass, Passed>(
    name: &'static str,
    period: Duration,
    wake: Option<Arc<Notify>>,
    mut pass: Pass,
) where
    Pass: FnMut() -> Passed,
    Passed: Future<Output = Result<u64, ServiceError>>,
{
    let mut failures = 0;
    loop {
        let wait = match pass().await {
            Ok(done) => {
                if done > 0 {
                    tracing::debug!(job = name, done, "a job's pass did work");
                }
                failures = 0;
                period
            }
            Err(error) => {
                failures += 1;
                let wait = FAILING_JOB.after(failures).max(period);
                tracing::warn!(job = name, %error, ?wait, "a job's pass failed: tried again later");
                wait
            }
        };
        let woken = async {
            match &wake {
                Some(wake) => wake.notified().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = woken => {}
        }
    }
}
