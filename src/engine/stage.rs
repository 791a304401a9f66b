//! The words the rules and their refusals are put in: a [`Seat`] number, the [`Stage`] of a hole
//! and the [`MoveKind`]s (the type of a move, without its values).

use std::fmt;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A seat number, `0..seats`, clockwise.
pub type Seat = u8;

/// The stage of the current hole.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// The initial reveal: every seat that has not revealed its `initial_reveal` cards may do so;
    /// nobody's turn.
    Reveal,
    /// The current seat draws (or knocks, under `knock`).
    Draw,
    /// The current seat swaps the drawn card, or discards it if it came from the stock.
    Place,
    /// The current seat flips a face-down card (or passes, under `optional`).
    Flip,
    /// The hole is over (and, once finished, the game).
    HoleOver,
}

/// The type of a move, without its values.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MoveKind {
    /// `reveal`
    Reveal,
    /// `draw`
    Draw,
    /// `swap`
    Swap,
    /// `discard`
    Discard,
    /// `flip`
    Flip,
    /// `pass`
    Pass,
    /// `knock`
    Knock,
}

impl MoveKind {
    /// Every kind, in the order [`legal_moves`](super::legal_moves) lists them.
    pub const ALL: [MoveKind; 7] = [
        MoveKind::Reveal,
        MoveKind::Draw,
        MoveKind::Knock,
        MoveKind::Swap,
        MoveKind::Discard,
        MoveKind::Flip,
        MoveKind::Pass,
    ];

    /// The `type` of the move in JSON.
    pub const fn name(self) -> &'static str {
        match self {
            MoveKind::Reveal => "reveal",
            MoveKind::Draw => "draw",
            MoveKind::Swap => "swap",
            MoveKind::Discard => "discard",
            MoveKind::Flip => "flip",
            MoveKind::Pass => "pass",
            MoveKind::Knock => "knock",
        }
    }
}

impl fmt::Display for MoveKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
