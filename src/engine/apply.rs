//! [`apply`]: one logged event folded into the [`State`] (folding a log's events into
//! `State::default()` rebuilds the state exactly); [`execute`]: a command decided and its events
//! applied, as the server runs one.

use uuid::Uuid;

use super::bot_kind::BotKind;
use super::cards::{Card, Cells, Position};
use super::decide::{decide, decide_play_into};
use super::error::RuleError;
use super::event::Event;
use super::inputs::{ClientSeed, PlayerName};
use super::moves::{Command, Move, Source};
use super::rules::Rules;
use super::secrets::Secrets;
use super::stage::{Seat, Stage};
use super::state::{Drawn, EndReason, HoleResult, Player, State, Status};
use super::time::Timestamp;
use super::turn::{TurnEnd, flip_follows, turn_end};

/// Decides `command` on `state` and applies each event it causes at `at`, the time of the log
/// entries they become; returns the events. On a refusal the state is left as it was.
pub fn execute(
    state: &mut State,
    command: &Command,
    secrets: &Secrets,
    at: Timestamp,
) -> Result<Vec<Event>, RuleError> {
    let events = decide(state, command, secrets)?;
    for event in &events {
        apply(state, event, at);
    }
    Ok(events)
}

/// [`execute`] of `seat`'s move `mv`, its events put in `events` (cleared first): a caller that
/// plays many moves reuses one list rather than allocating one a move.
pub fn execute_play(
    state: &mut State,
    seat: Seat,
    mv: &Move,
    secrets: &Secrets,
    at: Timestamp,
    events: &mut Vec<Event>,
) -> Result<(), RuleError> {
    events.clear();
    decide_play_into(state, seat, mv, secrets, events)?;
    for event in events.iter() {
        apply(state, event, at);
    }
    Ok(())
}

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
            rated,
            ..
        } => {
            apply_created(
                state, *game_id, *seats, *holes, *rules, commitment, *stacked,
            );
            state.rated = *rated;
        }
        Event::PlayerJoined {
            name,
            bot,
            client_seed,
            account,
            ..
        } => apply_joined(state, name, *bot, client_seed, account),
        Event::HoleDealt {
            hole, dealer, deck, ..
        } => apply_deal(state, *hole, *dealer, deck, at),
        Event::CardsRevealed {
            seat, positions, ..
        } => apply_reveal(state, *seat, positions, at),
        Event::CardDrawn { seat, source, card } => apply_draw(state, *seat, *source, *card),
        Event::StockReshuffled { shuffle, order, .. } => apply_reshuffle(state, *shuffle, order),
        Event::CardSwapped {
            seat,
            position,
            card,
            replaced,
        } => apply_swap(state, *seat, *position, *card, *replaced, at),
        Event::CardDiscarded { seat, card } => apply_discard(state, *seat, *card, at),
        Event::CardFlipped { seat, position, .. } => apply_flip(state, *seat, *position, at),
        Event::FlipDeclined { seat } => finish_turn(state, *seat, at, false),
        Event::Knocked { seat } => {
            finish_turn(state, *seat, at, true);
            state.knocked = Some(*seat);
        }
        Event::BotTookSeat { seat, bot, .. } => apply_takeover(state, *seat, *bot),
        Event::HoleEnded {
            hole,
            reason,
            grids,
            scores,
        } => apply_hole_ended(state, *hole, *reason, grids, scores),
        Event::GameEnded { winners, seed, .. } => apply_game_ended(state, winners, seed),
    }
}

/// The game exists, with its size and rules; its seats are free.
fn apply_created(
    state: &mut State,
    game_id: Uuid,
    seats: u8,
    holes: u8,
    rules: Rules,
    commitment: &str,
    stacked: bool,
) {
    state.game_id = Some(game_id);
    state.seats = seats;
    state.holes = holes;
    state.rules = rules;
    commitment.clone_into(&mut state.commitment);
    state.stacked = stacked;
    state.status = Status::Waiting;
    state.players = Vec::with_capacity(usize::from(seats));
}

/// A player takes the next seat: no cards yet, no score.
fn apply_joined(
    state: &mut State,
    name: &PlayerName,
    bot: Option<BotKind>,
    client_seed: &ClientSeed,
    account: &Option<String>,
) {
    state.players.push(Player {
        name: name.clone(),
        bot,
        client_seed: client_seed.clone(),
        account: account.clone(),
        grid: Cells::filled(state.rules.cells(), Card::default()),
        face_up: Cells::filled(state.rules.cells(), false),
        revealed: false,
        hole_scores: Vec::with_capacity(usize::from(state.holes)),
        total: 0,
    });
}

/// `seat`'s initial reveal; the last one starts the first turn (see [`start_turns`]).
fn apply_reveal(state: &mut State, seat: Seat, positions: &[Position], at: Timestamp) {
    if let Some(player) = state.players.get_mut(usize::from(seat)) {
        for p in positions {
            player.face_up[p.index()] = true;
        }
        player.revealed = true;
    }
    if state.players.iter().all(|p| p.revealed) {
        start_turns(state, at);
    }
}

/// The initial reveal is over (or there is none): the dealer's left neighbour draws first.
fn start_turns(state: &mut State, at: Timestamp) {
    state.reveal_started_at = None;
    state.stage = Some(Stage::Draw);
    state.current_seat = Some((state.dealer + 1) % state.seats.max(1));
    state.turn_started_at = Some(at);
}

