//! The replays that audit games which just ended, run on a thread of their own at the lowest CPU
//! priority: replaying a whole game is the costliest thing the server does, and it must not delay
//! the requests being served meanwhile (in a moves run it was a tenth of the server's CPU, and
//! the 99th percentile of every move's latency). At most [`BACKLOG`] games wait for it; a game
//! that finds no room is audited when its audit is first asked for, as is one whose instance
//! stopped first.

use std::sync::Arc;
use std::sync::mpsc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};

use crate::audit::{self, AuditReport};
use crate::store::Entry;

/// Games whose audit may wait for the auditor at once: each holds its log in memory.
pub const BACKLOG: usize = 64;

type Job = (Vec<Entry>, oneshot::Sender<AuditReport>);

/// The auditor's thread, and room in its backlog.
pub struct Auditor {
    jobs: mpsc::Sender<Job>,
    room: Arc<Semaphore>,
}

impl Auditor {
    /// Starts the thread; it ends when the auditor is dropped.
    pub fn start() -> Auditor {
        let (jobs, queue) = mpsc::channel::<Job>();
        let started = std::thread::Builder::new()
            .name("golf-auditor".to_owned())
            .spawn(move || {
                lower_priority();
                for (entries, reply) in queue {
                    // The asker may have gone (its instance stopping): nobody to answer then.
                    let _ = reply.send(audit::audit(&entries));
                }
            });
        if let Err(error) = started {
            tracing::warn!(%error, "no auditor thread: games are audited when first asked for");
        }
        Auditor {
            jobs,
            room: Arc::new(Semaphore::new(BACKLOG)),
        }
    }

    /// A place in the backlog, held until the audit is stored; `None` when it is full.
    pub fn admit(&self) -> Option<OwnedSemaphorePermit> {
        Arc::clone(&self.room).try_acquire_owned().ok()
    }

    /// The audit of a log, replayed on the auditor's thread; `None` if that thread is gone.
    pub async fn replay(&self, entries: Vec<Entry>) -> Option<AuditReport> {
        let (reply, report) = oneshot::channel();
        self.jobs.send((entries, reply)).ok()?;
        report.await.ok()
    }
}

/// Gives this thread the lowest CPU priority (nice 19): it runs when the request workers leave a
/// core free, and yields to them otherwise.
#[cfg(target_os = "linux")]
fn lower_priority() {
    // On Linux a thread's nice value is its own (`PRIO_PROCESS` with 0 names the calling
    // thread), so the workers keep theirs.
    // SAFETY: setpriority reads no memory of ours; it only changes this thread's scheduling.
    let failed = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 19) } != 0;
    if failed {
        tracing::warn!("the auditor runs at the workers' priority: setpriority failed");
    }
}

/// Elsewhere a process's threads share one nice value: the auditor keeps the workers'.
#[cfg(not(target_os = "linux"))]
fn lower_priority() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_backlog_is_bounded_and_a_log_is_replayed_on_the_thread() {
        let auditor = Auditor::start();
        let held: Vec<_> = (0..BACKLOG).map(|_| auditor.admit()).collect();
        assert!(held.iter().all(Option::is_some));
        assert!(auditor.admit().is_none(), "a full backlog admits no more");
        drop(held);
        assert!(auditor.admit().is_some());

        // An empty log is no finished game: the auditor's replay says what audit() says.
        let report = auditor
            .replay(Vec::new())
            .await
            .expect("the thread answers");
        assert!(!report.verified);
        assert_eq!(report, audit::audit(&[]));
    }

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
}
