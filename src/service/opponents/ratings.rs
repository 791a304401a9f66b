//! Ratings as the API reads them (an account's history, the leaderboard), and the application of
//! rated games' ends, which the ratings job runs (woken by the write that ends one, and on a
//! timer for those a crash or a failure left behind), never the request that ends the game.

use std::sync::Arc;

use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::ratings::{self, Rating, SeatResult};
use crate::service::accounts::Username;
use crate::service::accounts::events::AccountEvent;
use crate::service::paging::{check_limit, cursor, cursor_fields, malformed_cursor};
use crate::service::{Clock, ServiceError, retry};
use crate::store::{AccountRating, EventStore, LeaderboardCursor, Ranked, RatedGame, RatingChange};

/// The ratings as the API reads them, and the application of rated games' ends.
#[derive(Clone)]
pub struct Ratings {
    store: Arc<dyn EventStore>,
    clock: Clock,
}

impl Ratings {
    /// The ratings of `store`, whose changes are told at `clock`'s time.
    pub fn new(store: Arc<dyn EventStore>, clock: Clock) -> Self {
        Ratings { store, clock }
    }
}

/// Rated games' ends one call of [`Ratings::apply_due_ratings`] applies at most: the next
/// pass takes the rest.
const APPLY_BATCH: u64 = 100;

/// One update of an account's rating.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RatingUpdate {
    /// The rated game whose end made it.
    pub game_id: Uuid,
    /// When the game ended (its last entry).
    pub at: String,
    pub before: Rating,
    pub after: Rating,
}

/// `GET /v1/accounts/{username}/ratings`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RatingHistory {
    /// The account's last rating updates, oldest first.
    pub history: Vec<RatingUpdate>,
}

/// One place of the leaderboard.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LeaderboardEntry {
    /// 1 for the best established rating.
    pub rank: i64,
    pub username: String,
    pub display_name: String,
    pub rating: Rating,
}

/// `GET /v1/leaderboard`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Leaderboard {
    /// Established ratings, best first (equal values by username); provisional ones left out.
    pub accounts: Vec<LeaderboardEntry>,
    /// Pass as `cursor` for the next page; null at the end.
    pub next_cursor: Option<String>,
}

impl Ratings {
    /// Applies the ends of the rated games due, oldest first, up to [`APPLY_BATCH`]; answers
    /// how many. Another instance may be applying the same ones: each is applied once, the
    /// other instance's store refusing what was computed from ratings that have moved.
    pub async fn apply_due_ratings(&self) -> Result<u64, ServiceError> {
        let mut applied = 0;
        while applied < APPLY_BATCH && retry::on_conflict(|| self.apply_first_due()).await? {
            applied += 1;
        }
        Ok(applied)
    }

    /// Computes and stores the end of the rated game due first; answers whether there was one.
    /// A game that rates nobody ([`ratings::rated_seats`]) is marked applied and changes nothing.
    async fn apply_first_due(&self) -> Result<bool, ServiceError> {
        let store = self.store.ratings();
        let Some(due) = store.first_due_rating().await? else {
            return Ok(false);
        };
        let seats = ratings::rated_seats(&due.state).unwrap_or_default();
        let names: Vec<String> = seats.iter().map(|seat| seat.account.clone()).collect();
        let before = store.ratings_of(&names).await?;
        let results: Vec<SeatResult> = before
            .iter()
            .zip(&seats)
            .map(|(before, seat)| SeatResult {
                before: *before,
                total: seat.total,
                forfeit: seat.forfeit,
            })
            .collect();
        let after = ratings::rate(&results);
        // The bots' ratings are anchors: they rate their opponents and stay as they are.
        let accounts: Vec<AccountRating> = seats
            .iter()
            .zip(before)
            .zip(after)
            .filter(|((seat, _), _)| !seat.is_bot())
            .map(|((seat, before), after)| AccountRating {
                account: seat.account.clone(),
                before,
                after,
            })
            .collect();
        let at = self.clock.now();
        let events = accounts
            .iter()
            .map(|rated| {
                let changed = AccountEvent::RatingChanged {
                    before: rated.before,
                    after: rated.after,
                };
                changed.for_account(&rated.account, at)
            })
            .collect();
        let rated = RatedGame {
            game_id: due.game_id,
            at: due.at,
            accounts,
            events,
        };
        store.apply_ratings(&rated).await?;
        Ok(true)
    }