/// `seat` takes `card` from the top of `source`, to place it.
fn apply_draw(state: &mut State, seat: Seat, source: Source, card: Card) {
    match source {
        Source::Stock => state.stock.pop(),
        Source::Discard => state.discard.pop(),
    };
    state.drawn = Some(Drawn { seat, source, card });
    state.stage = Some(Stage::Place);
}

/// The discard pile but its top becomes the stock, in `order` (top first).
fn apply_reshuffle(state: &mut State, shuffle: u32, order: &[Card]) {
    let top = state.discard.pop();
    state.discard.clear();
    state.discard.extend(top);
    state.stock.clear();
    state.stock.extend(order.iter().rev());
    state.shuffles = shuffle;
}

/// `seat` places the drawn `card` face up at `position` and discards the `replaced` card, which
/// ends its turn.
fn apply_swap(
    state: &mut State,
    seat: Seat,
    position: Position,
    card: Card,
    replaced: Card,
    at: Timestamp,
) {
    if let Some(player) = state.players.get_mut(usize::from(seat)) {
        player.grid[position.index()] = card;
        player.face_up[position.index()] = true;
    }
    state.discard.push(replaced);
    state.drawn = None;
    finish_turn(state, seat, at, false);
}

/// `seat` discards the drawn `card`: a flip follows under the flip rule, else the turn ends.
fn apply_discard(state: &mut State, seat: Seat, card: Card, at: Timestamp) {
    state.discard.push(card);
    state.drawn = None;
    if usize::from(seat) < state.players.len() && flip_follows(state, seat) {
        state.stage = Some(Stage::Flip);
    } else {
        finish_turn(state, seat, at, false);
    }
}

/// `seat` turns the card at `position` face up after a discard, which ends its turn.
fn apply_flip(state: &mut State, seat: Seat, position: Position, at: Timestamp) {
    if let Some(player) = state.players.get_mut(usize::from(seat)) {
        player.face_up[position.index()] = true;
    }
    finish_turn(state, seat, at, false);
}

/// The bot `bot` plays `seat` from now on.
fn apply_takeover(state: &mut State, seat: Seat, bot: BotKind) {
    if let Some(player) = state.players.get_mut(usize::from(seat)) {
        player.bot = Some(bot);
    }
}

/// The hole is scored: every grid as it ended, face up, and each seat's score added.
fn apply_hole_ended(
    state: &mut State,
    hole: u8,
    reason: EndReason,
    grids: &[Cells<Card>],
    scores: &[i32],
) {
    for ((player, grid), score) in state.players.iter_mut().zip(grids).zip(scores) {
        player.grid = *grid;
        player.face_up = Cells::filled(grid.len(), true);
        player.hole_scores.push(*score);
        player.total += score;
    }
    state.last_hole = Some(HoleResult {
        hole,
        reason,
        grids: grids.to_vec(),
        scores: scores.to_vec(),
    });
    state.stage = Some(Stage::HoleOver);
    state.current_seat = None;
    state.turn_started_at = None;
    state.drawn = None;
}

/// The game is over: its `winners`, and the server `seed` revealed.
fn apply_game_ended(state: &mut State, winners: &[Seat], seed: &str) {
    state.status = Status::Finished;
    state.winners = Some(winners.to_vec());
    state.seed = Some(seed.to_owned());
    state.stage = Some(Stage::HoleOver);
    state.current_seat = None;
    state.turn_started_at = None;
    state.reveal_started_at = None;
}

/// Deals `deck` for `hole` with `c` cells a grid: card `d < cn` to seat `(dealer + 1 + d) mod n`
/// at position `d div n`, card `cn` to the discard pile, the rest to the stock (element `cn + 1`
/// on top). Without an initial reveal, the first turn starts at once.
fn apply_deal(state: &mut State, hole: u8, dealer: Seat, deck: &[Card], at: Timestamp) {
    let n = state.players.len().max(1);
    let dealt = (state.rules.cells() * n).min(deck.len().saturating_sub(1));
    for player in &mut state.players {
        player.grid = Cells::filled(state.rules.cells(), Card::default());
        player.face_up = Cells::filled(state.rules.cells(), false);
        player.revealed = state.rules.initial_reveal == 0;
    }
    for (d, &card) in deck[..dealt].iter().enumerate() {
        let seat = (usize::from(dealer) + 1 + d) % n;
        if let Some(player) = state.players.get_mut(seat) {
            player.grid[d / n] = card;
        }
    }
    state.discard.clear();
    state.discard.extend(deck.get(dealt));
    state.stock.clear();
    state
        .stock
        .extend(deck.get(dealt + 1..).unwrap_or_default().iter().rev());
    state.status = Status::Playing;
    state.hole = hole;
    state.dealer = dealer;
    state.stage = Some(Stage::Reveal);
    state.reveal_started_at = state.rules.turn_timeout_s.map(|_| at);
    state.current_seat = None;
    state.turn_started_at = None;
    state.drawn = None;
    state.turns = 0;
    state.final_turns_left = None;
    state.knocked = None;
    state.shuffles = 0;
    if state.rules.initial_reveal == 0 {
        start_turns(state, at);
    }
}

/// Ends `seat`'s turn (`knocking`: a knock): the next seat draws, or the hole is over
/// (`hole_ended` follows).
fn finish_turn(state: &mut State, seat: Seat, at: Timestamp, knocking: bool) {
    let completed = state
        .players
        .get(usize::from(seat))
        .is_some_and(Player::grid_complete);
    match turn_end(state, seat, completed, knocking) {
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
