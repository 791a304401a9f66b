//! `Idempotency-Key`s: checking them, fingerprinting the request, and replaying stored answers.
//!
//! A retried request with the same key and body gets the answer stored for the first one, as it
//! was; another body with the same key is refused. A key is valid only in its scope: a move's or
//! a leave's in the game and seat whose token comes with it (the store keeps them apart); a
//! creation's or a join's, which answer with a secret token to anyone, in the client that sent it
//! (its address), so that another client presenting the same key gets an answer of its own. The
//! database keeps only a hash of each key with its scope, and a stored answer keeps its tokens
//! masked with a pad derived from the key, so that what the database holds opens no game.

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::service::{Games, ServiceError};
use crate::store::codec::to_json;
use crate::store::{GameIdempotency, StoredResponse};

/// The shortest `Idempotency-Key` accepted where a replay returns a secret token: on game
/// creation and joins.
pub const MIN_CREATION_KEY_LEN: usize = 22;

/// The secret fields of stored answers (a creation's host token, a join's seat token), each with
/// the label of the pad that masks it.
const SECRET_FIELDS: [(&str, &str); 2] = [
    ("host_token", "golf-host-token"),
    ("token", "golf-seat-token"),
];

/// A write's answer: computed now, or stored for the first request with the same key.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer<T> {
    /// What the write did now.
    Fresh(T),
    /// The answer stored for the first request with this key: its status and body as they were.
    Replayed(StoredResponse),
}

/// A client's `Idempotency-Key` with its scope and the fingerprint of the request it came with.
#[derive(Debug, Clone)]
pub struct IdempotencyKey {
    key: String,
    /// The client a creation's or join's key belongs to; `None` for a move's or leave's, which
    /// the store scopes to the game and seat.
    client: Option<String>,
    fingerprint: String,
}

impl IdempotencyKey {
    /// Checks a move's key (1 to 255 visible ASCII characters) and fingerprints the body. A move
    /// key is scoped to the game and the seat whose token comes with it.
    pub fn for_move(key: &str, body: &[u8]) -> Result<Self, ServiceError> {
        Self::new(key, body, 1, None)
    }

    /// Checks a leave's key, scoped as a move's and shared with the seat's moves: a leave has no
    /// body, so its fingerprint is of its name, which no move's JSON body is.
    pub fn for_leave(key: &str) -> Result<Self, ServiceError> {
        Self::new(key, b"leave", 1, None)
    }

    /// Checks a creation key and fingerprints the body. The key is scoped to `client`, the
    /// identity of its sender; a replay returns a host token, so the key must also be hard to
    /// guess: at least [`MIN_CREATION_KEY_LEN`] characters (a UUID fits).
    pub fn for_creation(key: &str, body: &[u8], client: &str) -> Result<Self, ServiceError> {
        Self::new(key, body, MIN_CREATION_KEY_LEN, Some(client))
    }

    /// Checks an account creation's key, as a game creation's (a replay returns the account
    /// token), in a scope of its own: the same key creates a game and an account apart.
    pub fn for_account_creation(
        key: &str,
        body: &[u8],
        client: &str,
    ) -> Result<Self, ServiceError> {
        Self::new(
            key,
            body,
            MIN_CREATION_KEY_LEN,
            Some(&format!("{client}/accounts")),
        )
    }

    /// Checks a join key and fingerprints the body: scoped to `client` within the game, and as
    /// long as a creation key, since a replay returns a seat token.
    pub fn for_join(key: &str, body: &[u8], client: &str) -> Result<Self, ServiceError> {
        Self::new(key, body, MIN_CREATION_KEY_LEN, Some(client))
    }

    fn new(
        key: &str,
        body: &[u8],
        min_len: usize,
        client: Option<&str>,
    ) -> Result<Self, ServiceError> {
        let valid =
            (min_len..=255).contains(&key.len()) && key.bytes().all(|byte| byte.is_ascii_graphic());
        if !valid {
            return Err(ServiceError::Malformed(format!(
                "Idempotency-Key must be {min_len} to 255 visible ASCII characters."
            )));
        }
        Ok(IdempotencyKey {
            key: key.to_owned(),
            client: client.map(str::to_owned),
            fingerprint: hex::encode(Sha256::digest(body)),
        })
    }

