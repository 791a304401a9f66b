//! What a given viewer may see: the [`View`] of docs/API.md, the redaction of log events
//! ([`redact_event`]) and the bots' [`Observation`]. This is the only place that hides cards:
//! face-down cards (the owner's too), the stock, another seat's stock draw and, until the game
//! ends, the dealt and reshuffled orders.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

use super::bot_kind::BotKind;
use super::cards::{Card, Cells, GridShape};
use super::deadline::turn_deadline;
use super::event::Event;
use super::legal::{MoveList, legal_move_list, legal_moves};
use super::moves::{Move, Source};
use super::rules::Rules;
use super::stage::{Seat, Stage};
use super::state::{Drawn, HoleResult, State, Status};
use super::time::Timestamp;

/// Who is looking.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Viewer {
    /// Anyone: sees only public cards.
    Spectator,
    /// The player of this seat: also sees the card they drew from the stock.
    Seat(Seat),
}

/// A game as one viewer sees it (docs/API.md "Views").
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize, ToSchema)]
pub struct View {
    /// The game's id.
    pub id: Uuid,
    /// The `seq` of the last log entry.
    pub version: u64,
    /// `waiting`, `playing` or `finished`.
    pub status: Status,
    /// Whether explicit decks were given at creation.
    pub stacked: bool,
    /// Whether the game's end updates its accounts' ratings.
    #[serde(default)]
    pub rated: bool,
    /// `hex(SHA-256(server_seed))`.
    pub commitment: String,
    /// The rule options.
    pub rules: Rules,
    /// The grids' shape, so that clients can draw them: `players[].grid` lists `rows × columns`
    /// entries, row-major.
    pub grid_shape: GridSize,
    /// Number of seats.
    pub seats: u8,
    /// Number of holes.
    pub holes: u8,
    /// The current hole, from 1 (null while waiting).
    pub hole: Option<u8>,
    /// The dealer of the current hole (null while waiting).
    pub dealer: Option<Seat>,
    /// Who is to play (null during the reveal, between holes and once finished).
    pub current_seat: Option<Seat>,
    /// The stage of the current hole (null while waiting).
    pub stage: Option<Stage>,
    /// The top of the discard pile.
    pub discard_top: Option<Card>,
    /// Cards in the discard pile.
    pub discard_count: u32,
    /// Cards in the stock.
    pub stock_count: u32,
    /// The seats taken, in seat order.
    pub players: Vec<PlayerView>,
    /// The card drawn and not yet placed.
    pub drawn: Option<DrawnView>,
    /// The last finished hole.
    pub last_hole: Option<HoleResult>,
    /// When `current_seat` got the turn.
    pub turn_started_at: Option<Timestamp>,
    /// When the greedy bot takes over the seat(s) to play now, under `turn_timeout_s` (during
    /// the initial reveal, every seat still to reveal); null without a timeout or when nobody
    /// is to play.
    pub turn_deadline: Option<Timestamp>,
    /// The winning seats, once finished.
    pub winners: Option<Vec<Seat>>,
    /// The seat that knocked in the current hole (rule `knock`): the others are playing their
    /// last turns. Absent when nobody knocked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knocked: Option<Seat>,
    /// The viewer's seat (own view only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub you: Option<Seat>,
    /// The moves the viewer may make now (own view only; empty when it may not move).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legal_moves: Option<Vec<Move>>,
}

/// A grid's size: rows and columns.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize, ToSchema)]
pub struct GridSize {
    /// Rows (2 or 3).
    pub rows: u8,
    /// Columns (2 to 4).
    pub columns: u8,
}

impl From<GridShape> for GridSize {
    fn from(shape: GridShape) -> GridSize {
        GridSize {
            rows: shape.rows() as u8,
            columns: shape.columns() as u8,
        }
    }
}

