//! The hash chain of a game's log (API.md, "The log").
//!
//! Every entry carries a `salt` derived from the game's server seed and its `seq`, and a `hash` that
//! covers the previous hash and the RFC 8785 canonical JSON (JCS) of the entry without its `hash`:
//!
//! ```text
//! salt_n = hex(SHA-256(server_seed ‖ "golf-salt" ‖ u64be(n))[..16])
//! hash_n = hex(SHA-256(H_{n-1} ‖ JCS({"seq", "at", "type", "data", "salt"})))   H_0 = 32 zero bytes
//! ```
//!
//! [`seal`] is the one place that turns new events into chained entries; [`verify_chain`] checks a
//! complete log against a server seed.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{Entry, NewEvent};

/// The hash that precedes entry 1.
pub const GENESIS: [u8; 32] = [0; 32];

/// Why a log does not verify. Each variant names the first entry that is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainError {
    /// Entries must be numbered 1, 2, 3, ... with no gap.
    #[error("entry at position {position} has seq {found}, expected {expected}")]
    Sequence {
        position: usize,
        expected: i64,
        found: i64,
    },
    /// The salt is not the one the server seed gives for this seq.
    #[error("entry {seq} has a wrong salt")]
    Salt { seq: i64 },
    /// The hash does not match the previous hash and the entry's content.
    #[error("entry {seq} has a wrong hash")]
    Hash { seq: i64 },
    /// The entry cannot be written as canonical JSON.
    #[error("entry {seq} cannot be canonicalized: {reason}")]
    Encoding { seq: i64, reason: String },
}

/// The lowercase hex salt of entry `seq` (16 bytes, 32 hex digits).
pub fn salt(server_seed: &[u8; 32], seq: i64) -> String {
    let digest = Sha256::new()
        .chain_update(server_seed)
        .chain_update(b"golf-salt")
        .chain_update((seq as u64).to_be_bytes())
        .finalize();
    hex::encode(&digest[..16])
}

/// The hash of one entry given the previous hash (`GENESIS` for entry 1).
///
/// Fails only when the content cannot be canonicalized.
pub fn entry_hash(
    prev: &[u8; 32],
    seq: i64,
    at: &str,
    kind: &str,
    data: &Value,
    salt: &str,
) -> Result<[u8; 32], ChainError> {
    let unhashed = json!({"seq": seq, "at": at, "type": kind, "data": data, "salt": salt});
    let canonical = serde_jcs::to_vec(&unhashed).map_err(|e| ChainError::Encoding {
        seq,
        reason: e.to_string(),
    })?;
    Ok(Sha256::new()
        .chain_update(prev)
        .chain_update(canonical)
        .finalize()
        .into())
}

/// Numbers `events` from `first_seq` on and chains them after `prev`.
///
/// Returns the entries and the new head hash (`prev` when `events` is empty).
pub fn seal(
    server_seed: &[u8; 32],
    prev: [u8; 32],
    first_seq: i64,
    events: Vec<NewEvent>,
) -> Result<(Vec<Entry>, [u8; 32]), ChainError> {
    let mut head = prev;
    let mut entries = Vec::with_capacity(events.len());
    for (seq, event) in (first_seq..).zip(events) {
        let salt = salt(server_seed, seq);
        head = entry_hash(&head, seq, &event.at, &event.kind, &event.data, &salt)?;
        entries.push(Entry {
            seq,
            at: event.at,
            kind: event.kind,
            data: event.data,
            salt,
            hash: hex::encode(head),
        });
    }
    Ok((entries, head))
}

/// Checks a complete log (entries 1..=n, in order): every seq, salt and hash.
///
/// Returns the head hash (`GENESIS` for an empty log), or the first entry that is wrong.
pub fn verify_chain(server_seed: &[u8; 32], entries: &[Entry]) -> Result<[u8; 32], ChainError> {
    let mut head = GENESIS;
    for (position, (expected, entry)) in (1..).zip(entries).enumerate() {
        if entry.seq != expected {
            return Err(ChainError::Sequence {
                position,
                expected,
                found: entry.seq,
            });
        }
        if entry.salt != salt(server_seed, entry.seq) {
            return Err(ChainError::Salt { seq: entry.seq });
        }
        let hash = entry_hash(
            &head,
            entry.seq,
            &entry.at,
            &entry.kind,
            &entry.data,
            &entry.salt,
        )?;
        if entry.hash != hex::encode(hash) {
            return Err(ChainError::Hash { seq: entry.seq });
        }
        head = hash;
    }
    Ok(head)
}
