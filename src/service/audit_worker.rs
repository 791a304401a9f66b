//! The audits of finished games, run where no request waits: on a thread of its own at the
//! lowest CPU priority, with its own runtime and its own connection to the database, so that
//! neither the reads of a whole log nor its replay (the costliest thing the server does) run on a
//! request worker or delay the moves beside them.
//!
//! A game's audit is queued when the write that finishes it is answered, and when it is asked for
//! before it was stored (a game finished before audits were stored, or whose instance stopped
//! first). The worker audits one game at a time and never replays a game whose audit is stored,
//! so any number of requests for one audit cost one replay. At most [`BACKLOG`] audits wait: a
//! finished game that finds no room is audited when first asked for.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use prometheus::IntCounter;
use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;

use crate::audit;
use crate::engine::Status;
use crate::service::ServiceError;
use crate::store::{self, AuditResult, EventStore, StoreError};

/// Audits that may wait for the worker at once.
pub const BACKLOG: usize = 256;

/// Opens the worker's own connection to the database, on the worker's runtime.
pub type OpenStore =
    Arc<dyn Fn() -> BoxFuture<'static, Result<Arc<dyn EventStore>, StoreError>> + Send + Sync>;

/// The answer to an audit asked for: the stored result, `None` if the game is not finished.
type Reply = oneshot::Sender<Result<Option<AuditResult>, ServiceError>>;

/// The worker's thread, fed through a bounded queue; it ends when this is dropped.
pub struct AuditWorker {
    jobs: mpsc::Sender<(Uuid, Option<Reply>)>,
}

impl AuditWorker {
    /// Starts the worker, which opens its connection with `open` when it first needs one (and
    /// again after a failure), and counts the logs it replays in `replayed`.
    pub fn start(open: OpenStore, replayed: IntCounter) -> AuditWorker {
        let (jobs, queue) = mpsc::channel(BACKLOG);
        let started = std::thread::Builder::new()
            .name("golf-auditor".to_owned())
            .spawn(move || {
                lower_priority();
                match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime.block_on(work(open, queue, replayed)),
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
    open: OpenStore,
    mut queue: mpsc::Receiver<(Uuid, Option<Reply>)>,
    replayed: IntCounter,
) {
    let mut store: Option<Arc<dyn EventStore>> = None;
    while let Some((id, reply)) = queue.recv().await {
        let audited = match &store {
            Some(store) => audit_game(store.as_ref(), id, &replayed).await,
            None => match open().await {
                Ok(opened) => audit_game(store.insert(opened).as_ref(), id, &replayed).await,
                Err(error) => Err(error.into()),
            },
        };
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
    store: &dyn EventStore,
    id: Uuid,
    replayed: &IntCounter,
) -> Result<Option<AuditResult>, ServiceError> {
    let Some(record) = store.load_game(id).await? else {
        return Err(ServiceError::NotFound("There is no such game."));
    };
    if record.status != Status::Finished {
        return Ok(None);
    }
    if let Some(stored) = record.audit {
        return Ok(Some(stored));
    }
    let entries = store::load_log(store, id, record.version).await?;
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
    store.record_audit(id, result).await?;
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
    async fn a_worker_that_cannot_open_its_connection_says_so_and_goes_on() {
        let open: OpenStore = Arc::new(|| {
            Box::pin(async { Err(StoreError::Unavailable("no database here".to_owned())) })
        });
        let replayed = IntCounter::new("replayed", "logs replayed").expect("a counter");
        let worker = AuditWorker::start(open, replayed.clone());
        worker.finished(Uuid::nil());
        for _ in 0..2 {
            let asked = worker.asked(Uuid::nil()).await;
            assert!(
                matches!(asked, Err(ServiceError::Store(StoreError::Unavailable(_)))),
                "{asked:?}"
            );
        }
        assert_eq!(replayed.get(), 0, "nothing was replayed");
    }
}
