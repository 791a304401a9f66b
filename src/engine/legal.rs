//! Which moves a seat may make: the checks of a move's turn, stage and values that
//! [`decide`](fn@super::decide) and [`parse_move`] (a client's request made a move) run, and the
//! lists of legal moves built from the same checks ([`legal_move_list`], [`legal_moves`]).

use std::ops::Deref;

use smallvec::SmallVec;

use super::cards::{Cells, MAX_CELLS, Position};
use super::error::RuleError;
use super::moves::{Move, MoveRequest, Source};
use super::rules::FlipRule;
use super::stage::{MoveKind, Seat, Stage};
use super::state::{Drawn, Player, State, Status};

/// The legal moves of one seat: inline up to 16 (every stage but a large initial reveal, whose
/// sets of positions reach 126 on a nine-card grid), so that the moves of a turn cost no
/// allocation and the list stays small to build and to move.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct MoveList {
    moves: SmallVec<[Move; 16]>,
}

impl MoveList {
    /// An empty list.
    pub fn new() -> MoveList {
        MoveList::default()
    }

    fn push(&mut self, mv: Move) {
        self.moves.push(mv);
    }
}

impl Deref for MoveList {
    type Target = [Move];
    fn deref(&self) -> &[Move] {
        &self.moves
    }
}

/// The player at `seat` of a game in play: the refusals that a move and a seat's takeover share.
pub(super) fn seat_in_play(state: &State, seat: Seat) -> Result<&Player, RuleError> {
    if state.game_id.is_none() {
        return Err(RuleError::NotCreated);
    }
    match state.status {
        Status::Waiting => return Err(RuleError::GameNotStarted),
        Status::Finished => return Err(RuleError::GameFinished),
        Status::Playing => {}
    }
    state
        .players
        .get(usize::from(seat))
        .ok_or(RuleError::NoSuchSeat(seat))
}

/// The game's state, whose turn and the stage, for a move of type `kind` by `seat`.
pub(super) fn check_turn(state: &State, seat: Seat, kind: MoveKind) -> Result<(), RuleError> {
    let player = seat_in_play(state, seat)?;
    let wrong_stage = RuleError::WrongStage {
        kind,
        stage: state.stage,
    };
    match state.stage {
        Some(Stage::Reveal) if kind != MoveKind::Reveal => Err(wrong_stage),
        Some(Stage::Reveal) if player.revealed => Err(RuleError::AlreadyRevealed(seat)),
        Some(Stage::Reveal) => Ok(()),
        Some(stage @ (Stage::Draw | Stage::Place | Stage::Flip)) => match state.current_seat {
            Some(current) if current != seat => Err(RuleError::NotYourTurn { seat, current }),
            Some(_) if stage_takes(stage, kind) => Ok(()),
            _ => Err(wrong_stage),
        },
        Some(Stage::HoleOver) | None => Err(wrong_stage),
    }
}

/// Turns a client's request into a [`Move`] of `seat`, reporting errors in docs/API.md's order: the
/// game's state, then whose turn it is, then the stage, and only then the values
/// (`position_out_of_range`, `invalid_reveal`). [`decide`](fn@super::decide) checks the rest.
///
/// A seat a bot took is refused first (`seat_taken_by_bot`): it is no longer the client's.
pub fn parse_move(state: &State, seat: Seat, request: &MoveRequest) -> Result<Move, RuleError> {
    if state
        .players
        .get(usize::from(seat))
        .is_some_and(|player| player.bot.is_some())
    {
        return Err(RuleError::SeatTakenByBot(seat));
    }
    check_turn(state, seat, request.kind())?;
    request.to_move(state.rules.cells(), Some(state.rules.initial_reveal))
}

/// Whether `stage` takes moves of type `kind`.
const fn stage_takes(stage: Stage, kind: MoveKind) -> bool {
    matches!(
        (stage, kind),
        (Stage::Reveal, MoveKind::Reveal)
            | (Stage::Draw, MoveKind::Draw | MoveKind::Knock)
            | (Stage::Place, MoveKind::Swap | MoveKind::Discard)
            | (Stage::Flip, MoveKind::Flip | MoveKind::Pass)
    )
}

/// The positions of a move, within the game's grid, and a reveal's count.
fn check_shape(state: &State, mv: &Move) -> Result<(), RuleError> {
    let cells = state.rules.cells();
    let positions: &[Position] = match mv {
        Move::Reveal { positions } => positions,
        Move::Swap { position } | Move::Flip { position } => std::slice::from_ref(position),
        _ => &[],
    };
    for position in positions {
        Position::within(i64::from(position.get()), cells)?;
    }
    match mv {
        Move::Reveal { positions }
            if positions.len() != usize::from(state.rules.initial_reveal) =>
        {
            Err(RuleError::InvalidReveal {
                given: positions.len(),
                wanted: state.rules.initial_reveal,
            })
        }
        _ => Ok(()),
    }
}

/// The first position named twice in `positions`.
fn duplicate(positions: &[Position]) -> Option<Position> {
    let mut seen = [false; Position::ALL.len()];
    positions
        .iter()
        .copied()
        .find(|p| std::mem::replace(&mut seen[p.index()], true))
}

