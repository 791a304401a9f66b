//! Turn timeouts (the `turn_timeout_s` rule): which seats are to play, when the greedy bot may
//! take them ([`turn_deadline`]), and which it may take at a given time ([`overdue_seats`]).
//! The engine reads no clock: the time is the caller's, and a replay's is the entry's.

use super::stage::{Seat, Stage};
use super::state::{State, Status};
use super::time::Timestamp;

/// The seats whose move the game waits for: during the initial reveal every seat still to
/// reveal, during a turn the current seat, else none. Bots included.
fn seats_to_play(state: &State) -> Vec<Seat> {
    if state.status != Status::Playing {
        return Vec::new();
    }
    match state.stage {
        Some(Stage::Reveal) => (0..state.seats)
            .filter(|&seat| {
                state
                    .players
                    .get(usize::from(seat))
                    .is_some_and(|player| !player.revealed)
            })
            .collect(),
        Some(Stage::Draw | Stage::Place | Stage::Flip) => state.current_seat.into_iter().collect(),
        Some(Stage::HoleOver) | None => Vec::new(),
    }
}

/// The people (not bots) the game waits for.
fn people_to_play(state: &State) -> Vec<Seat> {
    seats_to_play(state)
        .into_iter()
        .filter(|&seat| state.players[usize::from(seat)].bot.is_none())
        .collect()
}

/// When the greedy bot may take the seats to play now: the start of the turn (of the initial
/// reveal, for the seats still to reveal) plus `turn_timeout_s`. `None` without a timeout, or
/// when no person is to play.
pub fn turn_deadline(state: &State) -> Option<Timestamp> {
    let timeout = state.rules.turn_timeout_s?;
    let started = match state.stage? {
        Stage::Reveal => state.reveal_started_at?,
        Stage::Draw | Stage::Place | Stage::Flip => state.turn_started_at?,
        Stage::HoleOver => return None,
    };
    if people_to_play(state).is_empty() {
        return None;
    }
    Some(Timestamp(
        started.0.saturating_add(i64::from(timeout) * 1_000_000),
    ))
}

/// The seats a bot may take at `now` for a turn timeout: the people to play, once the deadline
/// has passed (empty before).
pub fn overdue_seats(state: &State, now: Timestamp) -> Vec<Seat> {
    match turn_deadline(state) {
        Some(deadline) if deadline <= now => people_to_play(state),
        _ => Vec::new(),
    }
}
