//! What a given viewer may see: the [`View`] of docs/API.md, the redaction of log events
//! ([`redact_event`]) and the bots' [`Observation`]. This is the only place that hides cards:
//! face-down cards (the owner's too), the stock, another seat's stock draw and, until the game
//! ends, the dealt and reshuffled orders.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

use super::bot_kind::BotKind;
use super::cards::{Card, Cells, GridShape, MAX_CELLS};
use super::deadline::turn_deadline;
use super::event::Event;
use super::legal::{MoveList, is_legal, legal_move_list, legal_moves};
use super::moves::{Move, Source};
use super::rules::Rules;
use super::stage::{Seat, Stage};
use super::state::{Drawn, HoleResult, Player, State, Status};
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

/// A grid as every seat sees it: its face-up cards, and a blank (the default card) at each
/// face-down position, whose card never reaches an observation. Plain bytes, copied in one go.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct FaceUp {
    /// The cards, row-major: the card where face up, the default card where face down.
    pub cards: [Card; MAX_CELLS],
    /// Bit `p` is set when position `p` is face up.
    pub up: u16,
}

impl FaceUp {
    /// What anyone sees of `player`'s grid.
    fn of(player: &Player) -> FaceUp {
        let mut seen = FaceUp::default();
        let (grid, face_up) = (&*player.grid, &*player.face_up);
        for p in 0..grid.len().min(face_up.len()).min(MAX_CELLS) {
            let up = face_up[p];
            seen.cards[p] = if up { grid[p] } else { Card::default() };
            seen.up |= u16::from(up) << p;
        }
        seen
    }

    /// The card at `p` when it is face up.
    pub fn get(&self, p: usize) -> Option<Card> {
        (self.up & (1 << p) != 0).then(|| self.cards[p])
    }
}

/// What one seat may see, for a bot to choose a move: a window on the state whose methods
/// show only what that seat may see (face-up cards, its own drawn card, the discard pile, the
/// counters of the hole), so that building one copies nothing and a bot reads only what it uses.
/// Two observations are equal when they show the same.
#[derive(Clone, Copy)]
pub struct Observation<'a> {
    state: &'a State,
    seat: Seat,
}

/// Most seats of a game.
pub const MAX_SEATS: usize = 4;

/// What `seat` may see of `state`.
pub fn observe(state: &State, seat: Seat) -> Observation<'_> {
    Observation { state, seat }
}

impl Observation<'_> {
    /// The bot's seat.
    pub fn seat(&self) -> Seat {
        self.seat
    }

    /// Number of seats.
    pub fn seats(&self) -> u8 {
        self.state.seats
    }

    /// The rule options.
    pub fn rules(&self) -> &Rules {
        &self.state.rules
    }

    /// The stage of the hole.
    pub fn stage(&self) -> Option<Stage> {
        self.state.stage
    }

    /// Turns played in the hole so far.
    pub fn turns(&self) -> u32 {
        self.state.turns
    }

    /// The top of the discard pile.
    pub fn discard_top(&self) -> Option<Card> {
        self.state.discard.last().copied()
    }

    /// The card the bot drew and has not yet placed.
    pub fn drawn(&self) -> Option<(Source, Card)> {
        self.state
            .drawn
            .filter(|d| d.seat == self.seat)
            .map(|d| (d.source, d.card))
    }

    /// The moves the bot may make now.
    pub fn legal(&self) -> MoveList {
        legal_move_list(self.state, self.seat)
    }

    /// Whether the bot may make `mv` now (one of [`legal`](Self::legal), checked alone).
    pub fn allows(&self, mv: &Move) -> bool {
        is_legal(self.state, self.seat, mv)
    }

    /// Seat `seat`'s grid as anyone sees it (its owner sees no more of it); nothing before the
    /// first deal or past the seats.
    pub fn grid(&self, seat: usize) -> FaceUp {
        match self.state.players.get(seat) {
            Some(player) if self.state.stage.is_some() => FaceUp::of(player),
            _ => FaceUp::default(),
        }
    }

    /// The bot's own grid as it sees it.
    pub fn own_grid(&self) -> FaceUp {
        self.grid(usize::from(self.seat))
    }

    /// The cards of the discard pile, as a set of canonical indexes (bit `i` for the card of
    /// index `i`): each was face up when it went there, so every seat has seen them.
    pub fn discard_set(&self) -> u64 {
        self.state
            .discard
            .iter()
            .fold(0, |set, card| set | 1 << card.index())
    }

    /// Cards in the stock.
    pub fn stock_count(&self) -> u32 {
        self.state.stock.len() as u32
    }

    /// Whose turn it is.
    pub fn current_seat(&self) -> Option<Seat> {
        self.state.current_seat
    }

    /// During final turns, how many remain.
    pub fn final_turns_left(&self) -> Option<u8> {
        self.state.final_turns_left
    }

    /// The seat that knocked in this hole, if one did.
    pub fn knocked(&self) -> Option<Seat> {
        self.state.knocked
    }

    /// The dealer of the hole (the seat after it plays first).
    pub fn dealer(&self) -> Seat {
        self.state.dealer
    }

    /// Everything the observation shows, for comparing and printing.
    fn shown(&self) -> Shown {
        Shown {
            seat: self.seat,
            seats: self.seats(),
            rules: *self.rules(),
            stage: self.stage(),
            turns: self.turns(),
            discard_top: self.discard_top(),
            drawn: self.drawn(),
            legal: self.legal(),
            grids: std::array::from_fn(|seat| self.grid(seat)),
            discard_set: self.discard_set(),
            stock_count: self.stock_count(),
            current_seat: self.current_seat(),
            final_turns_left: self.final_turns_left(),
            knocked: self.knocked(),
            dealer: self.dealer(),
        }
    }
}

/// What an [`Observation`] shows, gathered.
#[derive(PartialEq, Debug)]
struct Shown {
    seat: Seat,
    seats: u8,
    rules: Rules,
    stage: Option<Stage>,
    turns: u32,
    discard_top: Option<Card>,
    drawn: Option<(Source, Card)>,
    legal: MoveList,
    grids: [FaceUp; MAX_SEATS],
    discard_set: u64,
    stock_count: u32,
    current_seat: Option<Seat>,
    final_turns_left: Option<u8>,
    knocked: Option<Seat>,
    dealer: Seat,
}

impl PartialEq for Observation<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.shown() == other.shown()
    }
}

impl std::fmt::Debug for Observation<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.shown().fmt(f)
    }
}
