//! Ratings (v1.2): the skill of every account, updated by the end of each rated game, against
//! the built-in bots' ratings as fixed anchors. Pure and deterministic, as the engine: the ratings
//! job calls [`rated_seats`] and [`rate`] on a finished rated game and hands the result to the
//! store, and the tests call them to know what to expect.
//!
//! Ratings move only through play (docs/API.md, "Rated games"): a seat the bot took after a leave
//! or a timeout ranks last whatever the bot scored, a game rates only between two accounts or
//! more or one account and one bot seat, several seats of one bot strategy are one opponent, and
//! no game moves a bot's rating.
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

/// One seat of a finished rated game: its player's rating before the game, its total (lower
/// is better, equal totals tie) and whether it was forfeited (ranked after every seat played).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SeatResult {
    pub before: Rating,
    pub total: i32,
    pub forfeit: bool,
}

/// The ratings after a game, seat by seat, from the seats' ratings before it and their results.
/// Each seat is a team of one, ranked by total (1 for the lowest; equal totals share a rank),
/// forfeited seats last and tied.
pub fn rate(seats: &[SeatResult]) -> Vec<Rating> {
    if seats.is_empty() {
        return Vec::new();
    }
    let teams: Vec<[WengLinRating; 1]> =
        seats.iter().map(|seat| [seat.before.weng_lin()]).collect();
    let ranked: Vec<(&[WengLinRating], MultiTeamOutcome)> = teams
        .iter()
        .zip(seats)
        .map(|(team, seat)| (team.as_slice(), MultiTeamOutcome::new(rank(seats, seat))))
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

/// One opponent of a finished rated game: an account's seat or a bot strategy's seats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RatedSeat {
    /// The account, or the bot's account ([`bot_account`]).
    pub account: String,
    /// The seat's total; a bot strategy's best seat's.
    pub total: i32,
    /// The bot took the seat after a leave or a timeout: it ranks last.
    pub forfeit: bool,
}

impl RatedSeat {
    /// Whether it is a built-in bot, whose rating no game moves.
    pub fn is_bot(&self) -> bool {
        self.account.starts_with(BOT_PREFIX)
    }
}

/// The opponents a finished rated game rates, or `None` when it rates nobody: it needs two
/// accounts, or one account and a single bot seat, and a seat that was played to the end (a
/// bot's, or an account's that did not leave it to the bot). A seat of no account that no bot plays (which a rated game never has) is
/// left out.
pub fn rated_seats(state: &State) -> Option<Vec<RatedSeat>> {
    let mut rated: Vec<RatedSeat> = Vec::with_capacity(state.players.len());
    let mut bot_seats = 0;
    for player in &state.players {
        let (account, forfeit) = match (&player.account, player.bot) {
            (Some(account), taken_over) => (account.clone(), taken_over.is_some()),
            (None, Some(bot)) => (bot_account(bot.name()), false),
            (None, None) => continue,
        };
        let seat = RatedSeat {
            account,
            total: player.total,
            forfeit,
        };
        bot_seats += usize::from(seat.is_bot());
        match rated.iter_mut().find(|kept| kept.account == seat.account) {
            Some(kept) => kept.total = kept.total.min(seat.total),
            None => rated.push(seat),
        }
    }
    let accounts = rated.iter().filter(|seat| !seat.is_bot()).count();
    // Someone played: a bot seat, or an account to the end. (Every account leaving a game of
    // accounts only would rate nothing but who left first.)
    let played = rated.iter().any(|seat| seat.is_bot() || !seat.forfeit);
    let opposed = accounts >= 2 || (accounts == 1 && bot_seats == 1);
    (opposed && played).then_some(rated)
}

/// The rank of `seat` among `seats`: one more than the number of seats that did strictly
/// better (a seat played beats a forfeited one; between two played, the lower total wins).
fn rank(seats: &[SeatResult], seat: &SeatResult) -> usize {
    let better = |other: &&SeatResult| match (other.forfeit, seat.forfeit) {
        (false, false) => other.total < seat.total,
        (false, true) => true,
        (true, _) => false,
    };
    1 + seats.iter().filter(better).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seat(total: i32) -> SeatResult {
        SeatResult {
            before: Rating::initial(),
            total,
            forfeit: false,
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
    fn a_forfeited_seat_ranks_last_whatever_its_total() {
        let forfeited = SeatResult {
            forfeit: true,
            ..seat(-10)
        };
        let after = rate(&[forfeited, seat(40)]);
        assert!(after[0].value < INITIAL_VALUE && after[1].value > INITIAL_VALUE);
        let both = rate(&[forfeited, forfeited, seat(40)]);
        assert!((both[0].value - both[1].value).abs() < 1e-9);
        assert!(both[2].value > INITIAL_VALUE);
    }

    #[test]
    fn a_new_rating_is_provisional_until_its_deviation_drops() {
        assert!(Rating::initial().provisional);
        let mut rating = Rating::initial();
        let mut games = 0;
        while rating.provisional {
            let opponent = seat(20);
            rating = rate(&[
                SeatResult {
                    before: rating,
                    ..seat(10)
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
