//! The options a game is created with: its size ([`check_game_size`]), the house rules
//! ([`Rules`], as a client gives them: [`RulesInput`]) and their limits, and the log format
//! ([`LOG_FORMAT`], [`LOG_FORMAT_2`]).

use std::ops::RangeInclusive;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::cards::{GridShape, STANDARD_CARDS};
use super::error::RuleError;
use super::score::Scoring;

/// The `format` of `game_created` for a game whose house-rule variants (v1.2) are all at their
/// defaults: the log is exactly what it was before the variants existed.
pub const LOG_FORMAT: &str = "golf-log/1";

/// The `format` of `game_created` for a game with any variant away from its default: `rules`
/// then lists every option.
pub const LOG_FORMAT_2: &str = "golf-log/2";

/// Values of `initial_reveal` by default: two cards.
pub const INITIAL_REVEAL: u8 = 2;

/// Values of `joker_value`, and its default.
pub const JOKER_VALUES: RangeInclusive<i64> = -5..=0;
/// The default points of a joker.
pub const JOKER_VALUE: i32 = -2;

/// Values of `four_of_a_kind` (0: no bonus).
pub const FOUR_OF_A_KIND: RangeInclusive<i64> = -50..=0;

/// Fewest and most seats of a game.
pub const SEATS: std::ops::RangeInclusive<i64> = 2..=4;

/// Fewest and most holes of a game.
pub const HOLES: std::ops::RangeInclusive<i64> = 1..=18;

/// The holes of a game whose creator names none.
pub fn default_holes() -> i64 {
    9
}

/// Reads rule options that are an object only (not the array of their fields, which serde would
/// also take for a struct): `#[serde(deserialize_with = "rules_object")]`.
pub fn rules_object<'de, D>(deserializer: D) -> Result<RulesInput, D::Error>
where
    D: serde::Deserializer<'de>,
{
    use serde::Deserialize;
    use serde::de::Error;
    let fields = serde_json::Map::<String, serde_json::Value>::deserialize(deserializer)?;
    RulesInput::deserialize(serde_json::Value::Object(fields)).map_err(D::Error::custom)
}

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

/// The `negative_pairs` house rule: what a column of equal negative ranks scores.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PairRule {
    /// A column of equal ranks scores 0, whatever the rank (the original rule).
    #[default]
    Zero,
    /// A column of Twos, or of jokers, keeps its (negative) sum; other pairs score 0.
    Keep,
}

impl PairRule {
    /// The option's value in JSON (`"zero"`, `"keep"`).
    pub const fn name(self) -> &'static str {
        match self {
            PairRule::Zero => "zero",
            PairRule::Keep => "keep",
        }
    }
}

/// The rule options of a game, fixed at creation, always stored resolved (no defaults left).
///
/// In JSON the house-rule variants of v1.2 (`grid` to `knock`) are all left out when all are at
/// their defaults (a `golf-log/1` game, logged and shown exactly as before they existed), and all
/// listed otherwise (`golf-log/2`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize, ToSchema)]
#[serde(from = "RulesJson", into = "RulesJson")]
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
    /// The grid's shape, rows × columns (v1.2; default `"2x3"`).
    #[serde(default)]
    pub grid: GridShape,
    /// Cards each player turns face up at the start of a hole, 0 to cells − 1 (v1.2; default 2;
    /// 0: no reveal stage).
    #[serde(default)]
    #[schema(minimum = 0, maximum = 8, default = 2)]
    pub initial_reveal: u8,
    /// Jokers in the deck, 0 or 2 (`JR`, `JB`) (v1.2; default 0).
    #[serde(default)]
    #[schema(minimum = 0, maximum = 2)]
    pub jokers: u8,
    /// Points of a joker, −5 to 0 (v1.2; default −2).
    #[serde(default)]
    #[schema(minimum = -5, maximum = 0, default = -2)]
    pub joker_value: i32,
    /// What a column of Twos or of jokers scores (v1.2; default `"zero"`).
    #[serde(default)]
    pub negative_pairs: PairRule,
    /// Bonus, 0 (none) or −50 to −1, for two pair columns of one rank in a two-row grid (v1.2;
    /// default 0).
    #[serde(default)]
    #[schema(minimum = -50, maximum = 0)]
    pub four_of_a_kind: i32,
    /// Whether a player may knock at the start of a turn (v1.2; default `false`).
    #[serde(default)]
    pub knock: bool,
}

impl Default for Rules {
    /// The original rules, for two seats.
    fn default() -> Rules {
        Rules {
            final_turns: false,
            flip_after_discard: FlipRule::Never,
            max_turns_per_hole: 100,
            turn_timeout_s: None,
            grid: GridShape::TwoByThree,
            initial_reveal: INITIAL_REVEAL,
            jokers: 0,
            joker_value: JOKER_VALUE,
            negative_pairs: PairRule::Zero,
            four_of_a_kind: 0,
            knock: false,
        }
    }
}

