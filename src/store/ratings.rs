//! Ratings (v1.2): the [`RatingStore`] trait and its data types: the rated games whose end is
//! still to apply, each account's rating history, and the leaderboard.
//!
//! A finished rated game whose ratings are not applied yet is the durable record of an update to
//! make: the append that ends the game changes nothing else, and the ratings job of any instance
//! applies it later, each game exactly once, in the order the games ended. The job reads the
//! first due game and its accounts' ratings, computes the update (`crate::ratings`), and hands it
//! to [`RatingStore::apply_ratings`], which stores it only if nothing it was computed from has
//! moved since; otherwise the job reads again.

use async_trait::async_trait;
use uuid::Uuid;

use super::StoreError;
use super::accounts::NewAccountEvent;
use crate::engine::State;
use crate::ratings::Rating;

/// The finished rated game whose end is the first still to apply.
#[derive(Debug, Clone)]
pub struct DueRating {
    pub game_id: Uuid,
    /// The game as it ended.
    pub state: State,
    /// The time of its last entry, in the store's fixed RFC 3339 form.
    pub at: String,
}

/// One account's rating before and after a rated game.
#[derive(Debug, Clone, PartialEq)]
pub struct AccountRating {
    pub account: String,
    pub before: Rating,
    pub after: Rating,
}

/// The end of a rated game as the ratings job decided it: each of its accounts once, and the
/// events that tell them.
#[derive(Debug, Clone, PartialEq)]
pub struct RatedGame {
    pub game_id: Uuid,
    /// When the game ended ([`DueRating::at`]).
    pub at: String,
    pub accounts: Vec<AccountRating>,
    /// Stored with the update, as events of the game.
    pub events: Vec<NewAccountEvent>,
}

/// One update of an account's rating: by which game, when it ended, and the rating on both
/// sides of it.
#[derive(Debug, Clone, PartialEq)]
pub struct RatingChange {
    pub game_id: Uuid,
    /// The time of the game's last entry, in the store's fixed RFC 3339 form.
    pub at: String,
    pub before: Rating,
    pub after: Rating,
}

/// An established rating on the leaderboard.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    pub username: String,
    pub display_name: String,
    pub rating: Rating,
}

/// Where the next page of the leaderboard starts: after this rating value and username.
#[derive(Debug, Clone, PartialEq)]
pub struct LeaderboardCursor {
    pub value: f64,
    pub username: String,
}

/// Ratings, in the same database as the games and accounts.
#[async_trait]
pub trait RatingStore: Send + Sync {
    /// The rated game that ended first among those whose end is not applied yet, if any.
    async fn first_due_rating(&self) -> Result<Option<DueRating>, StoreError>;

    /// The ratings of `accounts`, in their order (a new account's for a name with no account).
    async fn ratings_of(&self, accounts: &[String]) -> Result<Vec<Rating>, StoreError>;

    /// Stores `rated` in one transaction: each account's rating and history, its events, and the
    /// game marked applied; `Conflict` (nothing stored) unless the game is still the first due and every
    /// account's rating is still its `before`. Updates are serialized across instances (an
    /// advisory lock on PostgreSQL, the write lock on SQLite), so none is lost and a game is
    /// never applied twice. An account that does not exist is not stored.
    async fn apply_ratings(&self, rated: &RatedGame) -> Result<(), StoreError>;

    /// The last `limit` updates of `account`'s rating, oldest first.
    async fn rating_history(
        &self,
        account: &str,
        limit: i64,
    ) -> Result<Vec<RatingChange>, StoreError>;

    /// Up to `limit` established (not provisional) ratings, best first (equal values by
    /// username), after `cursor` if given.
    async fn leaderboard(
        &self,
        cursor: Option<LeaderboardCursor>,
        limit: i64,
    ) -> Result<Vec<Ranked>, StoreError>;

    /// Sets `account`'s rating value, deviation and whether it is provisional (its count of
    /// rated games stays), as `golf-server simulate --seed-ratings` does for the built-in bots,
    /// under the same lock as [`RatingStore::apply_ratings`]; answers whether it exists.
    async fn set_rating(&self, account: &str, rating: Rating) -> Result<bool, StoreError>;
}
