//! A finished game's audit ([`audit`]) and analysis ([`analysis`]) as the API answers them, and
//! what the use cases tell the jobs that compute them and apply rated games' ends
//! ([`GameEnds`]).
//!
//! The database is the queue of that work: a finished game with no stored audit or analysis, a
//! rated game whose end is not applied, is found by the job's next pass whether or not a wake-up
//! reached it (a full queue, a crash, another instance's write). A wake-up only makes the pass
//! come sooner.

pub mod analysis;
pub mod audit;

use std::sync::{Arc, Mutex};

use tokio::sync::{Notify, mpsc, oneshot};
use uuid::Uuid;

use crate::service::{Games, ServiceError};
use crate::store::AuditResult;

pub use audit::Audit;

/// Audits asked for that may wait for the audit job at once; more wait for room.
pub const ASKED_AUDITS: usize = 256;

/// An audit asked for: the game, and where its stored result goes (`None` if the game is not
/// finished).
pub type AskedAudit = (
    Uuid,
    oneshot::Sender<Result<Option<AuditResult>, ServiceError>>,
);

/// The wake-ups of the post-game jobs, and the audits asked for by requests.
pub struct GameEnds {
    /// A game finished: its audit is due.
    pub audits: Arc<Notify>,
    /// A game finished, or its analysis was asked for.
    pub analyses: Arc<Notify>,
    /// A rated game finished: its end is to be applied.
    pub ratings: Arc<Notify>,
    asked: mpsc::Sender<AskedAudit>,
    /// Taken by the audit job when it starts.
    inbox: Mutex<Option<mpsc::Receiver<AskedAudit>>>,
    /// The games whose analysis a client asked for, which the analyses job queues first.
    asked_analyses: Mutex<Vec<Uuid>>,
}

/// Analyses asked for that wait to be queued at most; past them, the backlog's order serves.
pub const ASKED_ANALYSES: usize = 256;

impl Default for GameEnds {
    fn default() -> Self {
        let (asked, inbox) = mpsc::channel(ASKED_AUDITS);
        GameEnds {
            audits: Arc::default(),
            analyses: Arc::default(),
            ratings: Arc::default(),
            asked,
            inbox: Mutex::new(Some(inbox)),
            asked_analyses: Mutex::default(),
        }
    }
}

impl GameEnds {
    /// A game finished (`rated`: its end moves ratings): wakes the jobs it concerns.
    pub fn finished(&self, rated: bool) {
        self.audits.notify_one();
        self.analyses.notify_one();
        if rated {
            self.ratings.notify_one();
        }
    }

    /// The audits asked for, for the one job that answers them (`None` once taken).
    pub fn take_asked_audits(&self) -> Option<mpsc::Receiver<AskedAudit>> {
        lock(&self.inbox).take()
    }

    /// A client asked for the analysis of game `id`: the analyses job queues it first.
    pub fn analysis_asked(&self, id: Uuid) {
        let mut asked = lock(&self.asked_analyses);
        if asked.len() < ASKED_ANALYSES && !asked.contains(&id) {
            asked.push(id);
        }
        drop(asked);
        self.analyses.notify_one();
    }

    /// The games whose analysis was asked for since the last call, oldest ask first.
    pub fn take_asked_analyses(&self) -> Vec<Uuid> {
        std::mem::take(&mut *lock(&self.asked_analyses))
    }

    /// The audit of game `id`, computed now by the audit job unless it is stored; `None` while
    /// the game is not finished.
    async fn audit_now(&self, id: Uuid) -> Result<Option<AuditResult>, ServiceError> {
        let gone = || ServiceError::Internal("the audit job is gone".to_owned());
        if lock(&self.inbox).is_some() {
            return Err(ServiceError::Internal(
                "no audit job runs on this instance".to_owned(),
            ));
        }
        let (reply, answer) = oneshot::channel();
        self.asked.send((id, reply)).await.map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }
}

/// A poisoned lock only means a holder panicked between two plain updates: keep going.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The post-game reads of the API.
#[derive(Clone)]
pub struct PostGame {
    games: Games,
    ends: Arc<GameEnds>,
    /// Whether this instance computes analyses.
    analyses: bool,
}

impl PostGame {
    /// The audits and analyses of `games`, computed by the jobs `ends` wakes.
    pub fn new(games: Games, ends: Arc<GameEnds>, analyses: bool) -> Self {
        PostGame {
            games,
            ends,
            analyses,
        }
    }
}
