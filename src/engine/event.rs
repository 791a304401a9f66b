//! [`Event`]: what the log records, one entry's `type` and `data`.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::bot_kind::BotKind;
use super::cards::{Card, Cells, Position};
use super::inputs::{ClientSeed, PlayerName};
use super::moves::Source;
use super::rules::Rules;
use super::stage::Seat;
use super::state::EndReason;

/// One log entry's `type` and `data`: serialized as `{"type": "card_drawn", "data": {...}}`.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum Event {
    /// The game exists; seats are free.
    GameCreated {
        /// The game's id.
        game_id: Uuid,
        /// [`LOG_FORMAT`](super::LOG_FORMAT), or [`LOG_FORMAT_2`](super::LOG_FORMAT_2) when a
        /// house-rule variant is away from its default.
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
        /// Whether the game updates its seats' ratings when it ends; absent when it does not,
        /// so that the logs of unrated games are as earlier releases wrote them.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        rated: bool,
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
        /// The username of the account the seat is bound to; absent for a seat without one, so
        /// that the logs of games without accounts are as earlier releases wrote them.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        account: Option<String>,
    },
    /// A hole was dealt.
    HoleDealt {
        /// The hole, from 1.
        hole: u8,
        /// The dealer.
        dealer: Seat,
        /// The card that starts the discard pile.
        discard: Card,
        /// The game's 52 (54 with jokers) cards in dealt order (secret until the game ends).
        #[schema(value_type = Option<Vec<Card>>)]
        deck: Vec<Card>,
    },
    /// A seat made its initial reveal.
    CardsRevealed {
        /// Who revealed.
        seat: Seat,
        /// The positions (`initial_reveal` of them).
        #[schema(value_type = Vec<Position>)]
        positions: Cells<Position>,
        /// The cards, in the order of `positions`.
        #[schema(value_type = Vec<Card>)]
        cards: Cells<Card>,
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
    /// A seat knocked (rule `knock`): every other seat has one more turn, then the hole ends.
    Knocked {
        /// Who knocked.
        seat: Seat,
    },
    /// A bot took a seat for the rest of the game: after a turn timeout, or the player's leave.
    BotTookSeat {
        /// The seat taken.
        seat: Seat,
        /// The strategy that plays it from now on (always `greedy`).
        bot: BotKind,
        /// Why.
        reason: TakeoverReason,
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
        /// Each seat's cards, row-major.
        #[schema(value_type = Vec<Vec<Card>>)]
        grids: Vec<Cells<Card>>,
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

impl Event {
    /// The event's `type` in the log (`"game_created"`, `"card_drawn"`, ...).
    pub const fn kind(&self) -> &'static str {
        match self {
            Event::GameCreated { .. } => "game_created",
            Event::PlayerJoined { .. } => "player_joined",
            Event::HoleDealt { .. } => "hole_dealt",
            Event::CardsRevealed { .. } => "cards_revealed",
            Event::CardDrawn { .. } => "card_drawn",
            Event::CardSwapped { .. } => "card_swapped",
            Event::CardDiscarded { .. } => "card_discarded",
            Event::CardFlipped { .. } => "card_flipped",
            Event::FlipDeclined { .. } => "flip_declined",
            Event::Knocked { .. } => "knocked",
            Event::BotTookSeat { .. } => "bot_took_seat",
            Event::StockReshuffled { .. } => "stock_reshuffled",
            Event::HoleEnded { .. } => "hole_ended",
            Event::GameEnded { .. } => "game_ended",
        }
    }
}

/// Why a bot took a seat.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TakeoverReason {
    /// The seat did not play within the game's `turn_timeout_s`.
    TurnTimeout,
    /// The player left the game.
    Left,
}

impl TakeoverReason {
    /// The reason's name in JSON (`"turn_timeout"`, `"left"`).
    pub const fn name(self) -> &'static str {
        match self {
            TakeoverReason::TurnTimeout => "turn_timeout",
            TakeoverReason::Left => "left",
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::{Value, json};

    use super::*;

    #[test]
    fn a_takeover_reason_is_named_as_in_json() {
        for reason in [TakeoverReason::TurnTimeout, TakeoverReason::Left] {
            assert_eq!(serde_json::to_value(reason).unwrap(), reason.name());
        }
    }

    #[test]
    fn the_kind_of_every_event_is_its_type_in_the_log() {
        let logs = [
            include_str!("../../tests/vectors/log_four_seats_bots.ndjson"),
            include_str!("../../tests/vectors/log_two_seats_reshuffles.ndjson"),
        ];
        let mut kinds = BTreeSet::new();
        for line in logs.iter().flat_map(|log| log.lines()) {
            let entry: Value = serde_json::from_str(line).unwrap();
            let logged = json!({"type": entry["type"], "data": entry["data"]});
            let event: Event = serde_json::from_value(logged.clone()).unwrap();
            assert_eq!(event.kind(), entry["type"]);
            assert_eq!(serde_json::to_value(&event).unwrap(), logged);
            kinds.insert(event.kind());
        }
        assert_eq!(kinds.len(), 12, "{kinds:?}");
    }
}
