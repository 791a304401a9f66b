//! Cards and grids: [`Card`], [`Rank`], [`Suit`], the card codes of docs/RULES.md (`"AS"`, `"10H"`,
//! `"QC"`, the jokers `"JR"` and `"JB"`), the canonical deck order, the [`GridShape`]s, a grid's
//! [`Position`]s (0..9, row-major) and [`Cells`], the inline list a grid's cells are kept in. Plain
//! data: checking a deck or a position a client gives is [`inputs`](super::inputs)' work.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use utoipa::ToSchema;

/// A card suit, in canonical deck order.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Suit {
    /// `S`
    Spades,
    /// `H`
    Hearts,
    /// `D`
    Diamonds,
    /// `C`
    Clubs,
}

impl Suit {
    /// The four suits in canonical deck order (S, H, D, C).
    pub const ALL: [Suit; 4] = [Suit::Spades, Suit::Hearts, Suit::Diamonds, Suit::Clubs];
}

/// A card rank, Ace to King.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Rank {
    /// `A`, 1 point.
    Ace,
    /// `2`, −2 points.
    Two,
    /// `3`
    Three,
    /// `4`
    Four,
    /// `5`
    Five,
    /// `6`
    Six,
    /// `7`
    Seven,
    /// `8`
    Eight,
    /// `9`
    Nine,
    /// `10`
    Ten,
    /// `J`, 10 points.
    Jack,
    /// `Q`, 10 points.
    Queen,
    /// `K`, 0 points.
    King,
    /// A joker (`JR`, `JB`): its points are the game's `joker_value`; the two jokers pair.
    Joker,
}

impl Rank {
    /// The thirteen ranks of the standard deck, Ace to King (the joker is not among them).
    pub const ALL: [Rank; 13] = [
        Rank::Ace,
        Rank::Two,
        Rank::Three,
        Rank::Four,
        Rank::Five,
        Rank::Six,
        Rank::Seven,
        Rank::Eight,
        Rank::Nine,
        Rank::Ten,
        Rank::Jack,
        Rank::Queen,
        Rank::King,
    ];
}

/// The 54 codes, indexed by canonical card index (suit-major S, H, D, C; rank A..K; then the red
/// and the black joker).
const CODES: [&str; 54] = [
    "AS", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "10S", "JS", "QS", "KS", //
    "AH", "2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "10H", "JH", "QH", "KH", //
    "AD", "2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D", "10D", "JD", "QD", "KD", //
    "AC", "2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "10C", "JC", "QC", "KC", //
    "JR", "JB",
];

/// The rank of each card, by canonical index: a lookup, as every bot decision and every score
/// reads ranks.
const RANKS: [Rank; 54] = {
    let mut ranks = [Rank::Joker; 54];
    let mut i = 0;
    while i < STANDARD_CARDS {
        ranks[i] = Rank::ALL[i % 13];
        i += 1;
    }
    ranks
};

/// Cards of the standard deck, without jokers.
pub const STANDARD_CARDS: usize = 52;

/// One card of the 52-card deck or one of the two jokers, stored as its canonical index (one byte).
///
/// Serialized as its code (`"10H"`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, ToSchema)]
#[schema(value_type = String, example = "10H")]
pub struct Card(u8);

impl Card {
    /// The card of this rank and suit.
    pub const fn new(rank: Rank, suit: Suit) -> Card {
        Card(suit as u8 * 13 + rank as u8)
    }

    /// The card at canonical index `index` (0..54), or `None` past the end.
    pub const fn from_index(index: u8) -> Option<Card> {
        if index < CODES.len() as u8 {
            Some(Card(index))
        } else {
            None
        }
    }

    /// The canonical index (0..54): suit-major S, H, D, C, then rank A..K; 52 and 53 are the
    /// red and the black joker.
    pub const fn index(self) -> u8 {
        self.0
    }

    /// The rank ([`Rank::Joker`] for both jokers).
    pub const fn rank(self) -> Rank {
        RANKS[self.0 as usize]
    }

