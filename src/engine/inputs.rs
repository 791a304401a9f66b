//! What a client gives, checked, each refusal a [`RuleError`]: a joining player's [`PlayerName`]
//! and [`ClientSeed`], a grid [`Position`] given as an integer (in a move, or read from JSON) and
//! an explicit deck ([`parse_deck`]).

use std::ops::RangeInclusive;

use serde::{Deserialize, Deserializer, Serialize};
use utoipa::ToSchema;

use super::cards::{Card, MAX_CELLS, Position, STANDARD_CARDS, UnknownCard};
use super::error::RuleError;

/// The most Unicode scalar values in a [`PlayerName`].
pub const MAX_NAME_CHARS: usize = 40;
/// The most Unicode scalar values in a [`ClientSeed`].
pub const MAX_CLIENT_SEED_CHARS: usize = 64;

/// A player's name: 1 to 40 Unicode scalar values after trimming white space at both ends, with
/// no control character (category Cc) anywhere.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize, ToSchema)]
#[serde(try_from = "String", into = "String")]
#[schema(value_type = String)]
pub struct PlayerName(String);

impl PlayerName {
    /// Trims and checks a name; fails with [`RuleError::InvalidName`].
    pub fn parse(raw: &str) -> Result<PlayerName, RuleError> {
        if raw.chars().any(char::is_control) {
            return Err(RuleError::InvalidName(
                "a name may not contain control characters".into(),
            ));
        }
        let name = raw.trim();
        match name.chars().count() {
            0 => Err(RuleError::InvalidName("a name may not be empty".into())),
            1..=MAX_NAME_CHARS => Ok(PlayerName(name.to_owned())),
            n => Err(RuleError::InvalidName(format!(
                "a name has at most {MAX_NAME_CHARS} characters, this one has {n}"
            ))),
        }
    }

