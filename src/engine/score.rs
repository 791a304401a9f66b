//! Scoring: card points, columns and a grid's score for a hole (docs/RULES.md "Scoring" and
//! "House-rule variants"), under a game's [`Scoring`] options.

use super::cards::{Card, GridShape, Rank};

/// The options that score a grid: its shape, the jokers' points, the pair rule and the
/// four-of-a-kind bonus. The default is the original six-card scoring.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Scoring {
    /// The grid's shape: which positions make a column.
    pub shape: GridShape,
    /// Points of a joker.
    pub joker_value: i32,
    /// Whether a column of Twos or of jokers keeps its negative sum (`negative_pairs: "keep"`).
    pub keep_negative_pairs: bool,
    /// Added once per rank that pairs in two columns of a two-row grid (0: none).
    pub four_of_a_kind: i32,
}

impl Default for Scoring {
    fn default() -> Scoring {
        Scoring {
            shape: GridShape::TwoByThree,
            joker_value: -2,
            keep_negative_pairs: false,
            four_of_a_kind: 0,
        }
    }
}

impl Scoring {
    /// The points of one card: Ace 1, Two −2, 3 to 10 face value, Jack and Queen 10, King 0, a
    /// joker `joker_value`.
    pub const fn card_points(&self, card: Card) -> i32 {
        match card.rank() {
            Rank::Joker => self.joker_value,
            rank => RANK_POINTS[rank as usize],
        }
    }

    /// The rank all of `cards` share, if they do (a pair, or a triple in `3x3`).
    fn paired(cards: &[Card]) -> Option<Rank> {
        let rank = cards.first()?.rank();
        cards.iter().all(|card| card.rank() == rank).then_some(rank)
    }

    /// The score of one column (its cards top to bottom): 0 when they all have the same rank,
    /// unless the rank is Two or joker under `keep`; otherwise the sum of their points.
    pub fn column(&self, cards: &[Card]) -> i32 {
        match Scoring::paired(cards) {
            Some(Rank::Two | Rank::Joker) if self.keep_negative_pairs => self.sum(cards),
            Some(_) => 0,
            None => self.sum(cards),
        }
    }

    fn sum(&self, cards: &[Card]) -> i32 {
        cards.iter().map(|&card| self.card_points(card)).sum()
    }

    /// The cards of column `column` of `grid` (row-major), top to bottom.
    pub fn column_cards(&self, grid: &[Card], column: usize) -> Vec<Card> {
        self.shape.column(column).map(|p| grid[p]).collect()
    }

    /// The score of a grid (row-major, `shape.cells()` cards): the sum over its columns, plus
    /// the four-of-a-kind bonus once for each rank that pairs in two columns (two-row grids).
    /// Rows and diagonals never pair.
    pub fn grid(&self, grid: &[Card]) -> i32 {
        let mut paired: Vec<Rank> = Vec::new();
        let mut bonus = 0;
        let mut score = 0;
        for column in 0..self.shape.columns() {
            let cards = self.column_cards(grid, column);
            score += self.column(&cards);
            if let Some(rank) = Scoring::paired(&cards) {
                if paired.contains(&rank) && self.shape.rows() == 2 {
                    bonus = bonus_once(bonus, rank, &paired, self.four_of_a_kind);
                }
                paired.push(rank);
            }
        }
        score + bonus
    }
}

/// The bonus after a second pair column of `rank`: added only the first time `rank` pairs twice
/// (`paired` lists the ranks of the earlier pair columns).
fn bonus_once(bonus: i32, rank: Rank, paired: &[Rank], four_of_a_kind: i32) -> i32 {
    if paired.iter().filter(|&&r| r == rank).count() == 1 {
        bonus + four_of_a_kind
    } else {
        bonus
    }
}

/// The points of one card under the original rules (a joker: −2).
pub const fn card_points(card: Card) -> i32 {
    Scoring {
        shape: GridShape::TwoByThree,
        joker_value: -2,
        keep_negative_pairs: false,
        four_of_a_kind: 0,
    }
    .card_points(card)
}

/// Points by rank, Ace to King (`Rank as usize`).
pub const RANK_POINTS: [i32; 13] = {
    let mut points = [0; 13];
    let mut i = 0;
    while i < 13 {
        points[i] = match Rank::ALL[i] {
            Rank::Ace => 1,
            Rank::Two => -2,
            Rank::Jack | Rank::Queen => 10,
            Rank::King | Rank::Joker => 0,
            rank => rank as i32 + 1,
        };
        i += 1;
    }
    points
};

/// The score of one two-card column under the original rules: 0 for two cards of the same rank
/// (whatever the rank), else the sum.
pub fn column_score(top: Card, bottom: Card) -> i32 {
    Scoring::default().column(&[top, bottom])
}

/// The score of a six-card grid under the original rules (columns `(0,3)`, `(1,4)`, `(2,5)`):
/// the sum over its columns.
pub fn grid_score(grid: &[Card]) -> i32 {
    Scoring::default().grid(grid)
}
