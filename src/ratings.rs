//! Ratings (v1.2): the skill of every account and built-in bot, updated by the end of each rated
//! game. Pure and deterministic, as the engine: the ratings job calls [`rated_seats`] and [`rate`]
//! on a finished rated game and hands the result to the store, and the tests call them to know
//! what to expect.
//!
//! The model is Weng-Lin's Bayesian approximation (the `skillratings` crate's
//! `weng_lin_multi_team`, each seat a team of one): it ranks any number of players in one game,
//! ties included, which a free-for-all of 2 to 4 seats needs, where Elo and Glicko-2 rate pairs
//! only. The API shows Weng-Lin's mean and uncertainty times [`SCALE`], so that a new account
//! reads 1500 (deviation 500), a scale players know from chess sites.

use serde::{Deserialize, Serialize};
use skillratings::MultiTeamOutcome;
use skillratings::weng_lin::{WengLinConfig, WengLinRating, weng_lin_multi_team};
use utoipa::ToSchema;

use crate::engine::State;

/// From Weng-Lin's units to the API's: its default mean 25 becomes 1500.
pub const SCALE: f64 = 60.0;

/// A new account's rating value.
pub const INITIAL_VALUE: f64 = 1500.0;

/// A new account's deviation.
pub const INITIAL_DEVIATION: f64 = 500.0;

/// A rating is provisional while its deviation is above this: about the first ten games of a
/// two-seat game, fewer with more seats (each game informs about more opponents).
pub const PROVISIONAL_ABOVE: f64 = 400.0;

/// A rating as the API shows it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(example = json!({"value": 1623.4, "deviation": 187.2, "games": 14, "provisional": false}))]
pub struct Rating {
    /// The estimated skill, 1500 for a new account.
    pub value: f64,
    /// How uncertain `value` is (one standard deviation), 500 for a new account.
    pub deviation: f64,
    /// Rated games applied so far.
    pub games: i32,
    /// Whether the deviation is still above 400: such ratings stay off the leaderboard.
    pub provisional: bool,
}

impl Rating {
    /// A rating of `value` and `deviation` after `games` rated games.
    pub fn new(value: f64, deviation: f64, games: i32) -> Rating {
        Rating {
            value,
            deviation,
            games,
            provisional: deviation > PROVISIONAL_ABOVE,
        }
    }

    /// A new account's rating.
    pub fn initial() -> Rating {
        Rating::new(INITIAL_VALUE, INITIAL_DEVIATION, 0)
    }

    fn weng_lin(self) -> WengLinRating {
        WengLinRating {
            rating: self.value / SCALE,
            uncertainty: self.deviation / SCALE,
        }
    }
}

/// One seat of a finished rated game: its player's rating before the game and its total (lower
/// is better, equal totals tie).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SeatResult {
    pub before: Rating,
    pub total: i32,
}

/// The ratings after a game, seat by seat, from the seats' ratings before it and their totals.
/// Each seat is a team of one, ranked by total (1 for the lowest; equal totals share a rank).
pub fn rate(seats: &[SeatResult]) -> Vec<Rating> {
    let teams: Vec<[WengLinRating; 1]> =
        seats.iter().map(|seat| [seat.before.weng_lin()]).collect();
    let ranked: Vec<(&[WengLinRating], MultiTeamOutcome)> = teams
        .iter()
        .zip(seats)
        .map(|(team, seat)| {
            (
                team.as_slice(),
                MultiTeamOutcome::new(rank(seats, seat.total)),
            )
        })
        .collect();
    let after = weng_lin_multi_team(&ranked, &WengLinConfig::new());
    after
        .iter()
        .zip(seats)
        .map(|(team, seat)| {
            let rated = team[0];
            Rating::new(
                rated.rating * SCALE,
                rated.uncertainty * SCALE,
                seat.before.games + 1,
            )
        })
        .collect()
}

/// How the usernames of the built-in bots' accounts start; no person's may.
pub const BOT_PREFIX: &str = "bot-";

/// The account a built-in bot plays as in rated games: `bot-greedy` for the greedy bot.
pub fn bot_account(bot: &str) -> String {
    format!("{BOT_PREFIX}{bot}")
}

/// The accounts of a finished game's seats (a bot's seat as the bot's account) and their totals;
/// a seat of no account (which a rated game never has) is named `""`, rated as a newcomer and
/// kept nowhere.
pub fn rated_seats(state: &State) -> Vec<(String, i32)> {
    state
        .players
        .iter()
        .map(|player| {
            let account = match (&player.account, player.bot) {
                (Some(account), _) => account.clone(),
                (None, Some(bot)) => bot_account(bot.name()),
                (None, None) => String::new(),
            };
            (account, player.total)
        })
        .collect()
}

/// The rank of a seat with `total` among `seats`: one more than the number of seats that did
/// strictly better.
fn rank(seats: &[SeatResult], total: i32) -> usize {
    1 + seats.iter().filter(|seat| seat.total < total).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seat(total: i32) -> SeatResult {
        SeatResult {
            before: Rating::initial(),
            total,
        }
    }

    #[test]
    fn the_lower_total_gains_and_the_higher_loses() {
        let after = rate(&[seat(30), seat(12)]);
        assert!(after[0].value < INITIAL_VALUE && after[1].value > INITIAL_VALUE);
        assert!((after[0].value - INITIAL_VALUE + after[1].value - INITIAL_VALUE).abs() < 1e-9);
        assert!(
            after
                .iter()
                .all(|r| r.deviation < INITIAL_DEVIATION && r.games == 1)
        );
    }

    #[test]
    fn equal_totals_between_equal_ratings_change_no_value() {
        let after = rate(&[seat(20), seat(20), seat(40)]);
        assert!((after[0].value - after[1].value).abs() < 1e-9);
        assert!(after[0].value > INITIAL_VALUE, "both beat the third seat");
        assert!(after[2].value < INITIAL_VALUE);
        let tied = rate(&[seat(7), seat(7)]);
        assert!(tied.iter().all(|r| (r.value - INITIAL_VALUE).abs() < 1e-9));
    }

    #[test]
    fn a_new_rating_is_provisional_until_its_deviation_drops() {
        assert!(Rating::initial().provisional);
        let mut rating = Rating::initial();
        let mut games = 0;
        while rating.provisional {
            let opponent = SeatResult {
                before: Rating::initial(),
                total: 20,
            };
            rating = rate(&[
                SeatResult {
                    before: rating,
                    total: 10,
                },
                opponent,
            ])[0];
            games += 1;
        }
        assert!(
            (5..=20).contains(&games),
            "{games} games to an established rating"
        );
    }
}
