//! The analyses of finished games, computed where no request waits: on `GOLF_ANALYSIS_THREADS`
//! threads of their own at the lowest CPU priority, each with its own runtime and connection to
//! the database, fed by a bounded queue. An analysis is queued when it is first asked for; the
//! first thread also sweeps the database for finished games with none stored (after a restart,
//! or when the queue was full), when it starts and whenever it has been idle for
//! [`SWEEP_EVERY`]. Each game is analysed once: the first stored analysis stands.

use std::collections::HashSet;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use uuid::Uuid;

use crate::engine::analysis::ANALYSIS_SAMPLES;
use crate::engine::{LoggedEvent, Status, analyze};
use crate::service::audit_worker::{OpenStore, lower_priority};
use crate::store::codec::entry_event;
use crate::store::{self, EventStore, StoreError};

/// Analyses that may wait for a thread at once; past it, the sweep finds the game later.
pub const BACKLOG: usize = 256;

/// How long the sweeping thread waits for work before it looks for unanalysed games.
pub const SWEEP_EVERY: Duration = Duration::from_secs(60);

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

    /// Starts `threads` analysis threads (0: analyses are off), each opening its connection
    /// with `open` when it first needs one (and again after a failure).
    pub fn start(threads: usize, open: OpenStore) -> AnalysisWorker {
        if threads == 0 {
            return AnalysisWorker::off();
        }
        let pending = Pending::default();
        let (jobs, queue) = sync_channel(BACKLOG);
        let queue = Arc::new(Mutex::new(queue));
        for index in 0..threads {
            let thread = Thread {
                open: open.clone(),
                queue: Arc::clone(&queue),
                sweeper: (index == 0).then(|| jobs.clone()),
                pending: Arc::clone(&pending),
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
    open: OpenStore,
    queue: Arc<Mutex<Receiver<Uuid>>>,
    /// The first thread's way to queue the games its sweeps find.
    sweeper: Option<SyncSender<Uuid>>,
    pending: Pending,
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
        let mut store: Option<Arc<dyn EventStore>> = None;
        let mut sweep_due = self.sweeper.is_some();
        loop {
            if sweep_due {
                runtime.block_on(self.sweep(&mut store));
            }
            let next = {
                let queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
                queue.recv_timeout(SWEEP_EVERY)
            };
            match next {
                Ok(id) => {
                    if let Err(error) = runtime.block_on(self.analyse(&mut store, id)) {
                        tracing::warn!(game_id = %id, %error, "an analysis is left for later");
                        store = None;
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

    /// This thread's connection, opened if need be.
    async fn connection(
        &self,
        store: &mut Option<Arc<dyn EventStore>>,
    ) -> Result<Arc<dyn EventStore>, StoreError> {
        if let Some(store) = store {
            return Ok(Arc::clone(store));
        }
        let opened = (self.open)().await?;
        Ok(Arc::clone(store.insert(opened)))
    }

    /// Queues the finished games that have no analysis.
    async fn sweep(&self, store: &mut Option<Arc<dyn EventStore>>) {
        let (Some(jobs), Ok(connection)) = (&self.sweeper, self.connection(store).await) else {
            return;
        };
        match connection.unanalysed_games(BACKLOG as i64).await {
            Ok(ids) => ids
                .into_iter()
                .for_each(|id| queue_once(jobs, &self.pending, id)),
            Err(error) => tracing::warn!(%error, "the sweep for unanalysed games failed"),
        }
    }

    /// Analyses game `id` and stores the analysis, unless it is stored or the game is not
    /// finished.
    async fn analyse(
        &self,
        store: &mut Option<Arc<dyn EventStore>>,
        id: Uuid,
    ) -> Result<(), StoreError> {
        let store = self.connection(store).await?;
        let Some(record) = store.load_game(id).await? else {
            return Ok(());
        };
        if record.status != Status::Finished || store.load_analysis(id).await?.is_some() {
            return Ok(());
        }
        let entries = store::load_log(store.as_ref(), id, record.version).await?;
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
        let analysis = log.map_err(StoreError::Corrupt).and_then(|log| {
            analyze(&log, ANALYSIS_SAMPLES).map_err(|e| StoreError::Corrupt(e.to_string()))
        })?;
        let json =
            serde_json::to_string(&analysis).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        store.record_analysis(id, &json).await
    }
}
