//! The audits of finished games, run where no request waits: on a thread of its own at the
//! lowest CPU priority, with its own runtime, reading through the [`BackgroundStore`], so that
//! neither the reads of a whole log nor its replay (the costliest thing the server does) run on a
//! request worker or delay the moves beside them.
//!
//! The database is the queue: each pass audits the finished games with no stored audit, one at
//! a time, in id order, so that a game finished while the instance was down, or whose end
//! woke nobody, is audited all the same. A pass comes when a game ends here, every
//! [`CATCH_UP_EVERY`], and when a request asks for an audit not yet stored (it waits for the
//! answer; asked audits go before the catch-up). The first stored result stands, and the same
//! log always gives the same result, so instances auditing the same game at once agree.

use std::time::Duration;

use prometheus::IntCounter;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::audit;
use crate::engine::Status;
use crate::jobs::background::BackgroundStore;
use crate::service::post_game::AskedAudit;
use crate::service::{ServiceError, Services};
use crate::store::{self, AuditResult};

/// How long the audit job waits for a game's end before it looks for unaudited games anyway.
pub const CATCH_UP_EVERY: Duration = Duration::from_secs(60);

/// Unaudited games one pass reads at most: the next pass takes the rest.
const PASS_BATCH: i64 = 100;

/// Starts the audit thread of `services`, which stops at `stop`; `None` if the thread or its
/// runtime cannot be made (logged: an audit asked for here then fails, and the catch-up waits
/// for an instance that has one).
pub fn start(
    store: BackgroundStore,
    services: &Services,
    stop: CancellationToken,
) -> Option<std::thread::JoinHandle<()>> {
    let ends = std::sync::Arc::clone(&services.ends);
    let asked = ends.take_asked_audits()?;
    let replayed = services.games.metrics().audits_replayed.clone();
    let started = std::thread::Builder::new()
        .name("golf-auditor".to_owned())
        .spawn(move || {
            lower_priority();
            match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime.block_on(async {
                    let auditor = Auditor {
                        store,
                        replayed,
                        asked,
                    };
                    auditor.work(&ends.audits, stop).await
                }),
                Err(error) => tracing::warn!(%error, "the audit job has no runtime"),
            }
        });
    match started {
        Ok(thread) => Some(thread),
        Err(error) => {
            tracing::warn!(%error, "no audit thread: audits asked for here fail until a restart");
            None
        }
    }
}

/// The audit thread's work.
struct Auditor {
    store: BackgroundStore,
    replayed: IntCounter,
    asked: mpsc::Receiver<AskedAudit>,
}

impl Auditor {
    /// Catches up, then audits what is asked and what ends, until `stop`.
    async fn work(mut self, ended: &tokio::sync::Notify, stop: CancellationToken) {
        loop {
            if let Err(error) = self.catch_up(&stop).await {
                tracing::warn!(job = "audits", %error, "the audits' pass failed: tried again later");
            }
            tokio::select! {
                _ = stop.cancelled() => return,
                asked = self.asked.recv() => match asked {
                    Some(asked) => self.answer(asked).await,
                    None => return,
                },
                _ = ended.notified() => {}
                _ = tokio::time::sleep(CATCH_UP_EVERY) => {}
            }
        }
    }

    /// Audits the finished games that have none stored, answering the audits asked for between
    /// two games, until none is left or `stop`.
    async fn catch_up(&mut self, stop: &CancellationToken) -> Result<(), ServiceError> {
        loop {
            let found = self
                .store
                .run(|store| async move { store.unaudited_games(PASS_BATCH).await })
                .await?;
            let whole = found.len() as i64 == PASS_BATCH;
            let mut audited = 0;
            for id in found {
                while let Ok(asked) = self.asked.try_recv() {
                    self.answer(asked).await;
                }
                if stop.is_cancelled() {
                    return Ok(());
                }
                match audit_game(&self.store, id, &self.replayed).await {
                    Ok(_) => audited += 1,
                    Err(error) => {
                        tracing::warn!(game_id = %id, %error, "the audit of a finished game is left for later")
                    }
                }
            }
            // A batch that audited nothing would be read again as it is: the next pass retries.
            if !whole || audited == 0 {
                return Ok(());
            }
        }
    }

    /// Audits the game asked for and answers.
    async fn answer(&self, (id, reply): AskedAudit) {
        let audited = audit_game(&self.store, id, &self.replayed).await;
        // The asker may have gone: nobody to answer then.
        drop(reply.send(audited));
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
}
