//! The analyses of finished games, computed where no request waits: on `GOLF_ANALYSIS_THREADS`
//! threads of their own at the lowest CPU priority, each with its own runtime, reading through
//! the [`BackgroundStore`], fed by a bounded queue. An analysis is queued when it is first asked for; the
//! first thread also sweeps the database for finished games with none stored (after a restart,
//! or when the queue was full), when it starts and whenever it has been idle for
//! [`SWEEP_EVERY`]. Each game is analysed once: the first stored analysis stands.
//!
//! The lowest priority does not keep an analysis from slowing the requests: on these virtual
//! machines a core the threads keep busy is a core the host no longer gives the workers, and 64
//! games flat out moved a seventh slower with one analysis thread at work (docs/SCALING.md). So
//! a thread rests between decisions while requests keep coming ([`Pacer`]): it takes at most
//! [`BUSY_SHARE`] of a core while the server is busy, and a whole one when it is quiet.

use std::collections::HashSet;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use uuid::Uuid;

use crate::engine::analysis::ANALYSIS_SAMPLES;
use crate::engine::{LoggedEvent, Status, analyze_paced};
use crate::metrics::Activity;
use crate::service::audit_worker::lower_priority;
use crate::service::background::BackgroundStore;
use crate::store::codec::entry_event;
use crate::store::{self, StoreError};

/// Analyses that may wait for a thread at once; past it, the sweep finds the game later.
pub const BACKLOG: usize = 256;

/// How long the sweeping thread waits for work before it looks for unanalysed games.
pub const SWEEP_EVERY: Duration = Duration::from_secs(60);

/// The share of a core an analysis thread takes while requests are being answered: a fiftieth,
/// since a tenth still cost 64 games flat out a tenth of their p99 (docs/SCALING.md).
pub const BUSY_SHARE: f64 = 0.02;

/// The games queued or being analysed, so that a game is queued once.
type Pending = Arc<Mutex<HashSet<Uuid>>>;

/// The analysis threads (none when the operator turned them off).
pub struct AnalysisWorker {
    jobs: Option<SyncSender<Uuid>>,
    pending: Pending,
}

impl AnalysisWorker {
    /// No analysis threads: analyses are off.
    pub fn off() -> AnalysisWorker {
        AnalysisWorker {
            jobs: None,
            pending: Pending::default(),
        }
    }

    /// Starts `threads` analysis threads (0: analyses are off), reading and writing through
    /// `store`, and resting while `activity` shows requests being answered.
    pub fn start(threads: usize, store: BackgroundStore, activity: Activity) -> AnalysisWorker {
        if threads == 0 {
            return AnalysisWorker::off();
        }
        let pending = Pending::default();
        let (jobs, queue) = sync_channel(BACKLOG);
        let queue = Arc::new(Mutex::new(queue));
        for index in 0..threads {
            let thread = Thread {
                store: store.clone(),
                queue: Arc::clone(&queue),
                sweeper: (index == 0).then(|| jobs.clone()),
                pending: Arc::clone(&pending),
                activity: activity.clone(),
            };
            let started = std::thread::Builder::new()
                .name(format!("golf-analysis-{index}"))
                .spawn(move || thread.run());
            if let Err(error) = started {
                tracing::warn!(%error, "an analysis thread did not start");
            }
        }
        AnalysisWorker {
            jobs: Some(jobs),
            pending,
        }
    }

    /// Whether analyses are off (`GOLF_ANALYSIS_THREADS=0`).
    pub fn disabled(&self) -> bool {
        self.jobs.is_none()
    }

    /// Queues the analysis of finished game `id` unless it is queued or under way; when the
    /// queue is full the sweep finds the game later.
    pub fn queue(&self, id: Uuid) {
        if let Some(jobs) = &self.jobs {
            queue_once(jobs, &self.pending, id);
        }
    }
}

/// Queues `id` unless it is pending.
fn queue_once(jobs: &SyncSender<Uuid>, pending: &Pending, id: Uuid) {
    let mut pending = pending
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if pending.contains(&id) {
        return;
    }
    match jobs.try_send(id) {
        Ok(()) => {
            pending.insert(id);
        }
        Err(TrySendError::Full(_)) => {
            tracing::debug!(game_id = %id, "the analysis backlog is full: the sweep finds it");
        }
        Err(TrySendError::Disconnected(_)) => {}
    }
}

/// One analysis thread.
struct Thread {
    store: BackgroundStore,
    queue: Arc<Mutex<Receiver<Uuid>>>,
    /// The first thread's way to queue the games its sweeps find.
    sweeper: Option<SyncSender<Uuid>>,
    pending: Pending,
    activity: Activity,
}

