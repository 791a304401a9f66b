//! The audit of a game as `GET /v1/games/{id}/audit` shows it: the commitment and head of its
//! log while it runs, then the result of the full check of its log, computed once and stored.

use serde::Serialize;
use uuid::Uuid;

use crate::audit;
use crate::engine::Status;
use crate::service::credentials::authenticate;
use crate::service::{GameService, ServiceError};
use crate::store::{self, AuditResult, GameRecord};

/// Where a game's log stands, and once it is finished, whether it checks out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[schema(example = json!({
    "commitment": "0fe46f658689941b44d90eabbbc77e65e38caab236752854474a173225e7c07f",
    "seed": "5b0d1c0e3f9e6a8a6f1d7c2b8e4a9f0c3d6b1a7e2c5f8d0b4a9e6c3f1d7b2a8e",
    "head_hash": "9c1d4f2e7b8a3c6d0e5f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f",
    "version": 254,
    "verified": true,
    "stacked": false,
    "first_bad_seq": null
}))]
pub struct Audit {
    /// SHA-256 of the server seed, published when the game was created (lowercase hex).
    pub commitment: String,
    /// The server seed (lowercase hex) once the game is finished; null before, since it decides
    /// every deal.
    pub seed: Option<String>,
    /// The hash of the last log entry (lowercase hex): the whole log up to `version` is bound to it.
    pub head_hash: String,
    /// The seq of the last log entry.
    pub version: i64,
    /// Null while the game runs; then whether its whole log passed every check (hash chain and
    /// salts, seed against commitment, every deal and reshuffle against the fair-shuffle protocol,
    /// every move re-decided by the rules, every score and the winners recomputed). Check it
    /// yourself with the export and `golf-server verify`.
    pub verified: Option<bool>,
    /// The game was created with explicit decks: its first deals were not shuffled from the seed.
    pub stacked: bool,
    /// Null, or the first log entry that fails the check.
    pub first_bad_seq: Option<i64>,
}

impl GameService {
    /// The audit of a game. A token, if given, must be one of this game's. The check of a
    /// finished game is read as stored; a game finished before audits were stored (or by an
    /// instance that stopped before storing it) is checked now, once.
    pub async fn audit(&self, id: Uuid, token: Option<&str>) -> Result<Audit, ServiceError> {
        let (record, state) = self.load(id).await?;
        authenticate(&record, token)?;
        let finished = state.status == Status::Finished;
        let result = match record.audit {
            _ if !finished => None,
            Some(stored) => Some(stored),
            None => Some(self.check_and_record(&record).await?),
        };
        Ok(Audit {
            commitment: record.commitment,
            seed: finished.then(|| hex::encode(record.server_seed)),
            head_hash: hex::encode(record.head_hash),
            version: record.version,
            verified: result.map(|result| result.verified),
            stacked: record.stacked,
            first_bad_seq: result.and_then(|result| result.first_bad_seq),
        })
    }

    /// Checks a finished game's whole log and stores the result (the first stored stands, and
    /// the same log always gives the same result).
    async fn check_and_record(&self, record: &GameRecord) -> Result<AuditResult, ServiceError> {
        let entries = store::load_log(self.store.as_ref(), record.id, record.version).await?;
        // A replay of the whole game: on a thread of its own, so that the requests this
        // instance's worker serves meanwhile do not wait for it.
        let report = tokio::task::spawn_blocking(move || audit::audit(&entries))
            .await
            .map_err(|_| {
                ServiceError::Internal("the audit of a log did not complete".to_owned())
            })?;
        let result = AuditResult {
            verified: report.verified,
            first_bad_seq: report.first_bad_seq,
        };
        if !result.verified {
            // Seq and check names only: a finding's message may quote the log.
            let checks: Vec<_> = report.findings.iter().map(|f| (f.seq, f.check)).collect();
            tracing::error!(game_id = %record.id, ?checks, "a finished game's log fails its audit");
        }
        self.store.record_audit(record.id, result).await?;
        Ok(result)
    }

    /// Audits a game that a write just finished, so that its audit is ready when asked for. It
    /// runs after the write is answered: the last move of a game waits for its commit only, not
    /// for a read and replay of the whole log. A failure is only logged: the write stands, and
    /// the audit is computed when first asked for (as it is if this instance stops first).
    pub(super) fn audit_finished_game(&self, id: Uuid) {
        let service = self.clone();
        tokio::spawn(async move {
            let checked = match service.store.load_game(id).await {
                Ok(Some(record)) => service.check_and_record(&record).await.map(drop),
                Ok(None) => Ok(()),
                Err(error) => Err(error.into()),
            };
            if let Err(error) = checked {
                tracing::warn!(game_id = %id, %error, "the audit of a finished game is left for later");
            }
        });
    }
}
