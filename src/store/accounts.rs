//! Accounts (v1.2): the [`AccountStore`] trait and its data types. An account is a username, a
//! display name and the SHA-256 of its token; the store decides nothing about them (the rules of
//! usernames live in `service::accounts`).

use async_trait::async_trait;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::{CreateIdempotency, RawJson, StoreError};
use crate::engine::{Status, Timestamp};
use crate::ratings::Rating;

/// The key under which the wake-up hub ([`super::notify`]) knows the streams of `username`'s
/// events: a UUID derived from the name, which no game's (random) id meets.
pub fn wake_key(username: &str) -> Uuid {
    let digest = Sha256::digest(format!("golf-account-events:{username}"));
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    Uuid::from_bytes(bytes)
}

/// An account to create.
#[derive(Debug, Clone)]
pub struct NewAccount {
    /// Lowercase, checked by the service.
    pub username: String,
    pub display_name: String,
    pub token_hash: [u8; 32],
    pub created_at: Timestamp,
}

/// An account as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct AccountRecord {
    pub username: String,
    pub display_name: String,
    /// The hash of its current token.
    pub token_hash: [u8; 32],
    pub created_at: Timestamp,
    pub rating: Rating,
}

/// Where a game stands for an account bound to one of its seats, after an append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountGame {
    pub account: String,
    pub seat: i32,
    pub status: Status,
    /// The time of the game's last entry (read back only once the game has ended).
    pub updated_at: Timestamp,
    /// Whether the game ended with the seat among its winners.
    pub won: bool,
}

/// An account event to store with the append that causes it; the store numbers it.
#[derive(Debug, Clone, PartialEq)]
pub struct NewAccountEvent {
    pub account: String,
    /// `game_started`, `your_turn`, `game_ended`, `challenge_received` or `challenge_answered`.
    pub kind: &'static str,
    pub at: Timestamp,
    /// The event's fields besides `id`, `at`, `type` and `game_id`.
    pub data: serde_json::Value,
}

/// How long account events are kept.
pub const ACCOUNT_EVENTS_TTL: std::time::Duration =
    std::time::Duration::from_secs(30 * 24 * 60 * 60);

/// Where the next page of an account's games starts: after this game in (updated_at, game_id)
/// descending order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GamesCursor {
    /// In the store's fixed RFC 3339 form.
    pub updated_at: String,
    pub game_id: Uuid,
}

/// One game of an account's list: its row there, and the game's version and projection.
#[derive(Debug, Clone)]
pub struct ListedGame {
    pub game_id: Uuid,
    pub seat: i32,
    /// The time of its last entry, in the store's fixed RFC 3339 form.
    pub updated_at: String,
    pub version: i64,
    pub projection: RawJson,
}

/// A stored account event.
#[derive(Debug, Clone, PartialEq)]
pub struct AccountEventRecord {
    pub id: i64,
    pub at: String,
    pub kind: String,
    /// Null for an event of no game (a challenge's).
    pub game_id: Option<Uuid>,
    pub data: serde_json::Value,
}

/// The accounts table. Nothing is cached: every call reads or writes the database, so a rotated
/// token is refused at once by every instance.
#[async_trait]
pub trait AccountStore: Send + Sync {
    /// Inserts the account and, if given, the creation's idempotency record, in one transaction.
    ///
    /// Fails with `Conflict` if the username is taken or the key is recorded (and not expired).
    async fn create_account(
        &self,
        account: NewAccount,
        idem: Option<CreateIdempotency>,
    ) -> Result<(), StoreError>;

    /// The account whose token hashes to `token_hash`, if any.
    async fn account_by_token(
        &self,
        token_hash: &[u8; 32],
    ) -> Result<Option<AccountRecord>, StoreError>;

    /// The account named `username` (lowercase), if any.
    async fn account_by_name(&self, username: &str) -> Result<Option<AccountRecord>, StoreError>;

    /// Up to `limit` games of `account` (of `status` if given), by the time of their last entry,
    /// newest first, after `cursor` if given. Served by two indexes: the account's finished
    /// games in that order, and all of its unfinished ones, sorted by the store.
    async fn list_account_games(
        &self,
        account: &str,
        status: Option<Status>,
        cursor: Option<GamesCursor>,
        limit: i64,
    ) -> Result<Vec<ListedGame>, StoreError>;

    /// `(played, won)`: the finished games in which `account` held a seat, and those it won.
    async fn account_game_counts(&self, account: &str) -> Result<(i64, i64), StoreError>;

    /// Up to `limit` events of `account` with ids above `after`, in id order.
    async fn account_events(
        &self,
        account: &str,
        after: i64,
        limit: i64,
    ) -> Result<Vec<AccountEventRecord>, StoreError>;

    /// As [`AccountStore::account_events`], in the same statement as the check that
    /// `token_hash` is still the account's token: `None` once it is not (rotated, or the
    /// account gone), and then no event.
    async fn account_events_for_token(
        &self,
        account: &str,
        token_hash: &[u8; 32],
        after: i64,
        limit: i64,
    ) -> Result<Option<Vec<AccountEventRecord>>, StoreError>;

    /// Deletes account events older than [`ACCOUNT_EVENTS_TTL`], up to `limit`; returns how many
    /// (run by [`super::EventStore::purge_expired_idempotency`]).
    async fn purge_account_events(&self, limit: i64) -> Result<u64, StoreError>;

    /// Replaces the token hash of `username` with `new`, if it is still `old`: whether it did.
    /// Wakes the account's streams on every instance, which end once they see it.
    async fn rotate_account_token(
        &self,
        username: &str,
        old: &[u8; 32],
        new: &[u8; 32],
    ) -> Result<bool, StoreError>;
}
