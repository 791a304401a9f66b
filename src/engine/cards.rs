//! Cards and grid positions: [`Card`], [`Rank`], [`Suit`], the card codes of docs/RULES.md
//! (`"AS"`, `"10H"`, `"QC"`), the canonical deck order and [`Position`] (0..6, row-major). Plain
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
}

impl Rank {
    /// The thirteen ranks, Ace to King.
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

/// The 52 codes, indexed by canonical card index (suit-major S, H, D, C; rank A..K).
const CODES: [&str; 52] = [
    "AS", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "10S", "JS", "QS", "KS", //
    "AH", "2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "10H", "JH", "QH", "KH", //
    "AD", "2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D", "10D", "JD", "QD", "KD", //
    "AC", "2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "10C", "JC", "QC", "KC",
];

/// One card of the standard 52-card deck, stored as its canonical index (one byte).
///
/// Serialized as its code (`"10H"`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, ToSchema)]
#[schema(value_type = String, example = "10H")]
pub struct Card(u8);

impl Card {
    /// The card of this rank and suit.
    pub const fn new(rank: Rank, suit: Suit) -> Card {
        Card(suit as u8 * 13 + rank as u8)
    }

    /// The card at canonical index `index` (0..52), or `None` past the end.
    pub const fn from_index(index: u8) -> Option<Card> {
        if index < 52 { Some(Card(index)) } else { None }
    }

    /// The canonical index (0..52): suit-major S, H, D, C, then rank A..K.
    pub const fn index(self) -> u8 {
        self.0
    }

    /// The rank.
    pub const fn rank(self) -> Rank {
        Rank::ALL[(self.0 % 13) as usize]
    }

    /// The suit.
    pub const fn suit(self) -> Suit {
        Suit::ALL[(self.0 / 13) as usize]
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

/// A string that is not one of the 52 card codes.
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

/// A position in a grid, 0..6, row-major: top row `0 1 2`, bottom row `3 4 5`.
///
/// Serialized as an integer; deserializing a value out of range fails.
// The range check (`Position::new`, `TryFrom<i64>`, `Deserialize`) is in `inputs`, with the
// other checks of what a client sends: this doc is also the schema's description.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, ToSchema)]
#[schema(value_type = u8, minimum = 0, maximum = 5)]
pub struct Position(u8);

impl Position {
    /// The six positions in order.
    pub const ALL: [Position; 6] = [
        Position(0),
        Position(1),
        Position(2),
        Position(3),
        Position(4),
        Position(5),
    ];

    /// The position as an integer 0..6.
    pub const fn get(self) -> u8 {
        self.0
    }

    /// The position as an array index 0..6.
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The other position of the same column (`(0,3)`, `(1,4)`, `(2,5)`).
    pub const fn column_partner(self) -> Position {
        Position((self.0 + 3) % 6)
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
