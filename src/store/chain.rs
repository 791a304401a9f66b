//! The hash chain of a game's log (docs/API.md, "The log").
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

use serde::Serialize;
use serde_json::Value;
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
    let unhashed = Unhashed {
        at,
        data,
        salt,
        seq,
        kind,
    };
    let canonical = canonical_json(&unhashed).map_err(|e| ChainError::Encoding {
        seq,
        reason: e.to_string(),
    })?;
    Ok(Sha256::new()
        .chain_update(prev)
        .chain_update(canonical)
        .finalize()
        .into())
}

/// An entry without its hash: the members JCS hashes, in the order JCS writes them.
#[derive(Serialize)]
struct Unhashed<'a> {
    at: &'a str,
    data: &'a Value,
    salt: &'a str,
    seq: i64,
    #[serde(rename = "type")]
    kind: &'a str,
}

/// The RFC 8785 canonical JSON of `unhashed`.
///
/// serde_json's compact output of a `Value` already is JCS when every number is an integer that a
/// double holds exactly and every member name is ASCII: objects are `BTreeMap`s (their names in
/// byte order, which is JCS's UTF-16 order for ASCII), strings are escaped as JCS escapes them,
/// and integers are written alike. Every entry the rules write is such a value; serde_jcs, which
/// sorts every object as it writes it, takes any other (a tampered log may hold anything), and a
/// test holds the two to the same output.
fn canonical_json(unhashed: &Unhashed) -> Result<Vec<u8>, serde_json::Error> {
    if unhashed.seq.unsigned_abs() <= EXACT_INTEGERS && written_as_jcs(unhashed.data) {
        serde_json::to_vec(unhashed)
    } else {
        serde_jcs::to_vec(unhashed)
    }
}

/// The largest integer up to which every integer is a double: beyond it JCS writes a double's
/// digits, not the integer's.
const EXACT_INTEGERS: u64 = 1 << 53;

fn written_as_jcs(value: &Value) -> bool {
    match value {
        Value::Number(number) => number
            .as_i64()
            .is_some_and(|n| n.unsigned_abs() <= EXACT_INTEGERS),
        Value::Array(items) => items.iter().all(written_as_jcs),
        Value::Object(members) => members
            .iter()
            .all(|(name, member)| name.is_ascii() && written_as_jcs(member)),
        Value::Null | Value::Bool(_) | Value::String(_) => true,
    }
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    /// Any JSON value, with names and strings that JCS treats specially: non-ASCII, beyond the
    /// basic plane, control characters, quotes; and numbers of every kind.
    fn any_json() -> impl Strategy<Value = Value> {
        let text = r#"[a-zA-Z0-9 \\"/\x00-\x1f\x7f\u{e9}\u{2028}\u{ffff}\u{10000}\u{1f600}]{0,6}"#;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<u64>().prop_map(|n| json!(n)),
            (-(1i64 << 53)..=(1i64 << 53)).prop_map(|n| json!(n)),
            any::<f64>()
                .prop_filter("JSON has no NaN or infinity", |x| x.is_finite())
                .prop_map(|x| json!(x)),
            text.prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((text, inner), 0..6)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn the_canonical_form_is_serde_jcs_output(data in any_json(), seq in any::<i64>()) {
            let unhashed = Unhashed {
                at: "2026-05-01T12:00:00.000000Z",
                data: &data,
                salt: "ab",
                seq,
                kind: "card_drawn",
            };
            prop_assert_eq!(
                canonical_json(&unhashed).expect("canonical"),
                serde_jcs::to_vec(&unhashed).expect("jcs")
            );
        }
    }

    #[test]
    fn entries_the_rules_write_take_the_direct_path() {
        let data = json!({"seat": 1, "source": "stock", "card": "10H", "grid": [null, "AS"]});
        assert!(written_as_jcs(&data));
        assert!(!written_as_jcs(&json!({"score": 1.5})));
        assert!(!written_as_jcs(&json!({"zoë": 1})));
        assert!(!written_as_jcs(&json!([u64::MAX])));
    }
}
