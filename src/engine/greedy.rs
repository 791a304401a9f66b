//! The greedy policy ([`greedy_move`]): the `greedy` bot's, and every seat's in the playouts of
//! [`rollout`](super::rollout). It reads a grid as ranks with a face-up mask (suits never
//! score), and the grid's shape is a constant of the code that reads it: one copy of the policy,
//! compiled for each of the four shapes ([`by_shape`]), loops unrolled, nothing allocated.

use super::cards::{Card, Cells, GridShape, MAX_CELLS, Position, Rank};
use super::moves::{Move, Source};
use super::rules::{FlipRule, PairRule, Rules};
use super::score::RANK_POINTS;
use super::stage::Stage;

/// A grid's ranks, row-major (`Rank as u8`, the joker 13).
pub type Ranks = [u8; MAX_CELLS];

/// Calls `$run::<ROWS, COLUMNS>($args)` for the shape `$shape`: the one place where a grid's
/// shape becomes constants.
macro_rules! by_shape {
    ($shape:expr, $run:ident($($arg:expr),*)) => {
        match $shape {
            $crate::engine::cards::GridShape::TwoByThree => $run::<2, 3>($($arg),*),
            $crate::engine::cards::GridShape::TwoByTwo => $run::<2, 2>($($arg),*),
            $crate::engine::cards::GridShape::TwoByFour => $run::<2, 4>($($arg),*),
            $crate::engine::cards::GridShape::ThreeByThree => $run::<3, 3>($($arg),*),
        }
    };
}
pub(super) use by_shape;

/// What the rules of a game say to the greedy policy and to a playout: scoring and turn options,
/// precomputed.
#[derive(Clone, Copy, Debug)]
pub struct Rulebook {
    pub(super) shape: GridShape,
    /// Points by rank (`Rank as u8`), the joker's last.
    pub(super) points: [i32; 14],
    pub(super) keep_negative_pairs: bool,
    pub(super) four_of_a_kind: i32,
    pub(super) final_turns: bool,
    pub(super) flip: FlipRule,
    pub(super) knock: bool,
    pub(super) max_turns: u32,
    /// Whether a drawn card that improves nothing goes, once the hole is overdue (after `cells`
    /// turns a seat), into the face-down position where it costs least: games with house rules
    /// only. Grids then fill even when only high cards go round (four seats on nine cards leave
    /// 15 in the stock, and a bot that only ever discards them never ends the hole); games
    /// without house rules keep the greedy bot's decisions as they were.
    pub(super) overdue: bool,
    pub(super) deck: usize,
    pub(super) initial_reveal: usize,
}

/// Expected points of a face-down card, in tenths (the deck's mean is 71/13 ≈ 5.5).
const UNKNOWN: i32 = 55;

/// Take the discard top when it lowers the expected grid score by at least this (tenths).
const TAKE_DISCARD_GAIN: i32 = 25;

/// Decline an optional flip that would end the hole while the grid scores more than this many
/// tenths a cell (150 for six cells).
const HIGH_GRID_PER_CELL: i32 = 25;

/// Knock when the grid is expected to score at most this many tenths a cell, with at most a
/// third of it face down.
const KNOCK_PER_CELL: i32 = 10;

impl Rulebook {
    /// The playout rules of a game under `rules`.
    pub fn new(rules: &Rules) -> Rulebook {
        let mut points = [rules.joker_value; 14];
        points[..RANK_POINTS.len()].copy_from_slice(&RANK_POINTS);
        Rulebook {
            shape: rules.grid,
            points,
            keep_negative_pairs: rules.negative_pairs == PairRule::Keep,
            four_of_a_kind: rules.four_of_a_kind,
            final_turns: rules.final_turns,
            flip: rules.flip_after_discard,
            knock: rules.knock,
            max_turns: rules.max_turns_per_hole,
            overdue: rules.has_variants(),
            deck: rules.deck_size(),
            initial_reveal: usize::from(rules.initial_reveal),
        }
    }

