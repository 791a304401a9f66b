//! Ratings (v1.2): the [`RatingStore`] trait and its data types: the rated games whose end is
//! still to apply, each account's rating history, and the leaderboard.
//!
//! A finished rated game whose ratings are not applied yet is the durable record of an update to
//! make: the append that ends the game changes nothing else, and any instance applies it later
//! (at once, or after a crash, by the sweeper), each game exactly once, in the order the games
//! ended ([`RatingStore::apply_due_rating`]).

use async_trait::async_trait;
use uuid::Uuid;

use super::StoreError;
use crate::ratings::Rating;

/// The account a built-in bot plays as in rated games: `bot-greedy` for the greedy bot.
pub fn bot_account(bot: &str) -> String {
    format!("bot-{bot}")
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
    /// Applies the end of the rated game that ended first among those not applied yet, in one
    /// transaction: its seats' accounts' ratings (a built-in bot's seat as the bot's account,
    /// once per game however many seats it holds), their history, and the game marked applied.
    /// Updates are serialized across instances (an advisory lock on PostgreSQL, the write lock
    /// on SQLite), so none is lost and a game is never applied twice. Answers the game's id, or
    /// `None` when no game is due.
    async fn apply_due_rating(&self) -> Result<Option<Uuid>, StoreError>;

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
    /// under the same lock as [`RatingStore::apply_due_rating`]; answers whether it exists.
    async fn set_rating(&self, account: &str, rating: Rating) -> Result<bool, StoreError>;
}