/// One seat as a viewer sees it.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize, ToSchema)]
pub struct PlayerView {
    /// The seat.
    pub seat: Seat,
    /// The name.
    pub name: String,
    /// The strategy, for a bot.
    pub bot: Option<BotKind>,
    /// The account the seat is bound to (its username), if any; it stays when the bot takes
    /// the seat over.
    #[serde(default)]
    pub account: Option<String>,
    /// The client seed (public).
    pub client_seed: String,
    /// One entry a cell (six by default), row-major: the card when face up, null when face down.
    #[schema(value_type = Vec<Option<Card>>)]
    pub grid: Cells<Option<Card>>,
    /// Cards face up now.
    pub revealed_count: u8,
    /// The score of each finished hole.
    pub hole_scores: Vec<i32>,
    /// The sum of `hole_scores`.
    pub total: i32,
}

/// The card drawn and not yet placed, as a viewer sees it.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize, ToSchema)]
pub struct DrawnView {
    /// Who drew.
    pub seat: Seat,
    /// Where from.
    pub source: Source,
    /// The card: null for everyone but the drawer when it came from the stock.
    pub card: Option<Card>,
}

/// Whether `viewer` is `seat`.
fn is_seat(viewer: Viewer, seat: Seat) -> bool {
    viewer == Viewer::Seat(seat)
}

/// The view of `state` for `viewer`. A seat viewer's view adds `you` and `legal_moves`.
pub fn view(state: &State, viewer: Viewer) -> View {
    let started = state.stage.is_some();
    // A seat's replay of an entry from before it joined is still its view: it may not move yet.
    let you = match viewer {
        Viewer::Seat(seat) => Some(seat),
        Viewer::Spectator => None,
    };
    View {
        id: state.game_id.unwrap_or_default(),
        version: state.version,
        status: state.status,
        stacked: state.stacked,
        rated: state.rated,
        commitment: state.commitment.clone(),
        rules: state.rules,
        grid_shape: state.rules.grid.into(),
        seats: state.seats,
        holes: state.holes,
        hole: started.then_some(state.hole),
        dealer: started.then_some(state.dealer),
        current_seat: state.current_seat,
        stage: state.stage,
        discard_top: state.discard.last().copied(),
        discard_count: state.discard.len() as u32,
        stock_count: state.stock.len() as u32,
        players: player_views(state),
        drawn: state.drawn.map(|drawn| drawn_view(drawn, viewer)),
        last_hole: state.last_hole.clone(),
        turn_started_at: state.turn_started_at,
        turn_deadline: turn_deadline(state),
        winners: state.winners.clone(),
        knocked: state.knocked,
        you,
        legal_moves: you.map(|seat| seat_moves(state, seat)),
    }
}

/// Every seat as anyone sees it: face-up cards only (none before the first deal).
fn player_views(state: &State) -> Vec<PlayerView> {
    let started = state.stage.is_some();
    state
        .players
        .iter()
        .enumerate()
        .map(|(seat, p)| PlayerView {
            seat: seat as Seat,
            name: p.name.as_str().to_owned(),
            bot: p.bot,
            account: p.account.clone(),
            client_seed: p.client_seed.as_str().to_owned(),
            grid: Cells::from_fn(p.grid.len(), |i| {
                (started && p.face_up[i]).then_some(p.grid[i])
            }),
            revealed_count: if started { p.face_up_count() as u8 } else { 0 },
            hole_scores: p.hole_scores.clone(),
            total: p.total,
        })
        .collect()
}

/// The drawn card as `viewer` sees it: a card from the stock only by its drawer.
fn drawn_view(drawn: Drawn, viewer: Viewer) -> DrawnView {
    DrawnView {
        seat: drawn.seat,
        source: drawn.source,
        card: (drawn.source == Source::Discard || is_seat(viewer, drawn.seat))
            .then_some(drawn.card),
    }
}

/// The moves `seat` may make, as its own view lists them: a seat a bot took keeps its view, but
/// its moves are the bot's now.
fn seat_moves(state: &State, seat: Seat) -> Vec<Move> {
    match state.players.get(usize::from(seat)) {
        Some(player) if player.bot.is_some() => Vec::new(),
        _ => legal_moves(state, seat),
    }
}