    pub(super) fn cells(&self) -> usize {
        self.shape.cells()
    }
}

/// The rank code of a card.
pub fn rank_of(card: Card) -> u8 {
    card.rank() as u8
}

/// A grid of `R` rows and `C` columns as its owner's policy sees it: the expected score of each
/// column, in tenths (face-down cards counted at [`UNKNOWN`]), and of each column less one of
/// its cells, so that the score with a card placed anywhere is a lookup.
struct Estimate<'a, const R: usize, const C: usize> {
    book: &'a Rulebook,
    up: u16,
    columns: [i32; C],
    /// `rests[c][r]`: column `c` without its cell of row `r`.
    rests: [[Rest; R]; C],
    total: i32,
}

/// Some cells of a column: the points of the face-up ones, how many are face down, and the set
/// of the face-up ones' ranks (bit `rank`).
// Small (six bytes): a grid's estimate holds one for each cell.
#[derive(Clone, Copy, Default)]
struct Rest {
    points: i16,
    unknown: u8,
    ranks: u16,
}

impl Rest {
    /// These cells with one more face up, of `rank`.
    fn with(self, book: &Rulebook, rank: u8) -> Rest {
        Rest {
            points: self.points + book.points[usize::from(rank)] as i16,
            unknown: self.unknown,
            ranks: self.ranks | 1 << rank,
        }
    }

    /// These cells with one more face down.
    fn with_unknown(self) -> Rest {
        Rest {
            unknown: self.unknown + 1,
            ..self
        }
    }

    /// The expected score of these cells as a whole column, in tenths: 0 for a column of one
    /// rank (but Twos and jokers under `keep`), else their points.
    fn score(self, book: &Rulebook) -> i32 {
        let points = i32::from(self.points);
        if self.unknown > 0 {
            return 10 * points + UNKNOWN * i32::from(self.unknown);
        }
        let negative = 1 << Rank::Two as u8 | 1 << Rank::Joker as u8;
        let one_rank = self.ranks.count_ones() == 1;
        if one_rank && !(book.keep_negative_pairs && self.ranks & negative != 0) {
            0
        } else {
            10 * points
        }
    }
}

impl<'a, const R: usize, const C: usize> Estimate<'a, R, C> {
    fn new(book: &'a Rulebook, grid: &Ranks, up: u16) -> Self {
        let cell = |rest: Rest, p: usize| {
            if up & (1 << p) != 0 {
                rest.with(book, grid[p])
            } else {
                rest.with_unknown()
            }
        };
        let mut estimate = Estimate {
            book,
            up,
            columns: [0; C],
            rests: [[Rest::default(); R]; C],
            total: 0,
        };
        for column in 0..C {
            let cells = |skipped: usize| {
                (0..R)
                    .filter(|&row| row != skipped)
                    .fold(Rest::default(), |rest, row| cell(rest, row * C + column))
            };
            for row in 0..R {
                estimate.rests[column][row] = cells(row);
            }
            // The whole column: the rest of its top cell, and that cell.
            estimate.columns[column] = cell(estimate.rests[column][0], column).score(book);
        }
        estimate.total = estimate.columns.iter().sum();
        estimate
    }

    /// The expected score with `rank` at `p`.
    fn placed(&self, p: usize, rank: u8) -> i32 {
        let (row, column) = (p / C, p % C);
        let placed = self.rests[column][row]
            .with(self.book, rank)
            .score(self.book);
        self.total - self.columns[column] + placed
    }
    /// Where `rank` lowers the expected score most (the first such position), and that score.
    fn best_placement(&self, rank: u8) -> (usize, i32) {
        let mut best = (0, i32::MAX);
        for p in 0..R * C {
            let estimate = self.placed(p, rank);
            if estimate < best.1 {
                best = (p, estimate);
            }
        }
        best
    }

    fn face_down(&self) -> impl Iterator<Item = usize> + '_ {
        (0..R * C).filter(|p| self.up & (1 << p) == 0)
    }
}