    /// The suit; `None` for a joker.
    pub const fn suit(self) -> Option<Suit> {
        if self.is_joker() {
            None
        } else {
            Some(Suit::ALL[(self.0 / 13) as usize])
        }
    }

    /// Whether the card is a joker.
    pub const fn is_joker(self) -> bool {
        self.0 as usize >= STANDARD_CARDS
    }

    /// The code, e.g. `"10H"`.
    pub const fn code(self) -> &'static str {
        CODES[self.0 as usize]
    }
}

impl fmt::Display for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl fmt::Debug for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// A string that is not one of the 54 card codes.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
#[error("unknown card code {0:?}")]
pub struct UnknownCard(pub String);

impl FromStr for Card {
    type Err = UnknownCard;

    /// Parses an exact code (`"AS"`, `"10H"`); anything else is an [`UnknownCard`].
    fn from_str(s: &str) -> Result<Card, UnknownCard> {
        CODES
            .iter()
            .position(|code| *code == s)
            .and_then(|i| Card::from_index(i as u8))
            .ok_or_else(|| UnknownCard(s.to_owned()))
    }
}

impl Serialize for Card {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.code())
    }
}

impl<'de> Deserialize<'de> for Card {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Card, D::Error> {
        let code = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        code.parse().map_err(serde::de::Error::custom)
    }
}

/// The canonical deck: `AS 2S … KS AH … KH AD … KD AC … KC`.
pub fn canonical_deck() -> [Card; 52] {
    std::array::from_fn(|i| Card(i as u8))
}

/// The canonical deck of a game with `jokers` jokers (0 or 2): the 52 cards, then `JR` and `JB`.
pub fn game_deck(jokers: u8) -> Vec<Card> {
    (0..(STANDARD_CARDS + usize::from(jokers.min(2))) as u8)
        .map(Card)
        .collect()
}

/// Every card code, the jokers included, in canonical order.
pub fn all_cards() -> impl Iterator<Item = Card> {
    (0..CODES.len() as u8).map(Card)
}

/// The shape of a grid, rows × columns: `"2x3"` (the original six cards), `"2x2"`, `"2x4"`,
/// `"3x3"`. Positions are row-major; a column is every position of one column, top to bottom.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize, ToSchema)]
pub enum GridShape {
    /// Two rows of three: six cards.
    #[default]
    #[serde(rename = "2x3")]
    TwoByThree,
    /// Two rows of two: four cards.
    #[serde(rename = "2x2")]
    TwoByTwo,
    /// Two rows of four: eight cards.
    #[serde(rename = "2x4")]
    TwoByFour,
    /// Three rows of three: nine cards.
    #[serde(rename = "3x3")]
    ThreeByThree,
}

impl GridShape {
    /// Every shape, the default first.
    pub const ALL: [GridShape; 4] = [
        GridShape::TwoByThree,
        GridShape::TwoByTwo,
        GridShape::TwoByFour,
        GridShape::ThreeByThree,
    ];

    /// The shape's name in JSON (`"2x3"`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            GridShape::TwoByThree => "2x3",
            GridShape::TwoByTwo => "2x2",
            GridShape::TwoByFour => "2x4",
            GridShape::ThreeByThree => "3x3",
        }
    }

    /// Number of rows.
    pub const fn rows(self) -> usize {
        match self {
            GridShape::ThreeByThree => 3,
            _ => 2,
        }
    }

    /// Number of columns.
    pub const fn columns(self) -> usize {
        match self {
            GridShape::TwoByTwo => 2,
            GridShape::TwoByThree | GridShape::ThreeByThree => 3,
            GridShape::TwoByFour => 4,
        }
    }

    /// Number of cells (cards per grid).
    pub const fn cells(self) -> usize {
        self.rows() * self.columns()
    }

    /// The positions of column `column`, top to bottom.
    pub fn column(self, column: usize) -> impl Iterator<Item = usize> {
        (0..self.rows()).map(move |row| row * self.columns() + column)
    }
}

