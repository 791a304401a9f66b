//! The game aggregate: its [`State`], the [`Command`]s it takes, the [`Event`]s it emits (the log
//! entries of API.md), the [`Move`]s players make, the [`Rules`] options, the validated inputs
//! ([`PlayerName`], [`ClientSeed`], [`Timestamp`]) and every [`RuleError`].
//!
//! [`decide`] checks a command against the state and returns the events it causes; [`apply`] folds
//! one event into the state. Replaying a log through [`apply`] from `State::default()` rebuilds the
//! state exactly. [`legal_moves`] lists the moves a seat may make, from the same checks as [`decide`].

use std::fmt;
use std::ops::Deref;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use utoipa::ToSchema;
use uuid::Uuid;

use super::bots::BotKind;
use super::cards::{Card, Position, Rank, Suit};
use super::score::grid_score;
use super::shuffle;

/// A seat number, `0..seats`, clockwise.
pub type Seat = u8;

/// The `format` of `game_created`: the version of the log format.
pub const LOG_FORMAT: &str = "golf-log/1";

/// Fewest and most seats of a game.
pub const SEATS: std::ops::RangeInclusive<i64> = 2..=4;

/// Fewest and most holes of a game.
pub const HOLES: std::ops::RangeInclusive<i64> = 1..=18;

// ---------------------------------------------------------------------------------------------
// Options and validated inputs
// ---------------------------------------------------------------------------------------------

/// The `flip_after_discard` house rule.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FlipRule {
    /// No flip after a discard (the seed's rule).
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
    /// The seed's rules for two seats.
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

/// A player's name: 1 to 40 Unicode scalar values after trimming white space at both ends, with
/// no control character (category Cc) anywhere.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize, ToSchema)]
#[serde(try_from = "String", into = "String")]
#[schema(value_type = String)]
pub struct PlayerName(String);

impl PlayerName {
    /// Trims and checks a name; fails with [`RuleError::InvalidName`].
    pub fn parse(raw: &str) -> Result<PlayerName, RuleError> {
        if raw.chars().any(char::is_control) {
            return Err(RuleError::InvalidName(
                "a name may not contain control characters".into(),
            ));
        }
        let name = raw.trim();
        match name.chars().count() {
            0 => Err(RuleError::InvalidName("a name may not be empty".into())),
            1..=40 => Ok(PlayerName(name.to_owned())),
            n => Err(RuleError::InvalidName(format!(
                "a name has at most 40 characters, this one has {n}"
            ))),
        }
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for PlayerName {
    type Error = RuleError;
    fn try_from(raw: String) -> Result<PlayerName, RuleError> {
        PlayerName::parse(&raw)
    }
}

impl From<PlayerName> for String {
    fn from(name: PlayerName) -> String {
        name.0
    }
}

/// A player's client seed: at most 64 Unicode scalar values, no control characters; `""` when
/// none is given (and for bots).
#[derive(Clone, PartialEq, Eq, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(try_from = "String", into = "String")]
#[schema(value_type = String)]
pub struct ClientSeed(String);

impl ClientSeed {
    /// Checks a client seed (kept as given, not trimmed); fails with
    /// [`RuleError::InvalidClientSeed`].
    pub fn parse(raw: &str) -> Result<ClientSeed, RuleError> {
        if raw.chars().any(char::is_control) {
            return Err(RuleError::InvalidClientSeed(
                "a client seed may not contain control characters".into(),
            ));
        }
        let n = raw.chars().count();
        if n > 64 {
            return Err(RuleError::InvalidClientSeed(format!(
                "a client seed has at most 64 characters, this one has {n}"
            )));
        }
        Ok(ClientSeed(raw.to_owned()))
    }

    /// The seed as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for ClientSeed {
    type Error = RuleError;
    fn try_from(raw: String) -> Result<ClientSeed, RuleError> {
        ClientSeed::parse(&raw)
    }
}

impl From<ClientSeed> for String {
    fn from(seed: ClientSeed) -> String {
        seed.0
    }
}

/// A point in time: Unix time in microseconds. Displayed and serialized as RFC 3339 UTC with
/// exactly six fractional digits and `Z` (`2026-12-01T03:26:30.123456Z`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default, ToSchema)]
#[schema(value_type = String, format = DateTime)]
pub struct Timestamp(pub i64);

/// A string that is not a timestamp in the format of [`Timestamp`].
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
#[error("not a timestamp like 2026-12-01T03:26:30.123456Z: {0:?}")]
pub struct InvalidTimestamp(pub String);

const TIMESTAMP_FORMAT: &str = "%Y-%m-%dT%H:%M:%S%.6fZ";

impl Timestamp {
    /// Parses the exact format of [`Timestamp`]'s `Display`.
    pub fn parse(text: &str) -> Result<Timestamp, InvalidTimestamp> {
        let invalid = || InvalidTimestamp(text.to_owned());
        // Exactly six fractional digits: the dot sits 7 bytes before the final `Z`.
        let dot = text.len().checked_sub(8).ok_or_else(invalid)?;
        if text.as_bytes().get(dot) != Some(&b'.') {
            return Err(invalid());
        }
        chrono::NaiveDateTime::parse_from_str(text, TIMESTAMP_FORMAT)
            .map(|t| Timestamp(t.and_utc().timestamp_micros()))
            .map_err(|_| invalid())
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let time = chrono::DateTime::from_timestamp_micros(self.0).unwrap_or(if self.0 < 0 {
            chrono::DateTime::<chrono::Utc>::MIN_UTC
        } else {
            chrono::DateTime::<chrono::Utc>::MAX_UTC
        });
        write!(f, "{}", time.format(TIMESTAMP_FORMAT))
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Timestamp, D::Error> {
        let text = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Timestamp::parse(&text).map_err(serde::de::Error::custom)
    }
}

// ---------------------------------------------------------------------------------------------
// Moves
// ---------------------------------------------------------------------------------------------

/// Where a card is drawn from.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The face-down stock: only the drawer sees the card.
    Stock,
    /// The face-up discard pile: the card is public.
    Discard,
}

/// A move, in the format of API.md (`{"type": "reveal", "positions": [p, q]}`, ...).
///
/// Positions are [`Position`]s, so a `Move` never holds an out-of-range index: clients' moves
/// arrive as a [`MoveRequest`] and become a `Move` through [`parse_move`] (or `TryFrom`), which
/// reports `position_out_of_range` as a [`RuleError`]. Deserializing a `Move` directly goes
/// through [`MoveRequest`] too (so unknown fields are refused), and reports such errors as plain
/// serde errors.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case", try_from = "MoveRequest")]
#[schema(description = "A move the caller may make now, in the format that POST /moves takes.")]
pub enum Move {
    /// The initial reveal of two of the player's own face-down cards.
    Reveal {
        /// Two distinct positions.
        positions: [Position; 2],
    },
    /// Draws a card.
    Draw {
        /// `stock` or `discard`.
        source: Source,
    },
    /// Places the drawn card at `position`, face up; the card that was there is discarded.
    Swap {
        /// Where the drawn card goes.
        position: Position,
    },
    /// Discards the drawn card (only a card drawn from the stock).
    Discard,
    /// Turns a face-down card face up after a discard (flip rule `optional` or `always`).
    Flip {
        /// A face-down position.
        position: Position,
    },
    /// Declines the flip (flip rule `optional`).
    Pass,
}

/// The type of a move, without its values.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MoveKind {
    /// `reveal`
    Reveal,
    /// `draw`
    Draw,
    /// `swap`
    Swap,
    /// `discard`
    Discard,
    /// `flip`
    Flip,
    /// `pass`
    Pass,
}

impl MoveKind {
    /// Every kind, in the order [`legal_moves`] lists them.
    pub const ALL: [MoveKind; 6] = [
        MoveKind::Reveal,
        MoveKind::Draw,
        MoveKind::Swap,
        MoveKind::Discard,
        MoveKind::Flip,
        MoveKind::Pass,
    ];

