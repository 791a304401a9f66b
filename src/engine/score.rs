//! Scoring: card points, column pairs and a grid's score for a hole (docs/RULES.md "Scoring").

use super::cards::{Card, Rank};

/// The points of one card: Ace 1, Two −2, 3 to 10 face value, Jack and Queen 10, King 0.
pub const fn card_points(card: Card) -> i32 {
    POINTS[card.rank() as usize]
}

/// Points by rank, Ace to King.
const POINTS: [i32; 13] = {
    let mut points = [0; 13];
    let mut i = 0;
    while i < 13 {
        points[i] = match Rank::ALL[i] {
            Rank::Ace => 1,
            Rank::Two => -2,
            Rank::Jack | Rank::Queen => 10,
            Rank::King => 0,
            rank => rank as i32 + 1,
        };
        i += 1;
    }
    points
};

/// The score of one column: 0 for two cards of the same rank (whatever the rank), else the sum.
pub const fn column_score(top: Card, bottom: Card) -> i32 {
    if top.rank() as u8 == bottom.rank() as u8 {
        0
    } else {
        card_points(top) + card_points(bottom)
    }
}

/// The score of a grid (row-major, columns `(0,3)`, `(1,4)`, `(2,5)`): the sum over its columns.
/// Rows and diagonals never pair.
pub fn grid_score(grid: &[Card; 6]) -> i32 {
    (0..3).map(|c| column_score(grid[c], grid[c + 3])).sum()
}