/// A position in a grid, 0..9, row-major (`2x3`: top row `0 1 2`, bottom row `3 4 5`); a game
/// takes only the positions of its grid.
///
/// Serialized as an integer; deserializing a value out of range fails.
// The range check (`Position::new`, `TryFrom<i64>`, `Deserialize`) is in `inputs`, with the
// other checks of what a client sends: this doc is also the schema's description.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Default, ToSchema)]
#[schema(value_type = u8, minimum = 0, maximum = 8)]
pub struct Position(u8);

impl Position {
    /// The nine positions of the largest grid, in order (a grid of `n` cells has the first `n`).
    pub const ALL: [Position; MAX_CELLS] = [
        Position(0),
        Position(1),
        Position(2),
        Position(3),
        Position(4),
        Position(5),
        Position(6),
        Position(7),
        Position(8),
    ];

    /// The position as an integer 0..9.
    pub const fn get(self) -> u8 {
        self.0
    }

    /// The position as an array index 0..9.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl Serialize for Position {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u8(self.0)
    }
}

/// The most cells of a grid (`3x3`).
pub const MAX_CELLS: usize = 9;

/// Up to [`MAX_CELLS`] values kept inline (`Copy`, no allocation): a grid's cards, which of them
/// are face up, a reveal's positions. Behaves as a slice; serialized as a JSON list.
#[derive(Clone, Copy)]
pub struct Cells<T> {
    items: [T; MAX_CELLS],
    len: u8,
}

impl<T: Copy + Default> Cells<T> {
    /// `len` (at most [`MAX_CELLS`]) copies of `value`.
    pub fn filled(len: usize, value: T) -> Cells<T> {
        Cells::from_fn(len, |_| value)
    }

    /// The values `f(0), f(1), …, f(len - 1)` (`len` at most [`MAX_CELLS`]).
    pub fn from_fn(len: usize, mut f: impl FnMut(usize) -> T) -> Cells<T> {
        let len = len.min(MAX_CELLS);
        Cells {
            items: std::array::from_fn(|i| if i < len { f(i) } else { T::default() }),
            len: len as u8,
        }
    }

    /// The values of `slice`, or `None` when it holds more than [`MAX_CELLS`].
    pub fn from_slice(slice: &[T]) -> Option<Cells<T>> {
        (slice.len() <= MAX_CELLS).then(|| Cells::from_fn(slice.len(), |i| slice[i]))
    }
}

impl<T> std::ops::Deref for Cells<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.items[..usize::from(self.len)]
    }
}

impl<T> std::ops::DerefMut for Cells<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.items[..usize::from(self.len)]
    }
}

impl<T: PartialEq> PartialEq for Cells<T> {
    fn eq(&self, other: &Cells<T>) -> bool {
        **self == **other
    }
}

impl<T: Eq> Eq for Cells<T> {}

impl<T: std::hash::Hash> std::hash::Hash for Cells<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (**self).hash(state);
    }
}

impl<T: fmt::Debug> fmt::Debug for Cells<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Default + Copy> Default for Cells<T> {
    fn default() -> Cells<T> {
        Cells::from_fn(0, |_| T::default())
    }
}

impl<T: Serialize> Serialize for Cells<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de, T: Deserialize<'de> + Copy + Default> Deserialize<'de> for Cells<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Cells<T>, D::Error> {
        let values = Vec::<T>::deserialize(deserializer)?;
        Cells::from_slice(&values)
            .ok_or_else(|| serde::de::Error::invalid_length(values.len(), &"at most 9 values"))
    }
}

impl<T: Copy + Default, const N: usize> From<[T; N]> for Cells<T> {
    /// The values of `array` (its first [`MAX_CELLS`] only).
    fn from(array: [T; N]) -> Cells<T> {
        Cells::from_fn(N, |i| array[i])
    }
}