/// [`Rules`] as JSON: the variants optional, so that a `golf-log/1` game leaves them out.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesJson {
    final_turns: bool,
    flip_after_discard: FlipRule,
    max_turns_per_hole: u32,
    // Left out of the JSON when absent, so that a game without a timeout logs `game_created`
    // exactly as before the option existed, and older logs read and hash as they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    turn_timeout_s: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    grid: Option<GridShape>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    initial_reveal: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    jokers: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    joker_value: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    negative_pairs: Option<PairRule>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    four_of_a_kind: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    knock: Option<bool>,
}

impl From<RulesJson> for Rules {
    fn from(json: RulesJson) -> Rules {
        let default = Rules::default();
        Rules {
            final_turns: json.final_turns,
            flip_after_discard: json.flip_after_discard,
            max_turns_per_hole: json.max_turns_per_hole,
            turn_timeout_s: json.turn_timeout_s,
            grid: json.grid.unwrap_or_default(),
            initial_reveal: json.initial_reveal.unwrap_or(default.initial_reveal),
            jokers: json.jokers.unwrap_or_default(),
            joker_value: json.joker_value.unwrap_or(default.joker_value),
            negative_pairs: json.negative_pairs.unwrap_or_default(),
            four_of_a_kind: json.four_of_a_kind.unwrap_or_default(),
            knock: json.knock.unwrap_or_default(),
        }
    }
}

impl From<Rules> for RulesJson {
    fn from(rules: Rules) -> RulesJson {
        let listed = rules.has_variants();
        RulesJson {
            final_turns: rules.final_turns,
            flip_after_discard: rules.flip_after_discard,
            max_turns_per_hole: rules.max_turns_per_hole,
            turn_timeout_s: rules.turn_timeout_s,
            grid: listed.then_some(rules.grid),
            initial_reveal: listed.then_some(rules.initial_reveal),
            jokers: listed.then_some(rules.jokers),
            joker_value: listed.then_some(rules.joker_value),
            negative_pairs: listed.then_some(rules.negative_pairs),
            four_of_a_kind: listed.then_some(rules.four_of_a_kind),
            knock: listed.then_some(rules.knock),
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
            ..Rules::default()
        })
    }

    /// Whether any house-rule variant of v1.2 is away from its default (the game then logs
    /// [`LOG_FORMAT_2`]).
    pub fn has_variants(&self) -> bool {
        let default = Rules::default();
        (
            self.grid,
            self.initial_reveal,
            self.jokers,
            self.joker_value,
            self.negative_pairs,
            self.four_of_a_kind,
            self.knock,
        ) != (
            default.grid,
            default.initial_reveal,
            default.jokers,
            default.joker_value,
            default.negative_pairs,
            default.four_of_a_kind,
            default.knock,
        )
    }

    /// The `format` of the game's log: [`LOG_FORMAT`], or [`LOG_FORMAT_2`] with variants.
    pub fn log_format(&self) -> &'static str {
        if self.has_variants() {
            LOG_FORMAT_2
        } else {
            LOG_FORMAT
        }
    }

    /// Cards in the game's deck: 52, or 54 with jokers.
    pub fn deck_size(&self) -> usize {
        STANDARD_CARDS + usize::from(self.jokers)
    }

    /// Cards in each grid.
    pub fn cells(&self) -> usize {
        self.grid.cells()
    }

    /// How the game's grids are scored.
    pub fn scoring(&self) -> Scoring {
        Scoring {
            shape: self.grid,
            joker_value: self.joker_value,
            keep_negative_pairs: self.negative_pairs == PairRule::Keep,
            four_of_a_kind: self.four_of_a_kind,
        }
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
#[derive(Clone, PartialEq, Eq, Debug, Default, Serialize, Deserialize, ToSchema)]
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
    /// The grid, rows × columns: `"2x3"` (default), `"2x2"`, `"2x4"` or `"3x3"`.
    // Read as any string so that an unknown shape is a rule violation (422) naming the option.
    #[serde(default)]
    #[schema(value_type = Option<GridShape>)]
    pub grid: Option<String>,
    /// Cards each player turns face up at the start, 0 to cells − 1. Default 2.
    #[serde(default)]
    #[schema(minimum = 0, maximum = 8)]
    pub initial_reveal: Option<i64>,
    /// Jokers in the deck: 0 (default) or 2.
    #[serde(default)]
    #[schema(minimum = 0, maximum = 2)]
    pub jokers: Option<i64>,
    /// Points of a joker, −5 to 0. Default −2.
    #[serde(default)]
    #[schema(minimum = -5, maximum = 0)]
    pub joker_value: Option<i64>,
    /// `"zero"` (default): a column of equal ranks scores 0; `"keep"`: a column of Twos or of
    /// jokers keeps its negative sum.
    #[serde(default)]
    #[schema(value_type = Option<PairRule>)]
    pub negative_pairs: Option<String>,
    /// Bonus for two pair columns of one rank in a two-row grid: 0 (default, none) or −50 to −1;
    /// only 0 with `"3x3"`.
    #[serde(default)]
    #[schema(minimum = -50, maximum = 0)]
    pub four_of_a_kind: Option<i64>,
    /// Whether a player may knock instead of drawing. Default `false`.
    #[serde(default)]
    pub knock: Option<bool>,
}

