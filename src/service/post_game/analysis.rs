//! The analysis of a game as `GET /v1/games/{id}/analysis` answers it: the stored analysis of a
//! finished game, or word that it is being computed by the analysis job
//! (`crate::jobs::analyses`), which this wakes.

use uuid::Uuid;

use crate::engine::Status;
use crate::service::{PostGame, ServiceError};

/// What a request for an analysis gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnalysisReply {
    /// The analysis, as stored (its JSON).
    Done(String),
    /// Queued or being computed.
    Pending,
}

impl PostGame {
    /// The analysis of finished game `id`. A token, if given, must be one of this game's. Fails
    /// with [`ServiceError::NotAnalysable`] before the game is finished, and with
    /// [`ServiceError::AnalysisDisabled`] when none is stored and this instance computes none.
    pub async fn analysis(
        &self,
        id: Uuid,
        token: Option<&str>,
    ) -> Result<AnalysisReply, ServiceError> {
        let (_, state) = self.games.load_readable(id, token).await?;
        if state.status != Status::Finished {
            return Err(ServiceError::NotAnalysable);
        }
        if let Some(stored) = self.games.store().load_analysis(id).await? {
            return Ok(AnalysisReply::Done(stored));
        }
        if !self.analyses {
            return Err(ServiceError::AnalysisDisabled);
        }
        self.ends.analysis_asked(id);
        Ok(AnalysisReply::Pending)
    }
}
