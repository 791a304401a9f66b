//! What a write tells the accounts bound to its game's seats: where the game now stands for each
//! (`account_games`, written only when the seat is taken and when the game's status changes, so
//! that a move writes none), and the events it gives them (`game_started`, `your_turn`,
//! `game_ended`), both stored by the same append.
//!
//! A `your_turn` is given each time an event of the write leaves the seat with legal moves it
//! did not have just before (each initial reveal, each time the turn comes back), so moves of
//! bots or other seats that do not change that give none, and a turn is announced once.

use crate::engine::{self, Event, Seat, State, Timestamp};
use crate::service::accounts::events::AccountEvent;
use crate::store::{AccountGame, NewAccountEvent};

/// The rows of the accounts bound to `seats` (`(seat, username)`), after `events`, written at
/// `at`, brought the game from `before` to `after`.
pub(crate) fn notices(
    seats: &[(i32, String)],
    before: &State,
    events: &[Event],
    at: Timestamp,
    after: &State,
) -> (Vec<AccountGame>, Vec<NewAccountEvent>) {
    if seats.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let status_changed = before.status != after.status;
    let games = seats
        .iter()
        .filter(|(seat, _)| status_changed || *seat as usize >= before.players.len())
        .map(|(seat, account)| AccountGame {
            account: account.clone(),
            seat: *seat,
            status: after.status,
            updated_at: at,
            won: after
                .winners
                .as_ref()
                .is_some_and(|winners| winners.contains(&(*seat as Seat))),
        })
        .collect();
    (games, events_of(seats, before, events, at))
}

/// The account events of `events`, applied one by one from `before`.
fn events_of(
    seats: &[(i32, String)],
    before: &State,
    events: &[Event],
    at: Timestamp,
) -> Vec<NewAccountEvent> {
    let mut state = before.clone();
    let mut had_moves: Vec<bool> = seats
        .iter()
        .map(|(seat, _)| has_moves(&state, *seat as Seat))
        .collect();
    let mut notices = Vec::new();
    for event in events {
        engine::apply(&mut state, event, at);
        for ((seat, account), had) in seats.iter().zip(had_moves.iter_mut()) {
            let seat = *seat as Seat;
            let mut notice = |event: AccountEvent| notices.push(event.for_account(account, at));
            match event {
                Event::HoleDealt { hole: 1, .. } => notice(AccountEvent::GameStarted { seat }),
                Event::GameEnded {
                    totals, winners, ..
                } => notice(AccountEvent::GameEnded {
                    seat,
                    totals: totals.clone(),
                    winners: winners.clone(),
                }),
                _ => {}
            }
            let has = has_moves(&state, seat);
            if has && !*had {
                let turn_deadline = engine::turn_deadline(&state).map(|at| at.to_string());
                notice(AccountEvent::YourTurn {
                    seat,
                    turn_deadline,
                });
            }
            *had = has;
        }
    }
    notices
}

/// Whether a person plays `seat` and may move now.
pub(crate) fn has_moves(state: &State, seat: Seat) -> bool {
    let person = state
        .players
        .get(usize::from(seat))
        .is_some_and(|player| player.bot.is_none());
    person && !engine::legal_move_list(state, seat).is_empty()
}