impl Thread {
    fn run(self) {
        lower_priority();
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(error) => return tracing::warn!(%error, "an analysis thread has no runtime"),
        };
        let mut sweep_due = self.sweeper.is_some();
        loop {
            if sweep_due {
                runtime.block_on(self.sweep());
            }
            let next = {
                let queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
                queue.recv_timeout(SWEEP_EVERY)
            };
            match next {
                Ok(id) => {
                    if let Err(error) = runtime.block_on(self.analyse(id)) {
                        tracing::warn!(game_id = %id, %error, "an analysis is left for later");
                    }
                    self.pending
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .remove(&id);
                    sweep_due = false;
                }
                Err(RecvTimeoutError::Timeout) => sweep_due = self.sweeper.is_some(),
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
    }

    /// Queues the finished games that have no analysis.
    async fn sweep(&self) {
        let Some(jobs) = &self.sweeper else {
            return;
        };
        let found = self
            .store
            .run(|store| async move { store.unanalysed_games(BACKLOG as i64).await });
        match found.await {
            Ok(ids) => ids
                .into_iter()
                .for_each(|id| queue_once(jobs, &self.pending, id)),
            Err(error) => tracing::warn!(%error, "the sweep for unanalysed games failed"),
        }
    }

    /// Analyses game `id` and stores the analysis, unless it is stored or the game is not
    /// finished.
    async fn analyse(&self, id: Uuid) -> Result<(), StoreError> {
        let unanalysed = self.store.run(|store| async move {
            let Some(record) = store.load_game(id).await? else {
                return Ok(None);
            };
            if record.status != Status::Finished || store.load_analysis(id).await?.is_some() {
                return Ok(None);
            }
            store::load_log(store.as_ref(), id, record.version)
                .await
                .map(Some)
        });
        let Some(entries) = unanalysed.await? else {
            return Ok(());
        };
        let log: Result<Vec<LoggedEvent>, String> = entries
            .iter()
            .map(|entry| {
                let (event, at) = entry_event(entry)?;
                Ok(LoggedEvent {
                    seq: entry.seq,
                    event,
                    at,
                })
            })
            .collect();
        let mut pacer = Pacer::new(&self.activity);
        let analysis = log.map_err(StoreError::Corrupt).and_then(|log| {
            analyze_paced(&log, ANALYSIS_SAMPLES, || pacer.rest_if_busy())
                .map_err(|e| StoreError::Corrupt(e.to_string()))
        })?;
        let json =
            serde_json::to_string(&analysis).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        self.store
            .run(|store| async move { store.record_analysis(id, &json).await })
            .await
    }
}

/// Holds an analysis thread to [`BUSY_SHARE`] of a core while the server is busy: while
/// requests begin at [`BUSY_RATE`] a second or more, measured over at least [`BUSY_WINDOW`] (a
/// client polling for its analysis is not load).
struct Pacer<'a> {
    activity: &'a Activity,
    begun: u64,
    since: Instant,
}

/// The rate of requests at which the server counts as busy, per second.
const BUSY_RATE: f64 = 100.0;

/// The shortest span over which the rate of requests is measured.
const BUSY_WINDOW: Duration = Duration::from_millis(50);

impl<'a> Pacer<'a> {
    fn new(activity: &'a Activity) -> Self {
        Pacer {
            activity,
            begun: activity.begun(),
            since: Instant::now(),
        }
    }

    /// Called after each decision: once a window has passed, rests for [`Pacer::rest`].
    fn rest_if_busy(&mut self) {
        let now = Instant::now();
        if now.saturating_duration_since(self.since) < BUSY_WINDOW {
            return;
        }
        let rest = self.rest(now);
        if !rest.is_zero() {
            std::thread::sleep(rest);
        }
        self.begun = self.activity.begun();
        self.since = Instant::now();
    }

    /// How long to rest at `now`, after judging since the last rest: nothing if requests began
    /// meanwhile at less than [`BUSY_RATE`], else long enough that the judging is
    /// [`BUSY_SHARE`] of the whole.
    fn rest(&self, now: Instant) -> Duration {
        let worked = now.saturating_duration_since(self.since);
        let begun = self.activity.begun().saturating_sub(self.begun);
        if (begun as f64) < BUSY_RATE * worked.as_secs_f64() {
            return Duration::ZERO;
        }
        worked.mul_f64(1.0 / BUSY_SHARE - 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_rests_forty_nine_times_its_work_only_while_requests_keep_coming() {
        let activity = Activity::default();
        let pacer = Pacer::new(&activity);
        let judged = pacer.since + Duration::from_millis(100);
        assert_eq!(pacer.rest(judged), Duration::ZERO, "a quiet server");
        (0..9).for_each(|_| activity.begin());
        assert_eq!(pacer.rest(judged), Duration::ZERO, "a client polling");
        activity.begin();
        let rest = pacer.rest(judged);
        assert!(
            rest.abs_diff(Duration::from_millis(4_900)) < Duration::from_micros(1),
            "{rest:?}"
        );
    }
}
