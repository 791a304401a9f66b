//! Seat, host and account tokens: making them, storing only their hashes, and telling who
//! presents one in a game.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::engine::{Seat, Viewer};
use crate::service::ServiceError;
use crate::store::GameRecord;

/// What a request's token proved about its sender, once checked against the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credential {
    /// No token.
    Anonymous,
    /// The host token.
    Host,
    /// A seat token, or the token of the account bound to the seat.
    Seat(Seat),
    /// The token of an account that holds no seat of the game and is not its host: it reads as
    /// a spectator.
    Account,
}

impl Credential {
    /// What the holder may see: a seat's cards, or a spectator's (the host sees no cards).
    pub fn viewer(self) -> Viewer {
        match self {
            Credential::Seat(seat) => Viewer::Seat(seat),
            Credential::Anonymous | Credential::Host | Credential::Account => Viewer::Spectator,
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

/// What the token of account `username` is in `record`'s game: its seat's token, its host's,
/// or a spectator's.
pub fn account_credential(record: &GameRecord, username: &str) -> Credential {
    let seat = record
        .accounts
        .seats
        .iter()
        .find(|(_, name)| name == username);
    match seat {
        Some((seat, _)) => Credential::Seat(*seat as Seat),
        None if record.accounts.host.as_deref() == Some(username) => Credential::Host,
        None => Credential::Account,
    }
}

/// The seat whose token hash equals `token_hash`, comparing every row in constant time.
fn find_seat(hashes: &[(i32, Option<[u8; 32]>)], token_hash: &[u8; 32]) -> Option<i32> {
    let mut found = None;
    for (seat, hash) in hashes {
        if let Some(hash) = hash {
            let equal: bool = hash.ct_eq(token_hash).into();
            if equal && found.is_none() {
                found = Some(*seat);
            }
        }
    }
    found
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

    /// What the database keeps of `token`.
    pub fn hash_of(token: &str) -> [u8; 32] {
        Sha256::digest(token.as_bytes()).into()
    }
}

/// `N` bytes from the operating system's random number generator.
pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).expect("the operating system's random number generator works");
    bytes
}

#[cfg(test)]
mod tests {
    use super::find_seat;

    #[test]
    fn a_seat_is_found_by_its_token_hash_and_a_bot_by_none() {
        let hashes = [(0, Some([9; 32])), (1, None), (2, Some([7; 32]))];
        assert_eq!(find_seat(&hashes, &[9; 32]), Some(0));
        assert_eq!(find_seat(&hashes, &[7; 32]), Some(2));
        assert_eq!(find_seat(&hashes, &[8; 32]), None);
        assert_eq!(find_seat(&[], &[9; 32]), None);
    }
}
