//! `Idempotency-Key`s: checking them, fingerprinting the request, and replaying stored answers.
//!
//! A retried request with the same key and body gets the answer stored for the first one, as it
//! was; another body with the same key is refused. The database keeps only a hash of each key,
//! and a stored creation answer keeps its host token masked with a pad derived from the key, so
//! that what the database holds opens no game.

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::service::ServiceError;
use crate::store::StoredResponse;

/// The shortest `Idempotency-Key` accepted on game creation.
pub const MIN_CREATION_KEY_LEN: usize = 22;

/// A write's answer: computed now, or stored for the first request with the same key.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer<T> {
    /// What the write did now.
    Fresh(T),
    /// The answer stored for the first request with this key: its status and body as they were.
    Replayed(StoredResponse),
}

/// A client's `Idempotency-Key` with the fingerprint of the request it came with.
#[derive(Debug, Clone)]
pub struct IdempotencyKey {
    key: String,
    fingerprint: String,
}

impl IdempotencyKey {
    /// Checks a move's key (1 to 255 visible ASCII characters) and fingerprints the body. A move
    /// key is scoped to the game and the seat whose token comes with it.
    pub fn for_move(key: &str, body: &[u8]) -> Result<Self, ServiceError> {
        Self::new(key, body, 1)
    }

    /// Checks a creation key and fingerprints the body. Creation keys share one scope across all
    /// clients and replay a host token, so they must be hard to guess: at least
    /// [`MIN_CREATION_KEY_LEN`] characters (a UUID fits).
    pub fn for_creation(key: &str, body: &[u8]) -> Result<Self, ServiceError> {
        Self::new(key, body, MIN_CREATION_KEY_LEN)
    }

    fn new(key: &str, body: &[u8], min_len: usize) -> Result<Self, ServiceError> {
        let valid =
            (min_len..=255).contains(&key.len()) && key.bytes().all(|byte| byte.is_ascii_graphic());
        if !valid {
            return Err(ServiceError::Malformed(format!(
                "Idempotency-Key must be {min_len} to 255 visible ASCII characters."
            )));
        }
        Ok(IdempotencyKey {
            key: key.to_owned(),
            fingerprint: hex::encode(Sha256::digest(body)),
        })
    }

    /// What the database keeps of the key: its hash, so that the key itself (which unmasks a
    /// stored host token) never rests in the database.
    pub fn storage_key(&self) -> String {
        hex::encode(Sha256::digest(format!("golf-idempotency:{}", self.key)))
    }

    /// The fingerprint of the request body the key came with.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// The stored answer, if it answered this same request; another body is a reused key.
    pub fn replay(&self, stored: StoredResponse) -> Result<StoredResponse, ServiceError> {
        if stored.fingerprint == self.fingerprint {
            Ok(stored)
        } else {
            Err(ServiceError::IdempotencyKeyReused)
        }
    }

    /// A creation answer with its `host_token` XORed with a pad only the key's holder can
    /// derive: applied once before storing, and once more to unmask a replay.
    pub fn mask_host_token(&self, body: &Value) -> Value {
        let mut masked = body.clone();
        if let Some(token) = body["host_token"]
            .as_str()
            .and_then(|t| hex::decode(t).ok())
        {
            let pad: [u8; 32] = Sha256::digest(format!("golf-host-token:{}", self.key)).into();
            let xored: Vec<u8> = token.iter().zip(pad.iter()).map(|(t, p)| t ^ p).collect();
            masked["host_token"] = Value::String(hex::encode(xored));
        }
        masked
    }
}