    /// The `type` of the move in JSON.
    pub const fn name(self) -> &'static str {
        match self {
            MoveKind::Reveal => "reveal",
            MoveKind::Draw => "draw",
            MoveKind::Swap => "swap",
            MoveKind::Discard => "discard",
            MoveKind::Flip => "flip",
            MoveKind::Pass => "pass",
        }
    }
}

impl fmt::Display for MoveKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Move {
    /// The type of this move.
    pub const fn kind(&self) -> MoveKind {
        match self {
            Move::Reveal { .. } => MoveKind::Reveal,
            Move::Draw { .. } => MoveKind::Draw,
            Move::Swap { .. } => MoveKind::Swap,
            Move::Discard => MoveKind::Discard,
            Move::Flip { .. } => MoveKind::Flip,
            Move::Pass => MoveKind::Pass,
        }
    }
}

/// A move as a client sends it: the shape of [`Move`] with positions still raw integers, so that
/// a request of the right shape parses (a 400 otherwise) and its values are judged by
/// [`parse_move`] (a 422 `position_out_of_range` / `invalid_reveal`). `discard` and `pass` are
/// empty struct variants so that serde rejects unknown fields on them too.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
#[schema(description = "A move. Positions are 0 to 5, row-major: top row 0 1 2, bottom row 3 4 5.")]
pub enum MoveRequest {
    /// `{"type": "reveal", "positions": [p, q]}`
    Reveal {
        /// Exactly two distinct positions 0..5.
        positions: Vec<i64>,
    },
    /// `{"type": "draw", "source": "stock" | "discard"}`
    Draw {
        /// `stock` or `discard`.
        source: Source,
    },
    /// `{"type": "swap", "position": p}`
    Swap {
        /// 0..5
        position: i64,
    },
    /// `{"type": "discard"}`
    Discard {},
    /// `{"type": "flip", "position": p}`
    Flip {
        /// 0..5
        position: i64,
    },
    /// `{"type": "pass"}`
    Pass {},
}

impl MoveRequest {
    /// The type of the requested move.
    pub const fn kind(&self) -> MoveKind {
        match self {
            MoveRequest::Reveal { .. } => MoveKind::Reveal,
            MoveRequest::Draw { .. } => MoveKind::Draw,
            MoveRequest::Swap { .. } => MoveKind::Swap,
            MoveRequest::Discard {} => MoveKind::Discard,
            MoveRequest::Flip { .. } => MoveKind::Flip,
            MoveRequest::Pass {} => MoveKind::Pass,
        }
    }
}

impl TryFrom<&MoveRequest> for Move {
    type Error = RuleError;

    /// Checks the values only: positions in range, two positions in a reveal.
    fn try_from(request: &MoveRequest) -> Result<Move, RuleError> {
        Ok(match request {
            MoveRequest::Reveal { positions } => match positions.as_slice() {
                [p, q] => Move::Reveal {
                    positions: [Position::try_from(*p)?, Position::try_from(*q)?],
                },
                other => return Err(RuleError::InvalidReveal(other.len())),
            },
            MoveRequest::Draw { source } => Move::Draw { source: *source },
            MoveRequest::Swap { position } => Move::Swap {
                position: Position::try_from(*position)?,
            },
            MoveRequest::Discard {} => Move::Discard,
            MoveRequest::Flip { position } => Move::Flip {
                position: Position::try_from(*position)?,
            },
            MoveRequest::Pass {} => Move::Pass,
        })
    }
}

impl TryFrom<MoveRequest> for Move {
    type Error = RuleError;

    /// As for `&MoveRequest`.
    fn try_from(request: MoveRequest) -> Result<Move, RuleError> {
        Move::try_from(&request)
    }
}

/// Turns a client's request into a [`Move`] of `seat`, reporting errors in API.md's order: the
/// game's state, then whose turn it is, then the stage, and only then the values
/// (`position_out_of_range`, `invalid_reveal`). [`decide`] checks the rest.
pub fn parse_move(state: &State, seat: Seat, request: &MoveRequest) -> Result<Move, RuleError> {
    check_turn(state, seat, request.kind())?;
    Move::try_from(request)
}

