//! The audit of a game as `GET /v1/games/{id}/audit` shows it: the commitment and head of its
//! log while it runs, then the result of the full check of its log, computed once and stored.

use serde::Serialize;
use uuid::Uuid;

use crate::audit::{self, AuditReport};
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
    /// the same log always gives the same result). Someone asked for it: the replay runs on a
    /// blocking thread at once, at the workers' priority.
    async fn check_and_record(&self, record: &GameRecord) -> Result<AuditResult, ServiceError> {
        let entries = store::load_log(self.store.as_ref(), record.id, record.version).await?;
        let report = tokio::task::spawn_blocking(move || audit::audit(&entries))
            .await
            .map_err(|_| {
                ServiceError::Internal("the audit of a log did not complete".to_owned())
            })?;
        self.record(record.id, &report).await
    }

    /// Stores what the check of a finished game found; a log that fails is logged.
    async fn record(&self, id: Uuid, report: &AuditReport) -> Result<AuditResult, ServiceError> {
        let result = AuditResult {
            verified: report.verified,
            first_bad_seq: report.first_bad_seq,
        };
        if !result.verified {
            // Seq and check names only: a finding's message may quote the log.
            let checks: Vec<_> = report.findings.iter().map(|f| (f.seq, f.check)).collect();
            tracing::error!(game_id = %id, ?checks, "a finished game's log fails its audit");
        }
        self.store.record_audit(id, result).await?;
        Ok(result)
    }

    /// Audits a game that a write just finished, so that its audit is ready when asked for: after
    /// the write is answered, its replay on the [`Auditor`](super::auditor::Auditor)'s
    /// low-priority thread. A failure, or a full backlog, is only logged: the write stands, and
    /// the audit is computed when first asked for (as it is if this instance stops first).
    pub(super) fn audit_finished_game(&self, id: Uuid) {
        let Some(place) = self.auditor.admit() else {
            tracing::debug!(game_id = %id, "the auditor's backlog is full: audited when asked for");
            return;
        };
        let service = self.clone();
        tokio::spawn(async move {
            let checked = service.audit_in_background(id).await;
            drop(place);
            if let Err(error) = checked {
                tracing::warn!(game_id = %id, %error, "the audit of a finished game is left for later");
            }
        });
    }

    async fn audit_in_background(&self, id: Uuid) -> Result<(), ServiceError> {
        let Some(record) = self.store.load_game(id).await? else {
            return Ok(());
        };
        let entries = store::load_log(self.store.as_ref(), id, record.version).await?;
        let report = self
            .auditor
            .replay(entries)
            .await
            .ok_or_else(|| ServiceError::Internal("the auditor's thread is gone".to_owned()))?;
        self.record(id, &report).await.map(drop)
    }
}