    /// A name a player chooses now: as [`PlayerName::parse`], without the invisible or
    /// direction-changing characters ([`is_deceptive`]) that let one name pass for another, and
    /// at most [`MAX_NAME_CHARS`] as sent (white space around it counts), so that a schema can
    /// say the limit. Names already in logs were checked by `parse` alone, which their replays
    /// keep using.
    pub fn choose(raw: &str) -> Result<PlayerName, RuleError> {
        if raw.chars().any(is_deceptive) {
            return Err(RuleError::InvalidName(
                "a name may not contain invisible or direction-changing characters".into(),
            ));
        }
        let sent = raw.chars().count();
        if sent > MAX_NAME_CHARS {
            return Err(RuleError::InvalidName(format!(
                "a name has at most {MAX_NAME_CHARS} characters, white space included; this one has {sent}"
            )));
        }
        PlayerName::parse(raw)
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A character that changes the direction of the text around it (bidirectional controls) or
/// shows as nothing at all (zero-width and filler characters): in a name or a seed shown to
/// others, it makes one text look like another.
pub fn is_deceptive(c: char) -> bool {
    DECEPTIVE.iter().any(|range| range.contains(&c))
}

/// The characters of [`is_deceptive`], as ranges: the API's schema spells them out from here.
pub const DECEPTIVE: &[RangeInclusive<char>] = &[
    '\u{00AD}'..='\u{00AD}',
    '\u{034F}'..='\u{034F}',
    '\u{061C}'..='\u{061C}',
    '\u{115F}'..='\u{1160}',
    '\u{180E}'..='\u{180E}',
    '\u{200B}'..='\u{200F}',
    '\u{202A}'..='\u{202E}',
    '\u{2060}'..='\u{2064}',
    '\u{2066}'..='\u{2069}',
    '\u{3164}'..='\u{3164}',
    '\u{FEFF}'..='\u{FEFF}',
    '\u{FFA0}'..='\u{FFA0}',
];

impl TryFrom<String> for PlayerName {
    type Error = RuleError;
    fn try_from(raw: String) -> Result<PlayerName, RuleError> {
        PlayerName::parse(&raw)
    }
}

impl From<PlayerName> for String {
    fn from(name: PlayerName) -> String {
        name.0
    }
}

/// A player's client seed: at most 64 Unicode scalar values, no control characters; `""` when
/// none is given (and for bots).
#[derive(Clone, PartialEq, Eq, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(try_from = "String", into = "String")]
#[schema(value_type = String)]
pub struct ClientSeed(String);

impl ClientSeed {
    /// Checks a client seed (kept as given, not trimmed); fails with
    /// [`RuleError::InvalidClientSeed`].
    pub fn parse(raw: &str) -> Result<ClientSeed, RuleError> {
        if raw.chars().any(char::is_control) {
            return Err(RuleError::InvalidClientSeed(
                "a client seed may not contain control characters".into(),
            ));
        }
        let n = raw.chars().count();
        if n > MAX_CLIENT_SEED_CHARS {
            return Err(RuleError::InvalidClientSeed(format!(
                "a client seed has at most {MAX_CLIENT_SEED_CHARS} characters, this one has {n}"
            )));
        }
        Ok(ClientSeed(raw.to_owned()))
    }

    /// A seed a player gives now: as [`ClientSeed::parse`], and without the characters of
    /// [`is_deceptive`]. Seeds already in logs keep replaying through `parse` alone.
    pub fn choose(raw: &str) -> Result<ClientSeed, RuleError> {
        if raw.chars().any(is_deceptive) {
            return Err(RuleError::InvalidClientSeed(
                "a client seed may not contain invisible or direction-changing characters".into(),
            ));
        }
        ClientSeed::parse(raw)
    }

    /// The seed as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for ClientSeed {
    type Error = RuleError;
    fn try_from(raw: String) -> Result<ClientSeed, RuleError> {
        ClientSeed::parse(&raw)
    }
}

impl From<ClientSeed> for String {
    fn from(seed: ClientSeed) -> String {
        seed.0
    }
}

impl Position {
    /// The position `value`, or [`RuleError::PositionOutOfRange`] unless `value < 9`.
    pub fn new(value: u8) -> Result<Position, RuleError> {
        Position::try_from(i64::from(value))
    }

    /// The position `value` of a grid of `cells` cells, or [`RuleError::PositionOutOfRange`].
    pub fn within(value: i64, cells: usize) -> Result<Position, RuleError> {
        match usize::try_from(value) {
            Ok(index) if index < cells.min(MAX_CELLS) => Ok(Position::ALL[index]),
            _ => Err(RuleError::PositionOutOfRange {
                position: value,
                cells: cells as u8,
            }),
        }
    }
}

impl TryFrom<i64> for Position {
    type Error = RuleError;

    /// Any integer, as received from a client; out of 0..9 (the largest grid) is
    /// [`RuleError::PositionOutOfRange`].
    fn try_from(value: i64) -> Result<Position, RuleError> {
        Position::within(value, MAX_CELLS)
    }
}

impl<'de> Deserialize<'de> for Position {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Position, D::Error> {
        let value = i64::deserialize(deserializer)?;
        Position::try_from(value).map_err(serde::de::Error::custom)
    }
}

/// Parses a full deck given as codes: a permutation of the 52 cards, or of the 52 cards and the
/// two jokers (54).
///
/// Fails with [`RuleError::InvalidDeck`] naming the problem: wrong length, unknown code or duplicate.
pub fn parse_deck(codes: &[String]) -> Result<Vec<Card>, RuleError> {
    if codes.len() != STANDARD_CARDS && codes.len() != STANDARD_CARDS + 2 {
        return Err(RuleError::InvalidDeck(format!(
            "a deck lists 52 cards (54 with the jokers), this one lists {}",
            codes.len()
        )));
    }
    let mut deck = Vec::with_capacity(codes.len());
    let mut seen = [false; STANDARD_CARDS + 2];
    for code in codes {
        let card: Card = code
            .parse()
            .map_err(|e: UnknownCard| RuleError::InvalidDeck(e.to_string()))?;
        if usize::from(card.index()) >= codes.len() {
            return Err(RuleError::InvalidDeck(format!(
                "the joker {card} is only in a deck of 54 cards"
            )));
        }
        if std::mem::replace(&mut seen[card.index() as usize], true) {
            return Err(RuleError::InvalidDeck(format!(
                "the card {card} appears twice"
            )));
        }
        deck.push(card);
    }
    Ok(deck)
}
