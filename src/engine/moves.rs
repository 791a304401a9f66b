//! What players ask for: a [`Move`] (as a client sends it: [`MoveRequest`], checked by
//! [`parse_move`](super::parse_move)) and its [`Source`], and the [`Command`]s the game takes.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::bot_kind::BotKind;
use super::cards::{Cells, MAX_CELLS, Position};
use super::error::RuleError;
use super::inputs::{ClientSeed, PlayerName};
use super::rules::Rules;
use super::stage::{MoveKind, Seat};
use super::time::Timestamp;

/// Where a card is drawn from.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The face-down stock: only the drawer sees the card.
    Stock,
    /// The face-up discard pile: the card is public.
    Discard,
}

/// A move, in the format of docs/API.md (`{"type": "reveal", "positions": [p, q]}`, ...).
///
/// Positions are [`Position`]s, so a `Move` never holds an out-of-range index: clients' moves
/// arrive as a [`MoveRequest`] and become a `Move` through [`parse_move`](super::parse_move) (or `TryFrom`), which
/// reports `position_out_of_range` as a [`RuleError`]. Deserializing a `Move` directly goes
/// through [`MoveRequest`] too (so unknown fields are refused), and reports such errors as plain
/// serde errors.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case", try_from = "MoveRequest")]
#[schema(description = "A move the caller may make now, in the format that POST /moves takes.")]
pub enum Move {
    /// The initial reveal of the player's own face-down cards: `initial_reveal` of them.
    Reveal {
        /// `initial_reveal` distinct positions (two by default).
        #[schema(value_type = Vec<Position>, min_items = 1, max_items = 8)]
        positions: Cells<Position>,
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
    /// Knocks instead of drawing (rule `knock`): every other player has one more turn, then the
    /// hole ends.
    Knock,
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
            Move::Knock => MoveKind::Knock,
        }
    }
}

/// A move as a client sends it: the shape of [`Move`] with positions still raw integers, so that
/// a request of the right shape parses (a 400 otherwise) and its values are judged by
/// [`parse_move`](super::parse_move) (a 422 `position_out_of_range` / `invalid_reveal`). `discard` and `pass` are
/// empty struct variants so that serde rejects unknown fields on them too.
///
/// The OpenAPI document describes the request body as a [`Move`]: the JSON is the same.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum MoveRequest {
    /// `{"type": "reveal", "positions": [p, q, ...]}`
    Reveal {
        /// Exactly `initial_reveal` distinct positions of the grid.
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
    /// `{"type": "knock"}`
    Knock {},
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
            MoveRequest::Knock {} => MoveKind::Knock,
        }
    }
}

impl TryFrom<&MoveRequest> for Move {
    type Error = RuleError;

    /// Checks the values only, against the largest grid: positions 0..9, at most 8 in a reveal
    /// ([`MoveRequest::to_move`] checks them against a game's grid).
    fn try_from(request: &MoveRequest) -> Result<Move, RuleError> {
        request.to_move(MAX_CELLS, None)
    }
}

impl MoveRequest {
    /// The move requested, in a game of `cells` cells whose reveal names `reveal` positions
    /// (`None`: from 1 to `cells` − 1). Fails with `position_out_of_range` or `invalid_reveal`.
    pub fn to_move(&self, cells: usize, reveal: Option<u8>) -> Result<Move, RuleError> {
        let position = |p: i64| Position::within(p, cells);
        Ok(match self {
            MoveRequest::Reveal { positions } => {
                let wanted = reveal.map_or(1..cells, |n| usize::from(n)..usize::from(n) + 1);
                if !wanted.contains(&positions.len()) {
                    return Err(RuleError::InvalidReveal {
                        given: positions.len(),
                        wanted: reveal.unwrap_or(2),
                    });
                }
                let positions = positions
                    .iter()
                    .map(|&p| position(p))
                    .collect::<Result<Vec<Position>, RuleError>>()?;
                Move::Reveal {
                    positions: Cells::from_slice(&positions).expect("fewer than 9 positions"),
                }
            }
            MoveRequest::Draw { source } => Move::Draw { source: *source },
            MoveRequest::Swap { position: p } => Move::Swap {
                position: position(*p)?,
            },
            MoveRequest::Discard {} => Move::Discard,
            MoveRequest::Flip { position: p } => Move::Flip {
                position: position(*p)?,
            },
            MoveRequest::Pass {} => Move::Pass,
            MoveRequest::Knock {} => Move::Knock,
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
        /// Whether the game's end updates its seats' ratings (never with `stacked`).
        rated: bool,
    },
    /// Takes the next free seat; taking the last one deals hole 1.
    Join {
        /// The player's name.
        name: PlayerName,
        /// The strategy, for a bot.
        bot: Option<BotKind>,
        /// The player's entropy (`""` for none and for bots).
        client_seed: ClientSeed,
        /// The account the seat is bound to, if any (a username).
        account: Option<String>,
    },
    /// A move by `seat`.
    Play {
        /// Who moves.
        seat: Seat,
        /// The move.
        mv: Move,
    },
    /// The player of `seat` leaves a running game: the greedy bot takes the seat.
    Leave {
        /// Who leaves.
        seat: Seat,
    },
    /// The greedy bot takes `seat`, whose turn timeout has passed at `now`.
    TimeOut {
        /// The seat that did not play in time.
        seat: Seat,
        /// The time of the command: the deadline must have passed by then.
        now: Timestamp,
    },
}