/// The event as `viewer` may see it while the game runs: `None` when nothing in it must be
/// hidden from this viewer (send the event as it is), else its `{"type", "data"}` JSON with the
/// hidden fields set to `null`: `hole_dealt.deck`, `stock_reshuffled.order`, and the `card` of
/// another seat's `card_drawn` from the stock. Once the game is finished the log is public, and
/// its entries go out as they are, without this.
pub fn redact_event(event: &Event, viewer: Viewer) -> Option<Value> {
    let hidden = match event {
        Event::HoleDealt { .. } => "deck",
        Event::StockReshuffled { .. } => "order",
        Event::CardDrawn {
            seat,
            source: Source::Stock,
            ..
        } if !is_seat(viewer, *seat) => "card",
        _ => return None,
    };
    // Fail closed: an event that cannot be redacted is a bug to surface, never a leak.
    let mut json = serde_json::to_value(event).expect("events serialize to JSON");
    let field = json
        .get_mut("data")
        .and_then(|data| data.get_mut(hidden))
        .expect("the hidden field is part of the event's data");
    *field = Value::Null;
    Some(json)
}

/// What one seat may see, for a bot to choose a move: small, built without allocation (but for
/// the reveals of a large grid, see [`MoveList`]).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Observation {
    /// The bot's seat.
    pub seat: Seat,
    /// Number of seats.
    pub seats: u8,
    /// The rule options.
    pub rules: Rules,
    /// The stage of the hole.
    pub stage: Option<Stage>,
    /// Turns played in the hole so far.
    pub turns: u32,
    /// The bot's own grid: the card when face up, `None` when face down.
    pub grid: Cells<Option<Card>>,
    /// The top of the discard pile.
    pub discard_top: Option<Card>,
    /// The card the bot drew and has not yet placed.
    pub drawn: Option<(Source, Card)>,
    /// The moves the bot may make now.
    pub legal: MoveList,
    /// Every seat's grid as anyone sees it (face-up cards only), in seat order; entries past
    /// `seats` are empty.
    pub grids: [Cells<Option<Card>>; MAX_SEATS],
    /// The cards of the discard pile, as a set of canonical indexes (bit `i` for the card of
    /// index `i`): each was face up when it went there, so every seat has seen them.
    pub discard_set: u64,
    /// Cards in the stock.
    pub stock_count: u32,
    /// Whose turn it is.
    pub current_seat: Option<Seat>,
    /// During final turns, how many remain.
    pub final_turns_left: Option<u8>,
    /// The seat that knocked in this hole, if one did.
    pub knocked: Option<Seat>,
    /// The dealer of the hole (the seat after it plays first).
    pub dealer: Seat,
}

/// Most seats of a game.
pub const MAX_SEATS: usize = 4;

/// What `seat` may see of `state`.
pub fn observe(state: &State, seat: Seat) -> Observation {
    let grid = state
        .players
        .get(usize::from(seat))
        .filter(|_| state.stage.is_some())
        .map_or(Cells::filled(state.rules.cells(), None), |p| {
            Cells::from_fn(p.grid.len(), |i| p.face_up[i].then_some(p.grid[i]))
        });
    Observation {
        seat,
        seats: state.seats,
        rules: state.rules,
        stage: state.stage,
        turns: state.turns,
        grid,
        discard_top: state.discard.last().copied(),
        drawn: state
            .drawn
            .filter(|d| d.seat == seat)
            .map(|d| (d.source, d.card)),
        legal: legal_move_list(state, seat),
        grids: public_grids(state),
        discard_set: state
            .discard
            .iter()
            .fold(0, |set, card| set | 1 << card.index()),
        stock_count: state.stock.len() as u32,
        current_seat: state.current_seat,
        final_turns_left: state.final_turns_left,
        knocked: state.knocked,
        dealer: state.dealer,
    }
}

/// Every seat's face-up cards, as [`Observation::grids`] lists them.
fn public_grids(state: &State) -> [Cells<Option<Card>>; MAX_SEATS] {
    let started = state.stage.is_some();
    std::array::from_fn(|seat| match state.players.get(seat) {
        Some(p) if started => Cells::from_fn(p.grid.len(), |i| p.face_up[i].then_some(p.grid[i])),
        _ => Cells::filled(0, None),
    })
}