/// A seat's turn as the greedy policy reads it: its own grid, what it may take, where the hole
/// stands.
#[derive(Clone, Copy, Debug)]
pub struct Turn<'a> {
    pub stage: Stage,
    /// The seat's ranks; only the face-up ones are read.
    pub grid: &'a Ranks,
    pub up: u16,
    pub discard_top: Option<u8>,
    pub drawn: Option<(Source, u8)>,
    /// Whether the rules let the seat knock now.
    pub may_knock: bool,
    /// Turns played in the hole.
    pub turns: u32,
    pub seats: usize,
}

/// The greedy policy's move: the initial reveal spread over the columns; knock when the grid is
/// expected low and mostly face up; take the discard when it lowers the expected score enough;
/// place a drawn card where it lowers the expected score most, else discard it (into a
/// face-down position once the hole is overdue, under house rules); flip the first face-down
/// card unless that would end the hole on a high grid.
pub fn greedy_move(book: &Rulebook, turn: &Turn) -> Move {
    by_shape!(book.shape, greedy_shaped(book, turn))
}

pub(super) fn greedy_shaped<const R: usize, const C: usize>(book: &Rulebook, turn: &Turn) -> Move {
    let sight = Estimate::<R, C>::new(book, turn.grid, turn.up);
    let cells = (R * C) as i32;
    match turn.stage {
        Stage::Reveal => Move::Reveal {
            positions: positions_of(spread_mask(book)),
        },
        Stage::Draw => {
            let hidden = sight.face_down().count() as i32;
            if turn.may_knock && sight.total <= KNOCK_PER_CELL * cells && 3 * hidden <= cells {
                return Move::Knock;
            }
            let take = turn
                .discard_top
                .is_some_and(|top| sight.total - sight.best_placement(top).1 >= TAKE_DISCARD_GAIN);
            let source = if take { Source::Discard } else { Source::Stock };
            Move::Draw { source }
        }
        Stage::Place => {
            let Some((source, rank)) = turn.drawn else {
                return Move::Discard;
            };
            let (p, estimate) = sight.best_placement(rank);
            let swap = |p: usize| Move::Swap {
                position: Position::ALL[p],
            };
            if source == Source::Discard || estimate < sight.total {
                return swap(p);
            }
            let overdue = book.overdue && turn.turns >= (R * C * turn.seats) as u32;
            match sight.face_down().min_by_key(|&q| sight.placed(q, rank)) {
                Some(q) if overdue => swap(q),
                _ => Move::Discard,
            }
        }
        Stage::Flip => {
            let hidden = sight.face_down().count();
            match sight.face_down().next() {
                Some(p)
                    if book.flip == FlipRule::Always
                        || !(hidden == 1 && sight.total > HIGH_GRID_PER_CELL * cells) =>
                {
                    Move::Flip {
                        position: Position::ALL[p],
                    }
                }
                _ => Move::Pass,
            }
        }
        Stage::HoleOver => Move::Pass,
    }
}

/// The positions of a bit set, increasing.
pub fn positions_of(mask: u16) -> Cells<Position> {
    let mut positions = Cells::filled(mask.count_ones() as usize, Position::default());
    let chosen = Position::ALL
        .iter()
        .filter(|p| mask & (1 << p.index()) != 0);
    for (slot, &p) in positions.iter_mut().zip(chosen) {
        *slot = p;
    }
    positions
}

/// The cells of the greedy bot's initial reveal, as a bit set.
pub fn spread_mask(book: &Rulebook) -> u16 {
    let (rows, columns) = (book.shape.rows(), book.shape.columns());
    let diagonal = (0..columns).map(|c| (c % rows) * columns + c);
    let rest = (0..book.cells()).filter(|p| (p % columns) % rows != p / columns);
    diagonal
        .chain(rest)
        .take(book.initial_reveal)
        .fold(0, |mask, p| mask | 1 << p)
}