/// A short list of moves kept inline (no allocation): the legal moves of one seat.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct MoveList {
    moves: [Move; MoveList::CAPACITY],
    len: u8,
}

impl MoveList {
    /// The most moves a seat can have at once (the 15 reveal pairs).
    pub const CAPACITY: usize = 15;

    /// An empty list.
    pub const fn new() -> MoveList {
        MoveList {
            moves: [Move::Pass; MoveList::CAPACITY],
            len: 0,
        }
    }

    fn push(&mut self, mv: Move) {
        self.moves[self.len as usize] = mv;
        self.len += 1;
    }
}

impl Default for MoveList {
    fn default() -> MoveList {
        MoveList::new()
    }
}

impl Deref for MoveList {
    type Target = [Move];
    fn deref(&self) -> &[Move] {
        &self.moves[..self.len as usize]
    }
}

// ---------------------------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------------------------

/// Where a game is in its life.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Seats are still free.
    #[default]
    Waiting,
    /// Every seat is taken; holes are being played.
    Playing,
    /// The last hole is scored.
    Finished,
}

/// The stage of the current hole.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// The initial reveal: every seat that has not revealed two cards may do so; nobody's turn.
    Reveal,
    /// The current seat draws.
    Draw,
    /// The current seat swaps the drawn card, or discards it if it came from the stock.
    Place,
    /// The current seat flips a face-down card (or passes, under `optional`).
    Flip,
    /// The hole is over (and, once finished, the game).
    HoleOver,
}

/// Why a hole ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// A grid was all face up: after the final turns, if any, or when the turn cap cut them
    /// short, since a grid was complete by then.
    GridComplete,
    /// `max_turns_per_hole` turns were played.
    TurnCap,
}

/// The card a seat has drawn and not yet placed.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct Drawn {
    /// Who drew it.
    pub seat: Seat,
    /// Where from.
    pub source: Source,
    /// The card (secret from the others when drawn from the stock).
    pub card: Card,
}

/// A finished hole: every grid face up and its score.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize, ToSchema)]
pub struct HoleResult {
    /// The hole, from 1.
    pub hole: u8,
    /// Why it ended.
    pub reason: EndReason,
    /// Each seat's six cards, in seat order.
    #[schema(value_type = Vec<Vec<Card>>)]
    pub grids: Vec<[Card; 6]>,
    /// Each seat's score for the hole, in seat order.
    pub scores: Vec<i32>,
}

/// One seated player, with everything the server knows about their grid.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct Player {
    /// The name.
    pub name: PlayerName,
    /// The strategy, for a bot.
    pub bot: Option<BotKind>,
    /// The client seed (public).
    pub client_seed: ClientSeed,
    /// The six cards of the current hole, face up or not (meaningless before the first deal).
    pub grid: [Card; 6],
    /// Which of the six cards are face up.
    pub face_up: [bool; 6],
    /// Whether the player has made the initial reveal of this hole.
    pub revealed: bool,
    /// The score of each finished hole.
    pub hole_scores: Vec<i32>,
    /// The sum of `hole_scores`.
    pub total: i32,
}

impl Player {
    /// How many of the six cards are face up.
    pub fn face_up_count(&self) -> usize {
        self.face_up.iter().filter(|&&up| up).count()
    }

    /// Whether all six cards are face up.
    pub fn grid_complete(&self) -> bool {
        self.face_up.iter().all(|&up| up)
    }
}

/// The complete state of a game, hidden cards included: it is server-side only, and
/// [`view`](mod@super::view) decides what each viewer sees. `State::default()` is "no game yet".
#[derive(Clone, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
pub struct State {
    /// Number of events applied (the `seq` of the last log entry).
    pub version: u64,
    /// The game's id, once created.
    pub game_id: Option<Uuid>,
    /// Number of seats.
    pub seats: u8,
    /// Number of holes.
    pub holes: u8,
    /// The rule options.
    pub rules: Rules,
    /// `hex(SHA-256(server_seed))`.
    pub commitment: String,
    /// Whether explicit decks were given at creation.
    pub stacked: bool,
    /// Waiting, playing or finished.
    pub status: Status,
    /// The seated players, in seat order.
    pub players: Vec<Player>,
    /// The current hole, from 1 (0 before the first deal).
    pub hole: u8,
    /// The dealer of the current hole.
    pub dealer: Seat,
    /// The stage of the current hole (`None` before the first deal).
    pub stage: Option<Stage>,
    /// Whose turn it is (`None` during the reveal and between holes).
    pub current_seat: Option<Seat>,
    /// When `current_seat` got the turn.
    pub turn_started_at: Option<Timestamp>,
    /// The stock, top card last.
    pub stock: Vec<Card>,
    /// The discard pile, top card last.
    pub discard: Vec<Card>,
    /// The card drawn and not yet placed.
    pub drawn: Option<Drawn>,
    /// Turns played in this hole.
    pub turns: u32,
    /// During final turns, how many remain.
    pub final_turns_left: Option<u8>,
    /// Reshuffles done in this hole.
    pub shuffles: u32,
    /// The last finished hole.
    pub last_hole: Option<HoleResult>,
    /// The winning seats, once finished.
    pub winners: Option<Vec<Seat>>,
    /// The server seed in lowercase hex, once finished.
    pub seed: Option<String>,
}

// ---------------------------------------------------------------------------------------------
// Commands, secrets and events
// ---------------------------------------------------------------------------------------------

/// What a client (or the server on its behalf) asks the game to do.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Command {
    /// Creates the game; only on `State::default()`.
    Create {
        /// The game's id.
        game_id: Uuid,
        /// 2 to 4.
        seats: u8,
        /// 1 to 18.
        holes: u8,
        /// Resolved options.
        rules: Rules,
        /// `hex(SHA-256(server_seed))`.
        commitment: String,
        /// Whether `Secrets::decks` holds explicit decks.
        stacked: bool,
    },
    /// Takes the next free seat; taking the last one deals hole 1.
    Join {
        /// The player's name.
        name: PlayerName,
        /// The strategy, for a bot.
        bot: Option<BotKind>,
        /// The player's entropy (`""` for none and for bots).
        client_seed: ClientSeed,
    },
    /// A move by `seat`.
    Play {
        /// Who moves.
        seat: Seat,
        /// The move.
        mv: Move,
    },
}

