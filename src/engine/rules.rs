//! The options a game is created with: its size ([`check_game_size`]), the house rules
//! ([`Rules`], as a client gives them: [`RulesInput`]) and their limits, and the [`LOG_FORMAT`].

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::error::RuleError;

/// The `format` of `game_created`: the version of the log format.
pub const LOG_FORMAT: &str = "golf-log/1";

/// Fewest and most seats of a game.
pub const SEATS: std::ops::RangeInclusive<i64> = 2..=4;

/// Fewest and most holes of a game.
pub const HOLES: std::ops::RangeInclusive<i64> = 1..=18;

/// The `flip_after_discard` house rule.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FlipRule {
    /// No flip after a discard (the original rules).
    #[default]
    Never,
    /// After discarding a stock card the player may flip one face-down card, or pass.
    Optional,
    /// After discarding a stock card the player must flip one face-down card, if any remains.
    Always,
}

impl FlipRule {
    /// The option's value in JSON (`"never"`, `"optional"`, `"always"`).
    pub const fn name(self) -> &'static str {
        match self {
            FlipRule::Never => "never",
            FlipRule::Optional => "optional",
            FlipRule::Always => "always",
        }
    }
}

/// The rule options of a game, fixed at creation, always stored resolved (no defaults left).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Rules {
    /// After a grid is complete, every other player gets exactly one more turn.
    pub final_turns: bool,
    /// Whether a player flips a card after discarding a stock card.
    pub flip_after_discard: FlipRule,
    /// Turns after which a hole ends anyway (at least the number of seats).
    pub max_turns_per_hole: u32,
}

impl Default for Rules {
    /// The original rules, for two seats.
    fn default() -> Rules {
        Rules {
            final_turns: false,
            flip_after_discard: FlipRule::Never,
            max_turns_per_hole: 100,
        }
    }
}

impl Rules {
    /// Resolves the options of a game of `seats` seats: `final_turns` defaults to `false`,
    /// `flip_after_discard` to `never`, `max_turns_per_hole` to 50 × seats.
    ///
    /// Fails with [`RuleError::InvalidGameOptions`] when `max_turns_per_hole` is below `seats` or
    /// above [`MAX_TURNS_PER_SEAT`] × `seats`.
    pub fn resolve(
        seats: u8,
        final_turns: Option<bool>,
        flip_after_discard: Option<FlipRule>,
        max_turns_per_hole: Option<u32>,
    ) -> Result<Rules, RuleError> {
        let max_turns_per_hole = max_turns_per_hole.unwrap_or(50 * u32::from(seats));
        let most = MAX_TURNS_PER_SEAT * u32::from(seats);
        if !(u32::from(seats)..=most).contains(&max_turns_per_hole) {
            return Err(RuleError::InvalidGameOptions(format!(
                "rules.max_turns_per_hole must be from the number of seats ({seats}) to {most}"
            )));
        }
        Ok(Rules {
            final_turns: final_turns.unwrap_or(false),
            flip_after_discard: flip_after_discard.unwrap_or_default(),
            max_turns_per_hole,
        })
    }
}

/// The turn cap may be at most this many turns per seat: a cap guarantees that a hole ends, and a
/// game of bots is played out in the request that seats the last one, so it must stay bounded.
pub const MAX_TURNS_PER_SEAT: u32 = 200;

/// The rule options as a client gives them: any of them may be left out.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RulesInput {
    /// Default `false`.
    #[serde(default)]
    pub final_turns: Option<bool>,
    /// Default `never`.
    #[serde(default)]
    pub flip_after_discard: Option<FlipRule>,
    /// Default 50 × seats; from the number of seats to 200 × seats (bot turns are played within
    /// the request that hands them the turn, so every hole must end in a bounded number).
    // Read as any integer so that a value out of range is a rule violation (422), not a
    // malformed request.
    #[serde(default)]
    #[schema(minimum = 2, maximum = 800)]
    pub max_turns_per_hole: Option<i64>,
}

impl RulesInput {
    /// The resolved rules for `seats` seats; see [`Rules::resolve`].
    pub fn resolve(&self, seats: u8) -> Result<Rules, RuleError> {
        // Out of u32's range is out of the allowed range too: map it to a value resolve refuses.
        let max_turns_per_hole = self
            .max_turns_per_hole
            .map(|max| u32::try_from(max).unwrap_or(0));
        Rules::resolve(
            seats,
            self.final_turns,
            self.flip_after_discard,
            max_turns_per_hole,
        )
    }
}

/// Checks a game's size as a client gives it: `seats` 2 to 4, `holes` 1 to 18.
///
/// Returns them as `(seats, holes)`, or [`RuleError::InvalidGameOptions`] naming the field.
pub fn check_game_size(seats: i64, holes: i64) -> Result<(u8, u8), RuleError> {
    if !SEATS.contains(&seats) {
        return Err(RuleError::InvalidGameOptions(format!(
            "seats must be 2 to 4, not {seats}"
        )));
    }
    if !HOLES.contains(&holes) {
        return Err(RuleError::InvalidGameOptions(format!(
            "holes must be 1 to 18, not {holes}"
        )));
    }
    Ok((seats as u8, holes as u8))
}