/// The values of a move that passed [`check_turn`].
pub(super) fn check_values(state: &State, seat: Seat, mv: &Move) -> Result<(), RuleError> {
    check_shape(state, mv)?;
    if let Move::Reveal { positions } = mv
        && let Some(position) = duplicate(positions)
    {
        return Err(RuleError::DuplicatePositions(position));
    }
    check_choice(state, seat, mv)
}

/// The values of a move of valid shape (its positions in the grid, a reveal's distinct and of the
/// right count) that passed [`check_turn`]: what the state allows of it.
fn check_choice(state: &State, seat: Seat, mv: &Move) -> Result<(), RuleError> {
    let player = &state.players[usize::from(seat)];
    match *mv {
        Move::Knock if !state.rules.knock => Err(RuleError::CannotKnock(
            "the rules of this game have no knocking",
        )),
        Move::Knock if state.final_turns_left.is_some() => Err(RuleError::CannotKnock(
            "the final turns of this hole are under way",
        )),
        Move::Discard => match state.drawn {
            Some(Drawn {
                source: Source::Discard,
                card,
                ..
            }) => Err(RuleError::MustSwapDiscardDraw(card)),
            _ => Ok(()),
        },
        Move::Flip { position } if player.face_up[position.index()] => {
            Err(RuleError::PositionAlreadyRevealed(position))
        }
        Move::Pass if state.rules.flip_after_discard == FlipRule::Always => {
            Err(RuleError::FlipRequired)
        }
        _ => Ok(()),
    }
}

/// Every set of `k` of the positions `0..cells`, each in increasing order, the sets in
/// lexicographic order (`[0, 1]`, `[0, 2]`, …, `[4, 5]` for 2 of 6).
fn for_each_reveal(cells: usize, k: usize, mut f: impl FnMut(Move)) {
    if k == 0 || k > cells {
        return;
    }
    let mut chosen: [usize; MAX_CELLS] = std::array::from_fn(|i| i);
    loop {
        let positions = Cells::from_fn(k, |i| Position::ALL[chosen[i]]);
        f(Move::Reveal { positions });
        // The rightmost index that can still move right, then the ones after it packed behind.
        let Some(i) = (0..k).rev().find(|&i| chosen[i] < cells - k + i) else {
            return;
        };
        chosen[i] += 1;
        for j in i + 1..k {
            chosen[j] = chosen[j - 1] + 1;
        }
    }
}

/// Every candidate move of type `kind` in a game of `cells` cells whose reveal names `reveal`
/// positions, of valid shape (reveal: increasing positions, see [`for_each_reveal`]).
fn for_each_candidate(kind: MoveKind, cells: usize, reveal: usize, mut f: impl FnMut(Move)) {
    let positions = &Position::ALL[..cells];
    match kind {
        MoveKind::Reveal => for_each_reveal(cells, reveal, f),
        MoveKind::Draw => {
            f(Move::Draw {
                source: Source::Stock,
            });
            f(Move::Draw {
                source: Source::Discard,
            });
        }
        MoveKind::Swap => positions
            .iter()
            .for_each(|&position| f(Move::Swap { position })),
        MoveKind::Discard => f(Move::Discard),
        MoveKind::Flip => positions
            .iter()
            .for_each(|&position| f(Move::Flip { position })),
        MoveKind::Pass => f(Move::Pass),
        MoveKind::Knock => f(Move::Knock),
    }
}

/// The moves `seat` may make now, inline: what [`decide`](fn@super::decide) accepts, by type in
/// the order of [`MoveKind::ALL`] (reveal, draw, knock, swap, discard, flip, pass), positions
/// increasing; a reveal's sets of positions in lexicographic order.
pub fn legal_move_list(state: &State, seat: Seat) -> MoveList {
    let mut list = MoveList::new();
    let Some(stage) = state.stage else {
        return list;
    };
    let kinds = MoveKind::ALL
        .into_iter()
        .filter(|&kind| stage_takes(stage, kind));
    // Every kind a stage takes has the same turn to check (`stage_takes` is the rest of it).
    if kinds
        .clone()
        .next()
        .is_none_or(|kind| check_turn(state, seat, kind).is_err())
    {
        return list;
    }
    let (cells, reveal) = (state.rules.cells(), usize::from(state.rules.initial_reveal));
    for kind in kinds {
        // The candidates are of valid shape: only their choice is left to check.
        for_each_candidate(kind, cells, reveal, |mv| {
            if check_choice(state, seat, &mv).is_ok() {
                list.push(mv);
            }
        });
    }
    list
}

/// Whether `seat` may make `mv` now, as [`decide`](fn@super::decide) checks it: one of
/// [`legal_move_list`]'s (or a reveal of theirs with its positions in another order).
pub fn is_legal(state: &State, seat: Seat, mv: &Move) -> bool {
    check_turn(state, seat, mv.kind()).is_ok() && check_values(state, seat, mv).is_ok()
}

/// The moves `seat` may make now (empty when it may not move), as listed in its view.
pub fn legal_moves(state: &State, seat: Seat) -> Vec<Move> {
    legal_move_list(state, seat).to_vec()
}