/// The secret inputs of a game, kept by the server outside the log.
pub struct Secrets {
    /// The 32 random bytes committed to at creation and revealed at the end.
    pub server_seed: [u8; 32],
    /// Explicit deal orders of holes 1, 2, ... for a stacked game (may cover fewer holes).
    pub decks: Vec<[Card; 52]>,
}

impl fmt::Debug for Secrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secrets { .. }")
    }
}

/// One log entry's `type` and `data`: serialized as `{"type": "card_drawn", "data": {...}}`.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum Event {
    /// The game exists; seats are free.
    GameCreated {
        /// The game's id.
        game_id: Uuid,
        /// Always [`LOG_FORMAT`].
        format: String,
        /// Number of seats.
        seats: u8,
        /// Number of holes.
        holes: u8,
        /// Resolved options.
        rules: Rules,
        /// `hex(SHA-256(server_seed))`.
        commitment: String,
        /// Whether explicit decks were given.
        stacked: bool,
    },
    /// A seat was taken.
    PlayerJoined {
        /// The seat taken.
        seat: Seat,
        /// The player's name.
        name: PlayerName,
        /// The strategy, for a bot.
        bot: Option<BotKind>,
        /// The player's client seed.
        client_seed: ClientSeed,
    },
    /// A hole was dealt.
    HoleDealt {
        /// The hole, from 1.
        hole: u8,
        /// The dealer.
        dealer: Seat,
        /// The card that starts the discard pile.
        discard: Card,
        /// The 52 cards in dealt order (secret until the game ends).
        #[serde(with = "deck_serde")]
        #[schema(value_type = Option<Vec<Card>>)]
        deck: [Card; 52],
    },
    /// A seat made its initial reveal.
    CardsRevealed {
        /// Who revealed.
        seat: Seat,
        /// The two positions.
        positions: [Position; 2],
        /// The two cards, in the order of `positions`.
        cards: [Card; 2],
    },
    /// A seat drew a card.
    CardDrawn {
        /// Who drew.
        seat: Seat,
        /// Where from.
        source: Source,
        /// The card (from the stock: secret from the others until the game ends).
        #[schema(value_type = Option<Card>)]
        card: Card,
    },
    /// The drawn card went into the grid; the replaced card onto the discard pile.
    CardSwapped {
        /// Who swapped.
        seat: Seat,
        /// Where.
        position: Position,
        /// The card placed.
        card: Card,
        /// The card it replaced, now on the discard pile.
        replaced: Card,
    },
    /// The drawn card went onto the discard pile.
    CardDiscarded {
        /// Who discarded.
        seat: Seat,
        /// The card.
        card: Card,
    },
    /// A face-down card was turned face up after a discard.
    CardFlipped {
        /// Who flipped.
        seat: Seat,
        /// Where.
        position: Position,
        /// The card turned up.
        card: Card,
    },
    /// The optional flip was declined.
    FlipDeclined {
        /// Who passed.
        seat: Seat,
    },
    /// The discard pile but its top became the new stock.
    StockReshuffled {
        /// The hole.
        hole: u8,
        /// The reshuffle number in this hole, from 1.
        shuffle: u32,
        /// The new stock, top first (secret until the game ends).
        #[schema(value_type = Option<Vec<Card>>)]
        order: Vec<Card>,
    },
    /// A hole was scored.
    HoleEnded {
        /// The hole.
        hole: u8,
        /// Why it ended.
        reason: EndReason,
        /// Each seat's six cards.
        #[schema(value_type = Vec<Vec<Card>>)]
        grids: Vec<[Card; 6]>,
        /// Each seat's score.
        scores: Vec<i32>,
    },
    /// The last hole was scored.
    GameEnded {
        /// Each seat's total.
        totals: Vec<i32>,
        /// The seats with the lowest total.
        winners: Vec<Seat>,
        /// The server seed, lowercase hex.
        seed: String,
    },
}

/// Serde for a full deck as a list of 52 codes (serde derives stop at arrays of 32).
mod deck_serde {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::Card;

