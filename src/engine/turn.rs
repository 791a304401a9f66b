//! How a turn ends, shared by [`decide`](fn@super::decide), which logs what follows, and
//! [`apply`](fn@super::apply), which moves the turn on.

use super::rules::FlipRule;
use super::stage::Seat;
use super::state::{EndReason, State};

/// Whether a discard by `seat` is followed by a flip stage.
pub(super) fn flip_follows(state: &State, seat: Seat) -> bool {
    state.rules.flip_after_discard != FlipRule::Never
        && !state.players[usize::from(seat)].grid_complete()
}

/// What happens when `seat`'s turn ends, `completed` telling whether its grid is now all face up.
pub(super) enum TurnEnd {
    Next {
        seat: Seat,
        final_turns_left: Option<u8>,
    },
    HoleOver(EndReason),
}

/// The end of a turn, from the counters of the state as they were during the turn; `knocking`
/// when the turn is a knock. After a knock, the final turns always run out (a grid completed
/// during them ends nothing early) and the hole ends for the knock.
pub(super) fn turn_end(state: &State, seat: Seat, completed: bool, knocking: bool) -> TurnEnd {
    let knocked = knocking || state.knocked.is_some();
    let final_turns_left = match state.final_turns_left {
        Some(left) => Some(left.saturating_sub(1)),
        None if knocking || (completed && state.rules.final_turns) => {
            Some(state.seats.saturating_sub(1))
        }
        None => None,
    };
    let ended_by = if knocked {
        EndReason::Knock
    } else {
        EndReason::GridComplete
    };
    if (completed && !state.rules.final_turns && !knocked) || final_turns_left == Some(0) {
        TurnEnd::HoleOver(ended_by)
    } else if state.turns + 1 >= state.rules.max_turns_per_hole {
        // A knock or a grid that is complete (now, or before the final turns the cap cuts short)
        // is why the hole ends: the cap only guarantees an end where neither would come.
        TurnEnd::HoleOver(if completed || final_turns_left.is_some() {
            ended_by
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
