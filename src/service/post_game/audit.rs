//! The audit of a game as `GET /v1/games/{id}/audit` shows it: the commitment and head of its
//! log while it runs, then the result of the full check of its log, computed once by the audit
//! job (`crate::jobs::audits`) and stored.

use serde::Serialize;
use uuid::Uuid;

use crate::engine::Status;
use crate::service::{PostGame, ServiceError};

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

impl PostGame {
    /// The audit of a game. A token, if given, must be one of this game's. The check of a
    /// finished game is read as stored; a game finished before audits were stored (or by an
    /// instance that stopped before storing it) is checked now, once, by the audit job.
    pub async fn audit(&self, id: Uuid, token: Option<&str>) -> Result<Audit, ServiceError> {
        let (record, state) = self.games.load_readable(id, token).await?;
        let finished = state.status == Status::Finished;
        let result = match record.audit {
            _ if !finished => None,
            Some(stored) => Some(stored),
            None => Some(self.ends.audit_now(id).await?.ok_or_else(|| {
                ServiceError::Internal("a finished game was audited as unfinished".to_owned())
            })?),
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
}