    /// What the database keeps of the key: a hash of it with its client, so that the key itself
    /// (which unmasks a stored token) never rests in the database. A key holds no space, so no
    /// key of one scope hashes as another's; a move's is hashed as earlier releases stored it.
    pub fn storage_key(&self) -> String {
        let scoped = match &self.client {
            None => format!("golf-idempotency:{}", self.key),
            Some(client) => format!("golf-idempotency client {client} key {}", self.key),
        };
        hex::encode(Sha256::digest(scoped))
    }

    /// The fingerprint of the request the key came with.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// The stored answer, its tokens unmasked, if it answered this same request; another request
    /// is a reused key.
    pub fn replay(&self, stored: StoredResponse) -> Result<StoredResponse, ServiceError> {
        if stored.fingerprint != self.fingerprint {
            return Err(ServiceError::IdempotencyKeyReused);
        }
        Ok(StoredResponse {
            body: self.mask_tokens(&stored.body),
            ..stored
        })
    }

    /// The record that answers retries with this key in the scope of `seat` (a seat, or
    /// [`crate::store::JOIN_SCOPE`]): `answer` with `status`, its tokens masked.
    pub fn record(&self, seat: i32, status: u16, answer: &impl Serialize) -> GameIdempotency {
        GameIdempotency {
            seat,
            key: self.storage_key(),
            fingerprint: self.fingerprint.clone(),
            response_status: status,
            response_body: self.mask_tokens(&to_json(answer)),
        }
    }

    /// An answer with its secret tokens XORed with pads only the key's holder can derive:
    /// applied once before storing, and once more to unmask a replay.
    pub fn mask_tokens(&self, body: &Value) -> Value {
        let mut masked = body.clone();
        for (field, label) in SECRET_FIELDS {
            if let Some(token) = body[field].as_str().and_then(|t| hex::decode(t).ok()) {
                let pad: [u8; 32] = Sha256::digest(format!("{label}:{}", self.key)).into();
                let xored: Vec<u8> = token.iter().zip(pad.iter()).map(|(t, p)| t ^ p).collect();
                masked[field] = Value::String(hex::encode(xored));
            }
        }
        masked
    }
}

impl Games {
    /// The answer stored for a retry with `key` in the scope of `seat` of game `id` (a seat, or
    /// [`crate::store::JOIN_SCOPE`]), if there is one; a key that answered another request is
    /// refused.
    pub(super) async fn stored_answer(
        &self,
        id: Uuid,
        seat: i32,
        key: Option<&IdempotencyKey>,
    ) -> Result<Option<StoredResponse>, ServiceError> {
        let Some(key) = key else {
            return Ok(None);
        };
        let stored = self
            .store
            .find_game_response(id, seat, &key.storage_key())
            .await?;
        stored.map(|stored| key.replay(stored)).transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const KEY: &str = "3b8f6e2a-91c4-4f0d-a7e5-0c1d";

    #[test]
    fn a_key_is_stored_apart_for_each_client_and_a_moves_as_before() {
        let from = |client| IdempotencyKey::for_join(KEY, b"{}", client).unwrap();
        assert_ne!(
            from("192.0.2.1").storage_key(),
            from("192.0.2.2").storage_key()
        );
        let move_key = IdempotencyKey::for_move(KEY, b"{}").unwrap();
        assert_ne!(move_key.storage_key(), from("192.0.2.1").storage_key());
        let earlier = hex::encode(Sha256::digest(format!("golf-idempotency:{KEY}")));
        assert_eq!(
            move_key.storage_key(),
            earlier,
            "moves stored by earlier releases replay"
        );
    }

    #[test]
    fn a_stored_join_keeps_its_token_masked_and_a_replay_unmasks_it() {
        let key = IdempotencyKey::for_join(KEY, b"{}", "192.0.2.1").unwrap();
        let token = "ab".repeat(32);
        let record = key.record(
            crate::store::JOIN_SCOPE,
            201,
            &json!({"seat": 0, "token": token}),
        );
        assert_ne!(record.response_body["token"], token.as_str());
        let stored = StoredResponse {
            fingerprint: record.fingerprint,
            status: record.response_status,
            body: record.response_body,
        };
        let replayed = key.replay(stored.clone()).unwrap();
        assert_eq!(replayed.body, json!({"seat": 0, "token": token}));
        let other_body = IdempotencyKey::for_join(KEY, b"{\"a\":1}", "192.0.2.1").unwrap();
        assert!(matches!(
            other_body.replay(stored),
            Err(ServiceError::IdempotencyKeyReused)
        ));
    }
}