    pub fn serialize<S: Serializer>(deck: &[Card; 52], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(deck)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<[Card; 52], D::Error> {
        let cards = Vec::<Card>::deserialize(deserializer)?;
        let len = cards.len();
        cards
            .try_into()
            .map_err(|_| serde::de::Error::invalid_length(len, &"52 cards"))
    }
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/// Why a command is refused. [`RuleError::code`] is the stable machine-readable code, `Display` a
/// sentence for people that names only cards the caller may see (the HTTP layer decides the
/// status).
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum RuleError {
    /// A command other than `Create` on a game that does not exist.
    #[error("There is no such game.")]
    NotCreated,
    /// `Create` on a game that exists.
    #[error("This game already exists.")]
    AlreadyCreated,
    /// Every seat is taken.
    #[error("Every seat of this game is taken.")]
    GameFull,
    /// A move before every seat is taken.
    #[error("The game has not started: seats are still free.")]
    GameNotStarted,
    /// A move after the last hole.
    #[error("The game is finished.")]
    GameFinished,
    /// A move by a seat the game does not have.
    #[error("This game has no seat {0}.")]
    NoSuchSeat(Seat),
    /// Another seat is to play.
    #[error("It is seat {current}'s turn, not seat {seat}'s.")]
    NotYourTurn {
        /// Who tried.
        seat: Seat,
        /// Who is to play.
        current: Seat,
    },
    /// Nobody is to play, or the stage takes no move of this type.
    #[error("You cannot {kind} now: {}.", stage_phrase(.stage))]
    WrongStage {
        /// The move tried.
        kind: MoveKind,
        /// The stage.
        stage: Option<Stage>,
    },
    /// The seat already revealed its two cards this hole.
    #[error("Seat {0} has already revealed its two cards: wait for the others.")]
    AlreadyRevealed(Seat),
    /// A position outside 0..5.
    #[error("Position {0} is out of range: positions are 0 to 5.")]
    PositionOutOfRange(i64),
    /// A reveal naming the same position twice.
    #[error("A reveal names two different positions, not position {0} twice.")]
    DuplicatePositions(Position),
    /// A reveal naming other than two positions.
    #[error("A reveal names exactly two positions, not {0}.")]
    InvalidReveal(usize),
    /// A flip of a face-up card.
    #[error("The card at position {0} is already face up.")]
    PositionAlreadyRevealed(Position),
    /// A discard of a card taken from the discard pile.
    #[error("You took the {0} from the discard pile: you must swap it into your grid.")]
    MustSwapDiscardDraw(Card),
    /// A pass under `flip_after_discard: always`.
    #[error("The rules require a flip after a discard: turn one of your face-down cards face up.")]
    FlipRequired,
    /// A name that breaks the rules for names.
    #[error("Invalid name: {0}.")]
    InvalidName(String),
    /// A client seed that breaks the rules for client seeds.
    #[error("Invalid client seed: {0}.")]
    InvalidClientSeed(String),
    /// A deck that is not a permutation of the 52 cards.
    #[error("Invalid deck: {0}.")]
    InvalidDeck(String),
    /// Seats, holes or rules out of range.
    #[error("Invalid game options: {0}.")]
    InvalidGameOptions(String),
}

fn stage_phrase(stage: &Option<Stage>) -> &'static str {
    match stage {
        None => "the game has not started",
        Some(Stage::Reveal) => "nobody's turn has started, every player first reveals two cards",
        Some(Stage::Draw) => "the turn starts with a draw",
        Some(Stage::Place) => {
            "the drawn card must be swapped, or discarded if it came from the stock"
        }
        Some(Stage::Flip) => "the turn ends with a flip of a face-down card, or a pass if allowed",
        Some(Stage::HoleOver) => "the hole is over",
    }
}

impl RuleError {
    /// The stable snake_case code of API.md's problem documents.
    pub const fn code(&self) -> &'static str {
        match self {
            RuleError::NotCreated => "not_found",
            RuleError::AlreadyCreated => "game_exists",
            RuleError::GameFull => "game_full",
            RuleError::GameNotStarted => "game_not_started",
            RuleError::GameFinished => "game_finished",
            RuleError::NoSuchSeat(_) => "no_such_seat",
            RuleError::NotYourTurn { .. } => "not_your_turn",
            RuleError::WrongStage { .. } => "wrong_stage",
            RuleError::AlreadyRevealed(_) => "already_revealed",
            RuleError::PositionOutOfRange(_) => "position_out_of_range",
            RuleError::DuplicatePositions(_) => "duplicate_positions",
            RuleError::InvalidReveal(_) => "invalid_reveal",
            RuleError::PositionAlreadyRevealed(_) => "position_already_revealed",
            RuleError::MustSwapDiscardDraw(_) => "must_swap_discard_draw",
            RuleError::FlipRequired => "flip_required",
            RuleError::InvalidName(_) => "invalid_name",
            RuleError::InvalidClientSeed(_) => "invalid_client_seed",
            RuleError::InvalidDeck(_) => "invalid_deck",
            RuleError::InvalidGameOptions(_) => "invalid_game_options",
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Rule checks shared by decide and legal_moves
// ---------------------------------------------------------------------------------------------

/// The game's state, whose turn and the stage, for a move of type `kind` by `seat`.
fn check_turn(state: &State, seat: Seat, kind: MoveKind) -> Result<(), RuleError> {
    if state.game_id.is_none() {
        return Err(RuleError::NotCreated);
    }
    match state.status {
        Status::Waiting => return Err(RuleError::GameNotStarted),
        Status::Finished => return Err(RuleError::GameFinished),
        Status::Playing => {}
    }
    let player = state
        .players
        .get(usize::from(seat))
        .ok_or(RuleError::NoSuchSeat(seat))?;
    let wrong_stage = RuleError::WrongStage {
        kind,
        stage: state.stage,
    };
    match state.stage {
        Some(Stage::Reveal) if kind != MoveKind::Reveal => Err(wrong_stage),
        Some(Stage::Reveal) if player.revealed => Err(RuleError::AlreadyRevealed(seat)),
        Some(Stage::Reveal) => Ok(()),
        Some(stage @ (Stage::Draw | Stage::Place | Stage::Flip)) => match state.current_seat {
            Some(current) if current != seat => Err(RuleError::NotYourTurn { seat, current }),
            Some(_) if stage_takes(stage, kind) => Ok(()),
            _ => Err(wrong_stage),
        },
        Some(Stage::HoleOver) | None => Err(wrong_stage),
    }
}

/// Whether `stage` takes moves of type `kind`.
const fn stage_takes(stage: Stage, kind: MoveKind) -> bool {
    matches!(
        (stage, kind),
        (Stage::Reveal, MoveKind::Reveal)
            | (Stage::Draw, MoveKind::Draw)
            | (Stage::Place, MoveKind::Swap | MoveKind::Discard)
            | (Stage::Flip, MoveKind::Flip | MoveKind::Pass)
    )
}

/// The values of a move that passed [`check_turn`].
fn check_values(state: &State, seat: Seat, mv: &Move) -> Result<(), RuleError> {
    let player = &state.players[usize::from(seat)];
    match *mv {
        Move::Reveal { positions: [p, q] } if p == q => Err(RuleError::DuplicatePositions(p)),
        Move::Discard => match state.drawn {
            Some(Drawn {
                source: Source::Discard,
                card,
                ..
            }) => Err(RuleError::MustSwapDiscardDraw(card)),
            _ => Ok(()),
        },
        Move::Flip { position } if player.face_up[position.index()] => {
            Err(RuleError::PositionAlreadyRevealed(position))
        }
        Move::Pass if state.rules.flip_after_discard == FlipRule::Always => {
            Err(RuleError::FlipRequired)
        }
        _ => Ok(()),
    }
}

/// Whether a discard by `seat` is followed by a flip stage.
fn flip_follows(state: &State, seat: Seat) -> bool {
    state.rules.flip_after_discard != FlipRule::Never
        && !state.players[usize::from(seat)].grid_complete()
}

/// What happens when `seat`'s turn ends, `completed` telling whether its grid is now all face up.
enum TurnEnd {
    Next {
        seat: Seat,
        final_turns_left: Option<u8>,
    },
    HoleOver(EndReason),
}

/// The end of a turn, from the counters of the state as they were during the turn.
fn turn_end(state: &State, seat: Seat, completed: bool) -> TurnEnd {
    let final_turns_left = match state.final_turns_left {
        Some(left) => Some(left.saturating_sub(1)),
        None if completed && state.rules.final_turns => Some(state.seats.saturating_sub(1)),
        None => None,
    };
    if (completed && !state.rules.final_turns) || final_turns_left == Some(0) {
        TurnEnd::HoleOver(EndReason::GridComplete)
    } else if state.turns + 1 >= state.rules.max_turns_per_hole {
        // A grid that is complete (now, or before the final turns the cap cuts short) is why
        // the hole ends: the cap only guarantees an end where no grid would complete.
        TurnEnd::HoleOver(if completed || final_turns_left.is_some() {
            EndReason::GridComplete
        } else {
            EndReason::TurnCap
        })
    } else {
        TurnEnd::Next {
            seat: (seat + 1) % state.seats.max(1),
            final_turns_left,
        }
    }
}

/// Every candidate move of type `kind`, of valid shape (reveal: the pairs `p < q`).
fn for_each_candidate(kind: MoveKind, mut f: impl FnMut(Move)) {
    match kind {
        MoveKind::Reveal => {
            for (i, &p) in Position::ALL.iter().enumerate() {
                for &q in &Position::ALL[i + 1..] {
                    f(Move::Reveal { positions: [p, q] });
                }
            }
        }
        MoveKind::Draw => {
            f(Move::Draw {
                source: Source::Stock,
            });
            f(Move::Draw {
                source: Source::Discard,
            });
        }
        MoveKind::Swap => Position::ALL
            .iter()
            .for_each(|&position| f(Move::Swap { position })),
        MoveKind::Discard => f(Move::Discard),
        MoveKind::Flip => Position::ALL
            .iter()
            .for_each(|&position| f(Move::Flip { position })),
        MoveKind::Pass => f(Move::Pass),
    }
}

/// The moves `seat` may make now, inline: what [`decide`] accepts (a reveal listed as `p < q`).
pub fn legal_move_list(state: &State, seat: Seat) -> MoveList {
    let mut list = MoveList::new();
    let Some(stage) = state.stage else {
        return list;
    };
    for kind in MoveKind::ALL {
        // `stage_takes` is implied by `check_turn`: testing it first only saves time.
        if stage_takes(stage, kind) && check_turn(state, seat, kind).is_ok() {
            for_each_candidate(kind, |mv| {
                if check_values(state, seat, &mv).is_ok() {
                    list.push(mv);
                }
            });
        }
    }
    list
}

/// The moves `seat` may make now (empty when it may not move), as listed in its view.
pub fn legal_moves(state: &State, seat: Seat) -> Vec<Move> {
    legal_move_list(state, seat).to_vec()
}

// ---------------------------------------------------------------------------------------------
// decide
// ---------------------------------------------------------------------------------------------

/// Checks `command` against `state` and returns the events it causes, in log order.
///
/// `secrets` is a separate argument because the server seed must stay secret until the game
/// ends, while `State` is rebuilt from the public log and so may hold nothing secret that the
/// log does not. Only the commands that deal a hole, reshuffle the stock or end the game read it
/// (the dealt order, the reshuffled order and the seed then go into the events, so [`apply`]
/// never needs it).
pub fn decide(
    state: &State,
    command: &Command,
    secrets: &Secrets,
) -> Result<Vec<Event>, RuleError> {
    match command {
        Command::Create {
            game_id,
            seats,
            holes,
            rules,
            commitment,
            stacked,
        } => decide_create(state, *game_id, *seats, *holes, rules, commitment, *stacked),
        Command::Join {
            name,
            bot,
            client_seed,
        } => decide_join(state, name, *bot, client_seed, secrets),
        Command::Play { seat, mv } => decide_play(state, *seat, mv, secrets),
    }
}

fn decide_create(
    state: &State,
    game_id: Uuid,
    seats: u8,
    holes: u8,
    rules: &Rules,
    commitment: &str,
    stacked: bool,
) -> Result<Vec<Event>, RuleError> {
    if state.game_id.is_some() {
        return Err(RuleError::AlreadyCreated);
    }
    check_game_size(i64::from(seats), i64::from(holes))?;
    let rules = Rules::resolve(
        seats,
        Some(rules.final_turns),
        Some(rules.flip_after_discard),
        Some(rules.max_turns_per_hole),
    )?;
    Ok(vec![Event::GameCreated {
        game_id,
        format: LOG_FORMAT.to_owned(),
        seats,
        holes,
        rules,
        commitment: commitment.to_owned(),
        stacked,
    }])
}

/// The seat a join would take, or why the game takes no more players. Checked before the
/// joiner's name and seed, as API.md ranks a conflict with the game's state (409) before a bad
/// value (422).
pub fn check_join(state: &State) -> Result<Seat, RuleError> {
    if state.game_id.is_none() {
        return Err(RuleError::NotCreated);
    }
    let seat = state.players.len();
    if state.status != Status::Waiting || seat >= usize::from(state.seats) {
        return Err(RuleError::GameFull);
    }
    Ok(seat as Seat)
}

fn decide_join(
    state: &State,
    name: &PlayerName,
    bot: Option<BotKind>,
    client_seed: &ClientSeed,
    secrets: &Secrets,
) -> Result<Vec<Event>, RuleError> {
    let seat = usize::from(check_join(state)?);
    let mut events = vec![Event::PlayerJoined {
        seat: seat as Seat,
        name: name.clone(),
        bot,
        client_seed: client_seed.clone(),
    }];
    if seat + 1 == usize::from(state.seats) {
        let client_seeds = state
            .players
            .iter()
            .map(|p| p.client_seed.as_str())
            .chain([client_seed.as_str()]);
        let seed = shuffle::effective_seed(&secrets.server_seed, client_seeds);
        events.push(deal(state, 1, &seed, secrets));
    }
    Ok(events)
}

/// The effective seed `S` of a game whose seats are all taken.
fn seed_of(state: &State, secrets: &Secrets) -> [u8; 32] {
    shuffle::effective_seed(
        &secrets.server_seed,
        state.players.iter().map(|p| p.client_seed.as_str()),
    )
}

/// The `hole_dealt` event of `hole`: an explicit deck of a stacked game, else shuffle 0 under `seed`.
fn deal(state: &State, hole: u8, seed: &[u8; 32], secrets: &Secrets) -> Event {
    let explicit = secrets
        .decks
        .get(usize::from(hole) - 1)
        .filter(|_| state.stacked);
    let deck = match explicit {
        Some(deck) => *deck,
        None => shuffle::deal_order(seed, u32::from(hole)),
    };
    Event::HoleDealt {
        hole,
        dealer: (hole - 1) % state.seats,
        discard: deck[6 * usize::from(state.seats)],
        deck,
    }
}

fn decide_play(
    state: &State,
    seat: Seat,
    mv: &Move,
    secrets: &Secrets,
) -> Result<Vec<Event>, RuleError> {
    check_turn(state, seat, mv.kind())?;
    check_values(state, seat, mv)?;
    let player = &state.players[usize::from(seat)];
    let wrong_stage = || RuleError::WrongStage {
        kind: mv.kind(),
        stage: state.stage,
    };
    let mut events = Vec::with_capacity(3);
    match *mv {
        Move::Reveal { positions } => events.push(Event::CardsRevealed {
            seat,
            positions,
            cards: positions.map(|p| player.grid[p.index()]),
        }),
        Move::Draw { source } => {
            let card = match (source, state.stock.last()) {
                (Source::Stock, Some(&card)) => card,
                (Source::Stock, None) => {
                    let (_, below_top) = state.discard.split_last().ok_or_else(wrong_stage)?;
                    let shuffle = state.shuffles + 1;
                    let seed = seed_of(state, secrets);
                    let order =
                        shuffle::reshuffle(&seed, u32::from(state.hole), shuffle, below_top);
                    let card = *order.first().ok_or_else(wrong_stage)?;
                    events.push(Event::StockReshuffled {
                        hole: state.hole,
                        shuffle,
                        order,
                    });
                    card
                }
                (Source::Discard, _) => *state.discard.last().ok_or_else(wrong_stage)?,
            };
            events.push(Event::CardDrawn { seat, source, card });
        }
        Move::Swap { position } => {
            let drawn = state.drawn.ok_or_else(wrong_stage)?;
            events.push(Event::CardSwapped {
                seat,
                position,
                card: drawn.card,
                replaced: player.grid[position.index()],
            });
            let mut grid = player.grid;
            grid[position.index()] = drawn.card;
            let completed =
                player.face_up_count() + usize::from(!player.face_up[position.index()]) == 6;
            end_turn(state, seat, grid, completed, secrets, &mut events);
        }
        Move::Discard => {
            let drawn = state.drawn.ok_or_else(wrong_stage)?;
            events.push(Event::CardDiscarded {
                seat,
                card: drawn.card,
            });
            if !flip_follows(state, seat) {
                end_turn(state, seat, player.grid, false, secrets, &mut events);
            }
        }
        Move::Flip { position } => {
            events.push(Event::CardFlipped {
                seat,
                position,
                card: player.grid[position.index()],
            });
            let completed = player.face_up_count() + 1 == 6;
            end_turn(state, seat, player.grid, completed, secrets, &mut events);
        }
        Move::Pass => {
            events.push(Event::FlipDeclined { seat });
            end_turn(state, seat, player.grid, false, secrets, &mut events);
        }
    }
    Ok(events)
}

/// Adds what follows the end of `seat`'s turn, `grid` being its grid after the turn: when the
/// hole is over, `hole_ended` and then the next deal or `game_ended`.
fn end_turn(
    state: &State,
    seat: Seat,
    grid: [Card; 6],
    completed: bool,
    secrets: &Secrets,
    events: &mut Vec<Event>,
) {
    let TurnEnd::HoleOver(reason) = turn_end(state, seat, completed) else {
        return;
    };
    let grids: Vec<[Card; 6]> = state
        .players
        .iter()
        .enumerate()
        .map(|(s, p)| if s == usize::from(seat) { grid } else { p.grid })
        .collect();
    let scores: Vec<i32> = grids.iter().map(grid_score).collect();
    let totals: Vec<i32> = state
        .players
        .iter()
        .zip(&scores)
        .map(|(p, score)| p.total + score)
        .collect();
    events.push(Event::HoleEnded {
        hole: state.hole,
        reason,
        grids,
        scores,
    });
    if state.hole < state.holes {
        events.push(deal(
            state,
            state.hole + 1,
            &seed_of(state, secrets),
            secrets,
        ));
    } else {
        let best = totals.iter().copied().min().unwrap_or_default();
        let winners = (0..state.seats)
            .filter(|&s| totals[usize::from(s)] == best)
            .collect();
        events.push(Event::GameEnded {
            totals,
            winners,
            seed: hex::encode(secrets.server_seed),
        });
    }
}

// ---------------------------------------------------------------------------------------------
// apply
// ---------------------------------------------------------------------------------------------

/// Folds one event, logged at `at`, into the state. Infallible on the events [`decide`] produced
/// for this state (it trusts them: an event out of place is applied as far as it makes sense).
pub fn apply(state: &mut State, event: &Event, at: Timestamp) {
    state.version += 1;
    match event {
        Event::GameCreated {
            game_id,
            seats,
            holes,
            rules,
            commitment,
            stacked,
            ..
        } => {
            state.game_id = Some(*game_id);
            state.seats = *seats;
            state.holes = *holes;
            state.rules = *rules;
            state.commitment.clone_from(commitment);
            state.stacked = *stacked;
            state.status = Status::Waiting;
            state.players = Vec::with_capacity(usize::from(*seats));
        }
        Event::PlayerJoined {
            name,
            bot,
            client_seed,
            ..
        } => state.players.push(Player {
            name: name.clone(),
            bot: *bot,
            client_seed: client_seed.clone(),
            grid: [Card::new(Rank::Ace, Suit::Spades); 6],
            face_up: [false; 6],
            revealed: false,
            hole_scores: Vec::with_capacity(usize::from(state.holes)),
            total: 0,
        }),
        Event::HoleDealt {
            hole, dealer, deck, ..
        } => apply_deal(state, *hole, *dealer, deck),
        Event::CardsRevealed {
            seat, positions, ..
        } => {
            if let Some(player) = state.players.get_mut(usize::from(*seat)) {
                for p in positions {
                    player.face_up[p.index()] = true;
                }
                player.revealed = true;
            }
            if state.players.iter().all(|p| p.revealed) {
                state.stage = Some(Stage::Draw);
                state.current_seat = Some((state.dealer + 1) % state.seats.max(1));
                state.turn_started_at = Some(at);
            }
        }
        Event::CardDrawn { seat, source, card } => {
            match source {
                Source::Stock => state.stock.pop(),
                Source::Discard => state.discard.pop(),
            };
            state.drawn = Some(Drawn {
                seat: *seat,
                source: *source,
                card: *card,
            });
            state.stage = Some(Stage::Place);
        }
        Event::StockReshuffled { shuffle, order, .. } => {
            let top = state.discard.pop();
            state.discard.clear();
            state.discard.extend(top);
            state.stock.clear();
            state.stock.extend(order.iter().rev());
            state.shuffles = *shuffle;
        }
        Event::CardSwapped {
            seat,
            position,
            card,
            replaced,
        } => {
            if let Some(player) = state.players.get_mut(usize::from(*seat)) {
                player.grid[position.index()] = *card;
                player.face_up[position.index()] = true;
            }
            state.discard.push(*replaced);
            state.drawn = None;
            finish_turn(state, *seat, at);
        }
        Event::CardDiscarded { seat, card } => {
            state.discard.push(*card);
            state.drawn = None;
            if usize::from(*seat) < state.players.len() && flip_follows(state, *seat) {
                state.stage = Some(Stage::Flip);
            } else {
                finish_turn(state, *seat, at);
            }
        }
        Event::CardFlipped { seat, position, .. } => {
            if let Some(player) = state.players.get_mut(usize::from(*seat)) {
                player.face_up[position.index()] = true;
            }
            finish_turn(state, *seat, at);
        }
        Event::FlipDeclined { seat } => finish_turn(state, *seat, at),
        Event::HoleEnded {
            hole,
            reason,
            grids,
            scores,
        } => {
            for ((player, grid), score) in state.players.iter_mut().zip(grids).zip(scores) {
                player.grid = *grid;
                player.face_up = [true; 6];
                player.hole_scores.push(*score);
                player.total += score;
            }
            state.last_hole = Some(HoleResult {
                hole: *hole,
                reason: *reason,
                grids: grids.clone(),
                scores: scores.clone(),
            });
            state.stage = Some(Stage::HoleOver);
            state.current_seat = None;
            state.turn_started_at = None;
            state.drawn = None;
        }
        Event::GameEnded { winners, seed, .. } => {
            state.status = Status::Finished;
            state.winners = Some(winners.clone());
            state.seed = Some(seed.clone());
            state.stage = Some(Stage::HoleOver);
            state.current_seat = None;
            state.turn_started_at = None;
        }
    }
}

/// Deals `deck` for `hole`: card `d < 6n` to seat `(dealer + 1 + d) mod n` at position `d div n`,
/// card `6n` to the discard pile, the rest to the stock (element `6n + 1` on top).
fn apply_deal(state: &mut State, hole: u8, dealer: Seat, deck: &[Card; 52]) {
    let n = state.players.len().max(1);
    for (d, &card) in deck[..6 * n].iter().enumerate() {
        let seat = (usize::from(dealer) + 1 + d) % n;
        if let Some(player) = state.players.get_mut(seat) {
            player.grid[d / n] = card;
        }
    }
    for player in &mut state.players {
        player.face_up = [false; 6];
        player.revealed = false;
    }
    state.discard.clear();
    state.discard.push(deck[6 * n]);
    state.stock.clear();
    state.stock.extend(deck[6 * n + 1..].iter().rev());
    state.status = Status::Playing;
    state.hole = hole;
    state.dealer = dealer;
    state.stage = Some(Stage::Reveal);
    state.current_seat = None;
    state.turn_started_at = None;
    state.drawn = None;
    state.turns = 0;
    state.final_turns_left = None;
    state.shuffles = 0;
}

/// Ends `seat`'s turn: the next seat draws, or the hole is over (`hole_ended` follows).
fn finish_turn(state: &mut State, seat: Seat, at: Timestamp) {
    let completed = state
        .players
        .get(usize::from(seat))
        .is_some_and(Player::grid_complete);
    match turn_end(state, seat, completed) {
        TurnEnd::Next {
            seat,
            final_turns_left,
        } => {
            state.final_turns_left = final_turns_left;
            state.current_seat = Some(seat);
            state.stage = Some(Stage::Draw);
            state.turn_started_at = Some(at);
        }
        TurnEnd::HoleOver(_) => {
            state.stage = Some(Stage::HoleOver);
            state.current_seat = None;
            state.turn_started_at = None;
        }
    }
    state.turns += 1;
}
