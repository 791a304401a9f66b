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

/// Fewest and most seconds of `turn_timeout_s`.
pub const TURN_TIMEOUT_S: std::ops::RangeInclusive<i64> = 10..=604_800;

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
    /// Seconds a seat may take to play (or to make its initial reveal) before the greedy bot
    /// takes it for the rest of the game; absent: no timeout.
    // Left out of the JSON when absent, so that a game without a timeout logs `game_created`
    // exactly as before the option existed, and older logs read and hash as they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 10, maximum = 604800)]
    pub turn_timeout_s: Option<u32>,
}

impl Default for Rules {
    /// The original rules, for two seats.
    fn default() -> Rules {
        Rules {
            final_turns: false,
            flip_after_discard: FlipRule::Never,
            max_turns_per_hole: 100,
            turn_timeout_s: None,
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
            turn_timeout_s: None,
        })
    }

    /// These rules with `turn_timeout_s`, which must be `None` or within [`TURN_TIMEOUT_S`]
    /// (else [`RuleError::InvalidGameOptions`]).
    pub fn with_turn_timeout(self, turn_timeout_s: Option<i64>) -> Result<Rules, RuleError> {
        let turn_timeout_s = match turn_timeout_s {
            None => None,
            Some(seconds) if TURN_TIMEOUT_S.contains(&seconds) => Some(seconds as u32),
            Some(seconds) => {
                return Err(RuleError::InvalidGameOptions(format!(
                    "rules.turn_timeout_s must be null or {} to {} seconds, not {seconds}",
                    TURN_TIMEOUT_S.start(),
                    TURN_TIMEOUT_S.end()
                )));
            }
        };
        Ok(Rules {
            turn_timeout_s,
            ..self
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
    /// Seconds a seat may take to play before the greedy bot takes it, 10 to 604800, or null
    /// for no timeout. Default: the server's (`GOLF_TURN_TIMEOUT_S`; none unless it is set).
    // Absent (the server's default) and null (no timeout) differ: hence the nested option.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<i64>, minimum = 10, maximum = 604800)]
    pub turn_timeout_s: Option<Option<i64>>,
}

/// A field that is present, `null` included: `Some` of its value.
fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

impl RulesInput {
    /// The resolved rules for `seats` seats, `turn_timeout_s` defaulting to
    /// `default_turn_timeout_s`; see [`Rules::resolve`] and [`Rules::with_turn_timeout`].
    pub fn resolve_with(
        &self,
        seats: u8,
        default_turn_timeout_s: Option<u32>,
    ) -> Result<Rules, RuleError> {
        let turn_timeout_s = self
            .turn_timeout_s
            .unwrap_or(default_turn_timeout_s.map(i64::from));
        self.resolve(seats)?.with_turn_timeout(turn_timeout_s)
    }

    /// The resolved rules for `seats` seats, with no turn timeout unless the client gave one;
    /// see [`Rules::resolve`].
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
        )?
        .with_turn_timeout(self.turn_timeout_s.flatten())
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
