//! The state of a game, hidden cards included ([`State`], its [`Player`]s, [`Status`], the
//! [`Drawn`] card, the last [`HoleResult`]): server-side only, rebuilt from the log by
//! [`apply`](fn@super::apply).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::bot_kind::BotKind;
use super::cards::{Card, Cells};
use super::inputs::{ClientSeed, PlayerName};
use super::moves::Source;
use super::rules::Rules;
use super::stage::{Seat, Stage};
use super::time::Timestamp;

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

impl Status {
    /// The status's name in JSON and in the store (`"waiting"`, `"playing"`, `"finished"`).
    pub const fn name(self) -> &'static str {
        match self {
            Status::Waiting => "waiting",
            Status::Playing => "playing",
            Status::Finished => "finished",
        }
    }
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
    /// A player knocked and every other player had one more turn.
    Knock,
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
    /// Each seat's cards (the grid's `cells`, row-major), in seat order.
    #[schema(value_type = Vec<Vec<Card>>)]
    pub grids: Vec<Cells<Card>>,
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
    /// The account the seat is bound to (a username); absent from the projections of seats
    /// without one, as earlier releases wrote them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// The cards of the current hole, row-major, face up or not (meaningless before the first
    /// deal).
    pub grid: Cells<Card>,
    /// Which of the cards are face up.
    pub face_up: Cells<bool>,
    /// Whether the player has made the initial reveal of this hole.
    pub revealed: bool,
    /// The score of each finished hole.
    pub hole_scores: Vec<i32>,
    /// The sum of `hole_scores`.
    pub total: i32,
}

impl Player {
    /// How many of the cards are face up.
    pub fn face_up_count(&self) -> usize {
        self.face_up.iter().filter(|&&up| up).count()
    }

    /// Whether all the cards are face up.
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
    /// Whether the game's end updates its seats' ratings.
    // Kept only when set, so that the projection of an unrated game is what it was before
    // ratings existed: check-db compares the two.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rated: bool,
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
    /// When the initial reveal of the current hole began (the deal), while it lasts, in a game
    /// with a turn timeout: the timeout of the seats still to reveal runs from it.
    // Kept only under a timeout, so that the state of any other game, and its stored projection,
    // is what it was before timeouts existed: check-db compares the two.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reveal_started_at: Option<Timestamp>,
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
    /// The seat that knocked in this hole, if one did (final turns are then under way).
    // Kept only when set, so that the stored projection of a game without knocks is what it
    // was before knocking existed: check-db compares the two.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knocked: Option<Seat>,
    /// Reshuffles done in this hole.
    pub shuffles: u32,
    /// The last finished hole.
    pub last_hole: Option<HoleResult>,
    /// The winning seats, once finished.
    pub winners: Option<Vec<Seat>>,
    /// The server seed in lowercase hex, once finished.
    pub seed: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_is_named_as_in_json() {
        for status in [Status::Waiting, Status::Playing, Status::Finished] {
            assert_eq!(serde_json::to_value(status).unwrap(), status.name());
        }
    }
}
