//! Which moves a seat may make: the checks of a move's turn, stage and values that
//! [`decide`](fn@super::decide) and [`parse_move`] (a client's request made a move) run, and the
//! lists of legal moves built from the same checks ([`legal_move_list`], [`legal_moves`]).

use std::ops::Deref;

use super::cards::Position;
use super::error::RuleError;
use super::moves::{Move, MoveRequest, Source};
use super::rules::FlipRule;
use super::stage::{MoveKind, Seat, Stage};
use super::state::{Drawn, Player, State, Status};

/// A short list of moves kept inline (no allocation): the legal moves of one seat.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct MoveList {
    moves: [Move; MoveList::CAPACITY],
    len: u8,
}

impl MoveList {
    /// The most moves a seat can have at once (the 15 reveal pairs).
    pub const CAPACITY: usize = 15;

    /// An empty list.
    pub const fn new() -> MoveList {
        MoveList {
            moves: [Move::Pass; MoveList::CAPACITY],
            len: 0,
        }
    }

    fn push(&mut self, mv: Move) {
        self.moves[self.len as usize] = mv;
        self.len += 1;
    }
}

impl Default for MoveList {
    fn default() -> MoveList {
        MoveList::new()
    }
}

impl Deref for MoveList {
    type Target = [Move];
    fn deref(&self) -> &[Move] {
        &self.moves[..self.len as usize]
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
    Move::try_from(request)
}

/// Whether `stage` takes moves of type `kind`.
const fn stage_takes(stage: Stage, kind: MoveKind) -> bool {
    matches!(
        (stage, kind),
        (Stage::Reveal, MoveKind::Reveal)
            | (Stage::Draw, MoveKind::Draw)
            | (Stage::Place, MoveKind::Swap | MoveKind::Discard)
            | (Stage::Flip, MoveKind::Flip | MoveKind::Pass)
    )
}

/// The values of a move that passed [`check_turn`].
pub(super) fn check_values(state: &State, seat: Seat, mv: &Move) -> Result<(), RuleError> {
    let player = &state.players[usize::from(seat)];
    match *mv {
        Move::Reveal { positions: [p, q] } if p == q => Err(RuleError::DuplicatePositions(p)),
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

/// Every candidate move of type `kind`, of valid shape (reveal: the pairs `p < q`).
fn for_each_candidate(kind: MoveKind, mut f: impl FnMut(Move)) {
    match kind {
        MoveKind::Reveal => {
            for (i, &p) in Position::ALL.iter().enumerate() {
                for &q in &Position::ALL[i + 1..] {
                    f(Move::Reveal { positions: [p, q] });
                }
            }
        }
        MoveKind::Draw => {
            f(Move::Draw {
                source: Source::Stock,
            });
            f(Move::Draw {
                source: Source::Discard,
            });
        }
        MoveKind::Swap => Position::ALL
            .iter()
            .for_each(|&position| f(Move::Swap { position })),
        MoveKind::Discard => f(Move::Discard),
        MoveKind::Flip => Position::ALL
            .iter()
            .for_each(|&position| f(Move::Flip { position })),
        MoveKind::Pass => f(Move::Pass),
    }
}

/// The moves `seat` may make now, inline: what [`decide`](fn@super::decide) accepts (a reveal
/// listed as `p < q`).
pub fn legal_move_list(state: &State, seat: Seat) -> MoveList {
    let mut list = MoveList::new();
    let Some(stage) = state.stage else {
        return list;
    };
    for kind in MoveKind::ALL {
        // `stage_takes` is implied by `check_turn`: testing it first only saves time.
        if stage_takes(stage, kind) && check_turn(state, seat, kind).is_ok() {
            for_each_candidate(kind, |mv| {
                if check_values(state, seat, &mv).is_ok() {
                    list.push(mv);
                }
            });
        }
    }
    list
}

/// The moves `seat` may make now (empty when it may not move), as listed in its view.
pub fn legal_moves(state: &State, seat: Seat) -> Vec<Move> {
    legal_move_list(state, seat).to_vec()
}
