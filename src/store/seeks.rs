//! Seeks (v1.2): the [`SeekStore`] trait and its data types. A seek asks for a game of one
//! shape (its pool); the store keeps it and, under a lock on its pool, hands the pool's waiting
//! seeks to a [`Matcher`] and writes what it decides (the game, every matched seek) in the
//! transaction that places the new seek. It decides nothing itself.

use async_trait::async_trait;
use uuid::Uuid;

use super::StoreError;
use super::challenges::SeatedGame;
use crate::engine::{Rules, Timestamp};

/// A seek as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct SeekRecord {
    pub id: Uuid,
    pub account: String,
    /// The name seated, as it was when the seek was placed.
    pub display_name: String,
    /// The account's rating value when the seek was placed: what others' ranges are held to.
    pub rating: f64,
    pub seats: i32,
    pub holes: i32,
    pub rules: Rules,
    pub rated: bool,
    /// Seats, holes, rules and rated in one text: seeks match only within their pool.
    pub pool: String,
    /// The opponents' ratings it accepts, if it limits them.
    pub range: Option<(f64, f64)>,
    pub bots_after_s: Option<i32>,
    /// `waiting`, `matched`, `cancelled` or `expired`.
    pub status: String,
    pub game_id: Option<Uuid>,
    pub seat: Option<i32>,
    /// In the store's fixed RFC 3339 form.
    pub created_at: String,
    pub expires_at: String,
    /// When the free seats go to bots, if ever.
    pub bots_at: Option<String>,
}

/// A game a matcher decided on: the seeks it seats (each with its seat) and the game created
/// with every seat taken, whose account events include each seek's `seek_matched`.
#[derive(Debug, Clone)]
pub struct SeekMatch {
    pub seats: Vec<(Uuid, i32)>,
    pub game: SeatedGame,
}

/// Decides, from a new seek and its pool's waiting seeks (oldest first, none expired), the game
/// that matches it, if any.
pub type Matcher<'a> =
    dyn Fn(&SeekRecord, &[SeekRecord]) -> Result<Option<SeekMatch>, StoreError> + Send + Sync + 'a;

/// Seeks, in the same database as the games and accounts.
#[async_trait]
pub trait SeekStore: Send + Sync {
    /// Places `seek`, in one transaction under the lock of its pool: marks expired the
    /// account's waiting seeks past their expiry, reads the pool's waiting seeks unexpired at
    /// `seek.created_at` (oldest first, at most `candidates`), and writes what `matcher` decides:
    /// the game with every seek it seats matched (`Conflict` if one was no longer waiting), or
    /// else `seek` waiting (`Conflict` if the account already waits in another). Returns the
    /// seek as stored.
    async fn place_seek(
        &self,
        seek: SeekRecord,
        candidates: i64,
        matcher: &Matcher<'_>,
    ) -> Result<SeekRecord, StoreError>;

    /// The seek `id`, if any.
    async fn load_seek(&self, id: Uuid) -> Result<Option<SeekRecord>, StoreError>;

    /// The seek the account waits in, if any.
    async fn waiting_seek(&self, account: &str) -> Result<Option<SeekRecord>, StoreError>;

    /// Closes the waiting seek `id` as `status` (`cancelled`, `expired`); `Conflict` if it no
    /// longer waits.
    async fn close_seek(&self, id: Uuid, status: &'static str) -> Result<(), StoreError>;

    /// Up to `limit` waiting seeks whose wait for bots ended at or before `now`, unexpired.
    async fn seeks_due_for_bots(
        &self,
        now: Timestamp,
        limit: i64,
    ) -> Result<Vec<SeekRecord>, StoreError>;

    /// Matches the waiting seek `id` alone into `game` at `seat`, under the lock of its pool;
    /// `Conflict` (nothing written) if it no longer waits.
    async fn fill_seek(
        &self,
        seek: &SeekRecord,
        seat: i32,
        game: SeatedGame,
    ) -> Result<(), StoreError>;

    /// Marks expired up to `limit` waiting seeks whose expiry is at or before `now`; answers
    /// how many.
    async fn expire_seeks(&self, now: Timestamp, limit: i64) -> Result<u64, StoreError>;
}
