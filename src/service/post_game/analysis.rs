//! The analysis of a game as `GET /v1/games/{id}/analysis` answers it: the stored analysis of a
//! finished game, or word that it is being computed by the analysis threads
//! ([`super::analysis_worker`]), which this queues.

use uuid::Uuid;

use crate::engine::Status;
use crate::service::{GameService, ServiceError};

/// What a request for an analysis gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnalysisReply {
    /// The analysis, as stored (its JSON).
    Done(String),
    /// Queued or being computed.
    Pending,
}

impl GameService {
    /// The analysis of finished game `id`. A token, if given, must be one of this game's. Fails
    /// with [`ServiceError::NotAnalysable`] before the game is finished, and with
    /// [`ServiceError::AnalysisDisabled`] when none is stored and this instance computes none.
    pub async fn analysis(
        &self,
        id: Uuid,
        token: Option<&str>,
    ) -> Result<AnalysisReply, ServiceError> {
        let (record, state) = self.load(id).await?;
        self.credential(&record, token).await?;
        if state.status != Status::Finished {
            return Err(ServiceError::NotAnalysable);
        }
        if let Some(stored) = self.store.load_analysis(id).await? {
            return Ok(AnalysisReply::Done(stored));
        }
        if self.analyses.disabled() {
            return Err(ServiceError::AnalysisDisabled);
        }
        self.analyses.queue(id);
        Ok(AnalysisReply::Pending)
    }
}
