//! Challenges (v1.2): the [`ChallengeStore`] trait and its data types. A challenge invites
//! accounts to a game; the store keeps it, its invitees' answers, and writes the game its last
//! acceptance creates in the same transaction as that answer. It decides nothing (the service
//! does): a write names the version of the challenge it decided on, and fails with `Conflict` if
//! another write moved it since.

use async_trait::async_trait;
use uuid::Uuid;

use super::accounts::NewAccountEvent;
use super::{GameUpdate, NewEvent, NewGame, StoreError};
use crate::engine::{Rules, Timestamp};

/// A game created full by a challenge: its row, its first entries (creation, every seat, the
/// deal and the bots' reveals), and the row after them with its seats and their accounts' rows.
#[derive(Debug, Clone)]
pub struct SeatedGame {
    pub game: NewGame,
    pub events: Vec<NewEvent>,
    pub update: GameUpdate,
}

/// A challenge as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct ChallengeRecord {
    pub id: Uuid,
    pub author: String,
    /// The challenged accounts in the order of their seats, each with its answer (`accepted`,
    /// `declined`) or `None`.
    pub invitees: Vec<(String, Option<String>)>,
    pub holes: i32,
    pub rules: Rules,
    pub rated: bool,
    /// The built-in bots seated after the accounts.
    pub bots: Vec<String>,
    /// `open`, `accepted`, `declined`, `cancelled` or `expired`.
    pub status: String,
    /// Moved by every write.
    pub version: i32,
    pub game_id: Option<Uuid>,
    /// In the store's fixed RFC 3339 form.
    pub created_at: String,
    pub expires_at: String,
}

/// An answer to write, decided on the challenge at `expected_version`.
#[derive(Debug, Clone)]
pub struct ChallengeAnswer {
    pub id: Uuid,
    pub expected_version: i32,
    /// The invitee's place in the challenge's list.
    pub position: i32,
    /// `accepted` or `declined`.
    pub answer: &'static str,
    /// The challenge's status after it.
    pub status: &'static str,
    /// The game this answer creates (the last acceptance's).
    pub game: Option<SeatedGame>,
}

/// The open challenges one author may hold: in all, and to any one account.
#[derive(Debug, Clone, Copy)]
pub struct ChallengeCaps {
    pub open: i64,
    pub open_to_one: i64,
}

/// Challenges, in the same database as the games and accounts.
#[async_trait]
pub trait ChallengeStore: Send + Sync {
    /// Stores `challenge` (created `open`, or `accepted` with `game` when no one is left to
    /// ask), with the account events it gives, and `game` if given, in one transaction; answers
    /// false, storing nothing, when its author would hold more open challenges than `caps`
    /// allows (counted under a lock on the author, so concurrent creations cannot pass it).
    async fn create_challenge(
        &self,
        challenge: ChallengeRecord,
        notices: Vec<NewAccountEvent>,
        game: Option<SeatedGame>,
        caps: ChallengeCaps,
    ) -> Result<bool, StoreError>;

    /// The challenge `id`, if any.
    async fn load_challenge(&self, id: Uuid) -> Result<Option<ChallengeRecord>, StoreError>;

    /// Writes `answer`, the game it creates and the account events it gives, in one transaction,
    /// if the challenge is still open at its expected version (else `Conflict`, nothing
    /// written).
    async fn answer_challenge(
        &self,
        answer: ChallengeAnswer,
        notices: Vec<NewAccountEvent>,
    ) -> Result<(), StoreError>;

    /// Closes the open challenge `id` at `expected_version` with `status` (`cancelled`,
    /// `expired`); `Conflict` if it moved since.
    async fn close_challenge(
        &self,
        id: Uuid,
        expected_version: i32,
        status: &'static str,
    ) -> Result<(), StoreError>;

    /// The open challenges `account` sent or received, newest first, up to `limit`.
    async fn open_challenges(
        &self,
        account: &str,
        limit: i64,
    ) -> Result<Vec<ChallengeRecord>, StoreError>;

    /// Marks expired up to `limit` open challenges whose expiry is at or before `now`; answers
    /// how many.
    async fn expire_challenges(&self, now: Timestamp, limit: i64) -> Result<u64, StoreError>;
}