impl From<Rules> for RulesInput {
    /// The options that resolve to `rules` again.
    fn from(rules: Rules) -> RulesInput {
        RulesInput {
            final_turns: Some(rules.final_turns),
            flip_after_discard: Some(rules.flip_after_discard),
            max_turns_per_hole: Some(i64::from(rules.max_turns_per_hole)),
            turn_timeout_s: Some(rules.turn_timeout_s.map(i64::from)),
            grid: Some(rules.grid.name().to_owned()),
            initial_reveal: Some(i64::from(rules.initial_reveal)),
            jokers: Some(i64::from(rules.jokers)),
            joker_value: Some(i64::from(rules.joker_value)),
            negative_pairs: Some(rules.negative_pairs.name().to_owned()),
            four_of_a_kind: Some(i64::from(rules.four_of_a_kind)),
            knock: Some(rules.knock),
        }
    }
}

/// `value` (or `default` when absent) if `allowed`, else [`RuleError::InvalidGameOptions`]
/// naming `rules.{name}` and saying what is allowed (`expected`).
fn checked(
    name: &str,
    value: Option<i64>,
    default: i64,
    allowed: impl Fn(i64) -> bool,
    expected: &str,
) -> Result<i64, RuleError> {
    let value = value.unwrap_or(default);
    if allowed(value) {
        Ok(value)
    } else {
        Err(RuleError::InvalidGameOptions(format!(
            "rules.{name} must be {expected}, not {value}"
        )))
    }
}

/// The value named `given` among `choices` (by `name_of`), `default` when absent, else
/// [`RuleError::InvalidGameOptions`] naming `rules.{option}`.
fn chosen<T: Copy>(
    option: &str,
    given: Option<&str>,
    default: T,
    choices: &[T],
    name_of: fn(T) -> &'static str,
) -> Result<T, RuleError> {
    let Some(given) = given else {
        return Ok(default);
    };
    choices
        .iter()
        .copied()
        .find(|&choice| name_of(choice) == given)
        .ok_or_else(|| {
            let names: Vec<String> = choices
                .iter()
                .map(|&c| format!("\"{}\"", name_of(c)))
                .collect();
            RuleError::InvalidGameOptions(format!(
                "rules.{option} must be one of {}, not {given:?}",
                names.join(", ")
            ))
        })
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
        let rules = Rules::resolve(
            seats,
            self.final_turns,
            self.flip_after_discard,
            max_turns_per_hole,
        )?
        .with_turn_timeout(self.turn_timeout_s.flatten())?;
        self.with_variants(rules, seats)
    }

    /// `rules` with the house-rule variants of v1.2 given here, checked for a game of `seats`.
    fn with_variants(&self, rules: Rules, seats: u8) -> Result<Rules, RuleError> {
        let grid = chosen(
            "grid",
            self.grid.as_deref(),
            GridShape::default(),
            &GridShape::ALL,
            GridShape::name,
        )?;
        let cells = grid.cells() as i64;
        let initial_reveal = checked(
            "initial_reveal",
            self.initial_reveal,
            i64::from(INITIAL_REVEAL),
            |n| (0..cells).contains(&n),
            &format!(
                "0 to {} (the cells of grid {} less one)",
                cells - 1,
                grid.name()
            ),
        )?;
        let jokers = checked("jokers", self.jokers, 0, |n| n == 0 || n == 2, "0 or 2")?;
        let joker_value = checked(
            "joker_value",
            self.joker_value,
            i64::from(JOKER_VALUE),
            |n| JOKER_VALUES.contains(&n),
            "-5 to 0",
        )?;
        let four_of_a_kind = checked(
            "four_of_a_kind",
            self.four_of_a_kind,
            0,
            |n| FOUR_OF_A_KIND.contains(&n) && (n == 0 || grid.rows() == 2),
            if grid.rows() == 2 {
                "0 or -50 to -1"
            } else {
                "0 with grid 3x3"
            },
        )?;
        let rules = Rules {
            grid,
            initial_reveal: initial_reveal as u8,
            jokers: jokers as u8,
            joker_value: joker_value as i32,
            negative_pairs: chosen(
                "negative_pairs",
                self.negative_pairs.as_deref(),
                PairRule::Zero,
                &[PairRule::Zero, PairRule::Keep],
                PairRule::name,
            )?,
            four_of_a_kind: four_of_a_kind as i32,
            knock: self.knock.unwrap_or(false),
            ..rules
        };
        check_stock(&rules, seats)?;
        Ok(rules)
    }
}

/// The deal must leave at least one card of stock: a grid for each of `seats` seats and the
/// discard pile's first card come out of the deck.
fn check_stock(rules: &Rules, seats: u8) -> Result<(), RuleError> {
    let dealt = rules.cells() * usize::from(seats) + 1;
    if dealt < rules.deck_size() {
        Ok(())
    } else {
        Err(RuleError::InvalidGameOptions(format!(
            "rules.grid {} for {seats} seats leaves no stock in a deck of {}",
            rules.grid.name(),
            rules.deck_size()
        )))
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
