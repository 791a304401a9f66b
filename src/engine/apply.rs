//! [`apply`]: one logged event folded into the [`State`] (folding a log's events into
//! `State::default()` rebuilds the state exactly); [`execute`]: a command decided and its events
//! applied, as the server runs one.

use super::cards::{Card, Rank, Suit};
use super::decide::decide;
use super::error::RuleError;
use super::event::Event;
use super::moves::{Command, Source};
use super::secrets::Secrets;
use super::stage::{Seat, Stage};
use super::state::{Drawn, HoleResult, Player, State, Status};
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
        } => apply_deal(state, *hole, *dealer, deck, at),
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
                state.reveal_started_at = None;
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
        Event::BotTookSeat { seat, bot, .. } => {
            if let Some(player) = state.players.get_mut(usize::from(*seat)) {
                player.bot = Some(*bot);
            }
        }
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
            state.reveal_started_at = None;
        }
    }
}

/// Deals `deck` for `hole`: card `d < 6n` to seat `(dealer + 1 + d) mod n` at position `d div n`,
/// card `6n` to the discard pile, the rest to the stock (element `6n + 1` on top).
fn apply_deal(state: &mut State, hole: u8, dealer: Seat, deck: &[Card; 52], at: Timestamp) {
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
    state.reveal_started_at = state.rules.turn_timeout_s.map(|_| at);
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