    /// The last `limit` (1 to 1000, default 100) rating updates of `username`, oldest first.
    pub async fn rating_history(
        &self,
        username: &str,
        limit: Option<i64>,
    ) -> Result<RatingHistory, ServiceError> {
        let limit = check_limit(limit, 100, 1000)?;
        let username = Username::lookup(username);
        let accounts = self.store.accounts();
        if accounts.account_by_name(username.as_str()).await?.is_none() {
            return Err(ServiceError::NotFound(
                "There is no account with this username.",
            ));
        }
        let changes = self
            .store
            .ratings()
            .rating_history(username.as_str(), limit)
            .await?;
        let history = changes
            .into_iter()
            .map(|change: RatingChange| RatingUpdate {
                game_id: change.game_id,
                at: change.at,
                before: change.before,
                after: change.after,
            })
            .collect();
        Ok(RatingHistory { history })
    }

    /// A page of the leaderboard: `limit` (1 to 100, default 50) places after `cursor`.
    pub async fn leaderboard(
        &self,
        limit: Option<i64>,
        cursor: Option<&str>,
    ) -> Result<Leaderboard, ServiceError> {
        let limit = check_limit(limit, 50, 100)?;
        let (rank_before, after) = match cursor {
            Some(text) => {
                let (rank, cursor) = decode_cursor(text)?;
                (rank, Some(cursor))
            }
            None => (0, None),
        };
        let page = self.store.ratings().leaderboard(after, limit).await?;
        let full = page.len() as i64 == limit;
        let accounts: Vec<LeaderboardEntry> = page
            .into_iter()
            .zip(rank_before + 1..)
            .map(|(ranked, rank): (Ranked, i64)| LeaderboardEntry {
                rank,
                username: ranked.username,
                display_name: ranked.display_name,
                rating: ranked.rating,
            })
            .collect();
        let next_cursor = accounts.last().filter(|_| full).map(encode_cursor);
        Ok(Leaderboard {
            accounts,
            next_cursor,
        })
    }
}

/// The cursor of the page after `last`: its rank, rating value and username.
fn encode_cursor(last: &LeaderboardEntry) -> String {
    let (rank, value) = (last.rank.to_string(), last.rating.value.to_string());
    cursor(&[&rank, &value, &last.username])
}

/// The rank and place after which a cursor this server gave starts; any other text is
/// `malformed_request`.
fn decode_cursor(text: &str) -> Result<(i64, LeaderboardCursor), ServiceError> {
    let [rank, value, username] = cursor_fields(text)?;
    let rank: i64 = rank.parse().map_err(|_| malformed_cursor())?;
    let value: f64 = value.parse().map_err(|_| malformed_cursor())?;
    if rank < 1 || !value.is_finite() || username.is_empty() {
        return Err(malformed_cursor());
    }
    Ok((rank, LeaderboardCursor { value, username }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_comes_back_as_it_was_given() {
        let last = LeaderboardEntry {
            rank: 50,
            username: "ada".to_owned(),
            display_name: "Ada".to_owned(),
            rating: Rating::new(1_623.123_456_789_012_3, 150.0, 9),
        };
        let (rank, cursor) = decode_cursor(&encode_cursor(&last)).unwrap();
        assert_eq!(rank, 50);
        assert_eq!(cursor.value.to_bits(), last.rating.value.to_bits());
        assert_eq!(cursor.username, "ada");
        for bad in ["", "zz", &hex::encode("0|1|a"), &hex::encode("1|inf|a")] {
            assert!(decode_cursor(bad).is_err(), "{bad}");
        }
    }
}
