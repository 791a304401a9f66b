//! The analyses of finished games, computed where no request waits: on `GOLF_ANALYSIS_THREADS`
//! threads of their own at the lowest CPU priority, each with its own runtime, reading through
//! the [`BackgroundStore`], fed by a bounded queue that a job fills with the finished games the
//! database holds with no analysis (after a restart, or when the queue was full, as well as
//! when a game ends or an analysis is asked for). Each game is analysed once: the first stored
//! analysis stands.
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

use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::engine::analysis::ANALYSIS_SAMPLES;
use crate::engine::{LoggedEvent, Status, analyze_paced};
use crate::jobs::Jobs;
use crate::jobs::audits::lower_priority;
use crate::jobs::background::BackgroundStore;
use crate::metrics::Activity;
use crate::service::Services;
use crate::store::codec::logged_event;
use crate::store::{self, StoreError};

/// Analyses that may wait for a thread at once; past it, the next pass finds the game again.
pub const BACKLOG: usize = 256;

/// How long the feeding job waits for a wake-up before it looks for unanalysed games anyway.
pub const SWEEP_EVERY: Duration = Duration::from_secs(60);

/// The share of a core an analysis thread takes while requests are being answered: a fiftieth,
/// since a tenth still cost 64 games flat out a tenth of their p99 (docs/SCALING.md).
pub const BUSY_SHARE: f64 = 0.02;

/// The games queued or being analysed, so that a game is queued once.
type Pending = Arc<Mutex<HashSet<Uuid>>>;

/// Starts `threads` analysis threads (0: analyses are off) reading and writing through `store`
/// and resting while requests are answered, and the job that feeds them the finished games with
/// no analysis: when a game ends or an analysis is asked for, and every [`SWEEP_EVERY`]. The
/// threads end when the feeding job stops.
pub fn start(jobs: &mut Jobs, store: BackgroundStore, services: &Services, threads: usize) {
    if threads == 0 {
        return;
    }
    let pending = Pending::default();
    let (queue, work) = sync_channel(BACKLOG);
    let work = Arc::new(Mutex::new(work));
    for index in 0..threads {
        let thread = Thread {
            store: store.clone(),
            work: Arc::clone(&work),
            pending: Arc::clone(&pending),
            activity: services.games.metrics().activity.clone(),
            stop: jobs.stop.clone(),
        };
        match std::thread::Builder::new()
            .name(format!("golf-analysis-{index}"))
            .spawn(move || thread.run())
        {
            Ok(thread) => jobs.own_thread(thread),
            Err(error) => tracing::warn!(%error, "an analysis thread did not start"),
        }
    }
    let games = services.games.clone();
    let ends = Arc::clone(&services.ends);
    let wake = Some(Arc::clone(&services.ends.analyses));
    jobs.every("analyses", SWEEP_EVERY, wake, move || {
        let (games, queue, pending) = (games.clone(), queue.clone(), Arc::clone(&pending));
        // The games whose analysis a client asked for go first, then the backlog.
        let asked = ends.take_asked_analyses();
        async move {
            let found = games.store().unanalysed_games(BACKLOG as i64).await?;
            Ok(asked
                .into_iter()
                .chain(found)
                .filter(|id| queue_once(&queue, &pending, *id))
                .count() as u64)
        }
    });
}

/// Queues `id` unless it is pending; answers whether it queued it. When the queue is full, the
/// next pass finds the game again.
fn queue_once(queue: &SyncSender<Uuid>, pending: &Pending, id: Uuid) -> bool {
    let mut pending = pending
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if pending.contains(&id) {
        return false;
    }
    match queue.try_send(id) {
        Ok(()) => pending.insert(id),
        Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => false,
    }
}

/// One analysis thread.
struct Thread {
    store: BackgroundStore,
    work: Arc<Mutex<Receiver<Uuid>>>,
    pending: Pending,
    activity: Activity,
    /// Checked before each game: a stopping instance leaves the rest of the queue for later.
    stop: CancellationToken,
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
        while !self.stop.is_cancelled() {
            let next = {
                let work = self.work.lock().unwrap_or_else(|p| p.into_inner());
                work.recv_timeout(SWEEP_EVERY)
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
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
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
        let log: Result<Vec<LoggedEvent>, String> = entries.iter().map(logged_event).collect();
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
