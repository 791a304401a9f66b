//! The audits of games that just ended, run on a thread of their own at the lowest CPU priority:
//! reading and replaying a whole game's log is the costliest thing the server does, and it must
//! not delay the requests being served meanwhile (in a moves run it was a tenth of the server's
//! CPU, and the 99th percentile of every move's latency). At most [`BACKLOG`] games wait for it; a
//! game that finds no room is audited when its audit is first asked for, as is one whose instance
//! stopped first.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::mpsc;

use tokio::sync::Semaphore;

/// Games whose audit may wait for the auditor at once: each holds its log in memory.
pub const BACKLOG: usize = 64;

type Job = Box<dyn FnOnce() + Send>;

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
                for job in queue {
                    // A job that panics (a bug, or a runtime shut down under it) is the only one
                    // lost: its game is audited when first asked for.
                    let _ = std::panic::catch_unwind(AssertUnwindSafe(job));
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

    /// Runs `job` on the auditor's thread, after the jobs before it; false (and `job` dropped)
    /// when [`BACKLOG`] jobs wait already, or the thread is gone.
    pub fn submit(&self, job: impl FnOnce() + Send + 'static) -> bool {
        let Ok(place) = Arc::clone(&self.room).try_acquire_owned() else {
            return false;
        };
        let job = Box::new(move || {
            job();
            drop(place);
        });
        self.jobs.send(job).is_ok()
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

    #[test]
    fn jobs_run_in_order_on_one_thread_and_the_backlog_is_bounded() {
        let auditor = Auditor::start();
        let (done, finished) = mpsc::channel();
        let (go, gate) = mpsc::channel::<()>();
        let first_done = done.clone();
        // The first job holds the thread until told to go: the others wait in the backlog.
        assert!(auditor.submit(move || {
            gate.recv().expect("go");
            first_done
                .send((0, std::thread::current().id()))
                .expect("report");
        }));
        for n in 1..BACKLOG {
            let done = done.clone();
            assert!(auditor.submit(move || {
                done.send((n, std::thread::current().id())).expect("report");
            }));
        }
        assert!(!auditor.submit(|| {}), "a full backlog takes no more");
        go.send(()).expect("go");
        let ran: Vec<_> = (0..BACKLOG)
            .map(|_| finished.recv().expect("a job ran"))
            .collect();
        assert_eq!(
            ran.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
            (0..BACKLOG).collect::<Vec<_>>()
        );
        assert!(ran.iter().all(|(_, thread)| *thread == ran[0].1));
        assert_ne!(ran[0].1, std::thread::current().id());
        // Room again once they ran; a job that panics does not stop the thread.
        assert!(auditor.submit(|| panic!("a bug in one audit")));
        let done = done.clone();
        assert!(auditor.submit(move || {
            done.send((BACKLOG, std::thread::current().id()))
                .expect("report")
        }));
        assert_eq!(finished.recv().expect("ran after a panic").0, BACKLOG);
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
