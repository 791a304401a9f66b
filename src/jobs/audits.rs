//! The audits of finished games, run where no request waits: on a thread of its own at the
//! lowest CPU priority, with its own runtime, reading through the [`BackgroundStore`], so that
//! neither the reads of a whole log nor its replay (the costliest thing the server does) run on a
//! request worker or delay the moves beside them.
//!
//! A game's audit is queued when the write that finishes it is answered, and when it is asked for
//! before it was stored (a game finished before audits were stored, or whose instance stopped
//! first). The worker audits one game at a time and never replays a game whose audit is stored,
//! so any number of requests for one audit cost one replay. At most [`BACKLOG`] audits wait: a
//! finished game that finds no room is audited when first asked for.

use prometheus::IntCounter;
use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;

use crate::audit;
use crate::engine::Status;
use crate::service::ServiceError;
use crate::service::background::BackgroundStore;
use crate::store::{self, AuditResult};

/// Audits that may wait for the worker at once.
pub const BACKLOG: usize = 256;

/// The answer to an audit asked for: the stored result, `None` if the game is not finished.
type Reply = oneshot::Sender<Result<Option<AuditResult>, ServiceError>>;

/// The worker's thread, fed through a bounded queue; it ends when this is dropped.
pub struct AuditWorker {
    jobs: mpsc::Sender<(Uuid, Option<Reply>)>,
}

impl AuditWorker {
    /// Starts the worker, which reads and writes through `store` and counts the logs it replays
    /// in `replayed`.
    pub fn start(store: BackgroundStore, replayed: IntCounter) -> AuditWorker {
        let (jobs, queue) = mpsc::channel(BACKLOG);
        let started = std::thread::Builder::new()
            .name("golf-auditor".to_owned())
            .spawn(move || {
                lower_priority();
                match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime.block_on(work(store, queue, replayed)),
                    Err(error) => tracing::warn!(%error, "the audit worker has no runtime"),
                }
            });
        if let Err(error) = started {
            tracing::warn!(%error, "no audit worker: audits will fail until a restart");
        }
        AuditWorker { jobs }
    }

    /// Queues the audit of a game that just finished, if there is room.
    pub fn finished(&self, id: Uuid) {
        if self.jobs.try_send((id, None)).is_err() {
            tracing::debug!(game_id = %id, "the audit backlog is full: audited when asked for");
        }
    }

    /// The audit of game `id`, computed now unless it is stored; `None` while the game is not
    /// finished.
    pub async fn asked(&self, id: Uuid) -> Result<Option<AuditResult>, ServiceError> {
        let gone = || ServiceError::Internal("the audit worker is gone".to_owned());
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send((id, Some(reply)))
            .await
            .map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }
}

/// Audits the queued games one at a time until the queue closes.
async fn work(
    store: BackgroundStore,
    mut queue: mpsc::Receiver<(Uuid, Option<Reply>)>,
    replayed: IntCounter,
) {
    while let Some((id, reply)) = queue.recv().await {
        let audited = audit_game(&store, id, &replayed).await;
        match reply {
            // The asker may have gone: nobody to answer then.
            Some(reply) => drop(reply.send(audited)),
            None => {
                if let Err(error) = audited {
                    tracing::warn!(game_id = %id, %error, "the audit of a finished game is left for later");
                }
            }
        }
    }
}

/// Checks a finished game's whole log and stores the result, unless one is stored (the first
/// stored stands, and the same log always gives the same result). A log that fails is logged.
async fn audit_game(
    store: &BackgroundStore,
    id: Uuid,
    replayed: &IntCounter,
) -> Result<Option<AuditResult>, ServiceError> {
    let loaded = store.run(|store| async move { store.load_game(id).await });
    let Some(record) = loaded.await? else {
        return Err(ServiceError::NotFound("There is no such game."));
    };
    if record.status != Status::Finished {
        return Ok(None);
    }
    if let Some(stored) = record.audit {
        return Ok(Some(stored));
    }
    let version = record.version;
    let entries = store
        .run(|store| async move { store::load_log(store.as_ref(), id, version).await })
        .await?;
    let report = audit::audit(&entries);
    replayed.inc();
    let result = AuditResult {
        verified: report.verified,
        first_bad_seq: report.first_bad_seq,
    };
    if !result.verified {
        // Seq and check names only: a finding's message may quote the log.
        let checks: Vec<_> = report.findings.iter().map(|f| (f.seq, f.check)).collect();
        tracing::error!(game_id = %id, ?checks, "a finished game's log fails its audit");
    }
    store
        .run(|store| async move { store.record_audit(id, result).await })
        .await?;
    Ok(Some(result))
}

/// Gives this thread the lowest CPU priority (nice 19): it runs when the request workers leave a
/// core free, and yields to them otherwise.
#[cfg(target_os = "linux")]
pub(crate) fn lower_priority() {
    // On Linux a thread's nice value is its own (`PRIO_PROCESS` with 0 names the calling
    // thread), so the workers keep theirs.
    // SAFETY: setpriority reads no memory of ours; it only changes this thread's scheduling.
    let failed = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 19) } != 0;
    if failed {
        tracing::warn!("a background thread runs at the workers' priority: setpriority failed");
    }
}

/// Elsewhere a process's threads share one nice value: the worker keeps the workers'.
#[cfg(not(target_os = "linux"))]
pub(crate) fn lower_priority() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn the_thread_runs_at_the_lowest_priority() {
        let nice = std::thread::spawn(|| {
            lower_priority();
            // SAFETY: getpriority reads no memory of ours.
            unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }
        })
        .join()
        .expect("the thread");
        assert_eq!(nice, 19);
    }

    #[tokio::test]
    async fn an_audit_that_fails_is_answered_and_the_worker_goes_on() {
        let directory = tempfile::tempdir().expect("a temporary directory");
        let url = format!("sqlite://{}", directory.path().join("golf.db").display());
        let store = store::connect(&url, &store::PoolOptions::default())
            .await
            .expect("a fresh SQLite database");
        let replayed = IntCounter::new("replayed", "logs replayed").expect("a counter");
        let worker = AuditWorker::start(BackgroundStore::new(store), replayed.clone());
        worker.finished(Uuid::nil());
        for _ in 0..2 {
            let asked = worker.asked(Uuid::nil()).await;
            assert!(matches!(asked, Err(ServiceError::NotFound(_))), "{asked:?}");
        }
        assert_eq!(replayed.get(), 0, "nothing was replayed");
    }
}
