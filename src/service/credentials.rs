//! Seat and host tokens: making them, storing only their hashes, and telling who presents one.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::engine::{Seat, Viewer};
use crate::service::ServiceError;
use crate::store::{GameRecord, find_seat};

/// What a request's token proved about its sender, once checked against the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credential {
    /// No token.
    Anonymous,
    /// The host token.
    Host,
    /// A seat token.
    Seat(Seat),
}

impl Credential {
    /// What the holder may see: a seat's cards, or a spectator's (the host sees no cards).
    pub fn viewer(self) -> Viewer {
        match self {
            Credential::Seat(seat) => Viewer::Seat(seat),
            Credential::Anonymous | Credential::Host => Viewer::Spectator,
        }
    }
}

/// Who `token` belongs to in `record`'s game; a token that is neither a seat's nor the host's
/// is refused, never treated as anonymous.
pub fn authenticate(record: &GameRecord, token: Option<&str>) -> Result<Credential, ServiceError> {
    let Some(token) = token else {
        return Ok(Credential::Anonymous);
    };
    let hash = Token::hash_of(token);
    if bool::from(hash.ct_eq(&record.host_token_hash)) {
        return Ok(Credential::Host);
    }
    match find_seat(&record.seat_tokens, &hash) {
        Some(seat) => Ok(Credential::Seat(seat as Seat)),
        None => Err(ServiceError::Unauthorized(
            "This token is not a seat or host token of this game.",
        )),
    }
}

/// A 256-bit secret token, shown once, stored only as its SHA-256.
pub struct Token(pub String);

impl Token {
    /// A fresh token from the operating system's random number generator.
    pub fn generate() -> Token {
        Token(hex::encode(random_bytes::<32>()))
    }

    /// What the database keeps of the token.
    pub fn hash(&self) -> [u8; 32] {
        Token::hash_of(&self.0)
    }

    fn hash_of(token: &str) -> [u8; 32] {
        Sha256::digest(token.as_bytes()).into()
    }
}

/// `N` bytes from the operating system's random number generator.
pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).expect("the operating system's random number generator works");
    bytes
}
