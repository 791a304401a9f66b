//! Checks the hash chain against vectors computed independently in Python (RFC 8785 from the
//! `rfc8785` package, SHA-256 from hashlib): see tests/vectors/chain_vectors.py, whose output is
//! pasted below. Regenerate with `python3 tests/vectors/chain_vectors.py` if the vectors change.

use golf_server::store::chain::{self, ChainError, GENESIS};
use golf_server::store::{Entry, NewEvent};
use serde_json::Value;

struct Vector {
    seq: i64,
    at: &'static str,
    kind: &'static str,
    /// The event data as ordinary JSON text (keys in writing order, with spaces).
    data: &'static str,
    /// The canonical form of the entry without its hash.
    jcs: &'static str,
    salt: &'static str,
    hash: &'static str,
}

// --- output of tests/vectors/chain_vectors.py ---
const SERVER_SEED_HEX: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
const VECTORS: &[Vector] = &[
    Vector {
        seq: 1,
        at: "2026-05-01T12:00:00Z",
        kind: "game_created",
        data: "{\"game_id\": \"6f1c1d8e-4a3b-4c2d-9e8f-0123456789ab\", \"format\": \"golf-log/1\", \"seats\": 2, \"holes\": 9, \"rules\": {\"flip_after_discard\": \"optional\", \"turn_cap\": null, \"jokers\": 0}, \"commitment\": \"abababababababababababababababababababababababababababababababab\", \"stacked\": false}",
        jcs: "{\"at\":\"2026-05-01T12:00:00Z\",\"data\":{\"commitment\":\"abababababababababababababababababababababababababababababababab\",\"format\":\"golf-log/1\",\"game_id\":\"6f1c1d8e-4a3b-4c2d-9e8f-0123456789ab\",\"holes\":9,\"rules\":{\"flip_after_discard\":\"optional\",\"jokers\":0,\"turn_cap\":null},\"seats\":2,\"stacked\":false},\"salt\":\"8b0216967169da8eb504c84671cfe47f\",\"seq\":1,\"type\":\"game_created\"}",
        salt: "8b0216967169da8eb504c84671cfe47f",
        hash: "1c741d629de9a5f28617898870a809a50aebe66b90011b1ae3d9b5ac54388045",
    },
    Vector {
        seq: 2,
        at: "2026-05-01T12:00:01.250Z",
        kind: "player_joined",
        data: "{\"seat\": 0, \"name\": \"Zo\u{eb} \u{2603} \u{65e5}\u{672c}\u{8a9e} \u{1f600}\", \"bot\": null, \"client_seed\": \"quote \\\" backslash \\\\ tab \\t newline \\n nul \\u0000 del \u{7f}\"}",
        jcs: "{\"at\":\"2026-05-01T12:00:01.250Z\",\"data\":{\"bot\":null,\"client_seed\":\"quote \\\" backslash \\\\ tab \\t newline \\n nul \\u0000 del \u{7f}\",\"name\":\"Zo\u{eb} \u{2603} \u{65e5}\u{672c}\u{8a9e} \u{1f600}\",\"seat\":0},\"salt\":\"4dfc49606a911a4f703fa34c7ef67a44\",\"seq\":2,\"type\":\"player_joined\"}",
        salt: "4dfc49606a911a4f703fa34c7ef67a44",
        hash: "d075a324b5fbb5e91f2e1391f62d4bc3f5a25b9d8ba5a40288ee55debd987420",
    },
    Vector {
        seq: 3,
        at: "2026-05-01T12:00:02+02:00",
        kind: "hole_dealt",
        data: "{\"hole\": 1, \"dealer\": 1, \"discard\": \"10H\", \"deck\": [\"AS\", \"2C\", \"KD\", \"10H\", null], \"\u{e000}\": \"in UTF-16 an emoji key sorts before this private-use key, in code points after\", \"\u{1f600}\": \"emoji key\", \"\u{e9}\": [-17, 0, 9007199254740991, {\"deep\": {\"deeper\": [[], {}]}}]}",
        jcs: "{\"at\":\"2026-05-01T12:00:02+02:00\",\"data\":{\"dealer\":1,\"deck\":[\"AS\",\"2C\",\"KD\",\"10H\",null],\"discard\":\"10H\",\"hole\":1,\"\u{e9}\":[-17,0,9007199254740991,{\"deep\":{\"deeper\":[[],{}]}}],\"\u{1f600}\":\"emoji key\",\"\u{e000}\":\"in UTF-16 an emoji key sorts before this private-use key, in code points after\"},\"salt\":\"bb118911f58b91e4055cd90ac5e413cc\",\"seq\":3,\"type\":\"hole_dealt\"}",
        salt: "bb118911f58b91e4055cd90ac5e413cc",
        hash: "fa6836683e74a20bcd60227b1e61284214737aa3eac396e29491363aa5094bcb",
    },
    Vector {
        seq: 4,
        at: "2026-05-01T12:00:03Z",
        kind: "game_ended",
        data: "{\"totals\": [12, -3], \"winners\": [1], \"seed\": null}",
        jcs: "{\"at\":\"2026-05-01T12:00:03Z\",\"data\":{\"seed\":null,\"totals\":[12,-3],\"winners\":[1]},\"salt\":\"d2f47127bb593d47dc1a2be183a5f0f1\",\"seq\":4,\"type\":\"game_ended\"}",
        salt: "d2f47127bb593d47dc1a2be183a5f0f1",
        hash: "6b0b331fc161712916637f98d9b918cccd9f208cfd4a7c4b6549a30d69553f6e",
    },
];
// --- end of output ---

fn seed() -> [u8; 32] {
    hex::decode(SERVER_SEED_HEX)
        .expect("seed hex")
        .try_into()
        .expect("32 bytes")
}

fn events() -> Vec<NewEvent> {
    VECTORS
        .iter()
        .map(|v| NewEvent {
            kind: v.kind.to_owned(),
            data: serde_json::from_str(v.data).expect("vector data is JSON"),
            at: v.at.to_owned(),
        })
        .collect()
}

fn sealed() -> Vec<Entry> {
    chain::seal(&seed(), GENESIS, 1, events()).expect("seal").0
}

#[test]
fn salts_match_the_reference() {
    // Each salt is the first 16 bytes of SHA-256(seed ‖ "golf-salt" ‖ u64be(seq)).
    for v in VECTORS {
        assert_eq!(chain::salt(&seed(), v.seq), v.salt, "salt of seq {}", v.seq);
    }
}

#[test]
fn canonical_json_matches_rfc8785_reference() {
    // serde_jcs writes the entry (without its hash) byte for byte as the Python reference does.
    for entry in sealed() {
        let mut unhashed = entry.to_json();
        unhashed.as_object_mut().expect("object").remove("hash");
        let v = &VECTORS[entry.seq as usize - 1];
        assert_eq!(
            serde_jcs::to_string(&unhashed).expect("jcs"),
            v.jcs,
            "JCS of seq {}",
            v.seq
        );
    }
}

#[test]
fn hashes_match_the_reference() {
    // Sealing the events from H_0 gives the reference salts and hashes, and the head is the last.
    let (entries, head) = chain::seal(&seed(), GENESIS, 1, events()).expect("seal");
    for (entry, v) in entries.iter().zip(VECTORS) {
        assert_eq!(entry.seq, v.seq);
        assert_eq!(entry.salt, v.salt, "salt of seq {}", v.seq);
        assert_eq!(entry.hash, v.hash, "hash of seq {}", v.seq);
    }
    assert_eq!(hex::encode(head), VECTORS[VECTORS.len() - 1].hash);
}

#[test]
fn the_reference_log_verifies() {
    // verify_chain accepts the reference log and returns its head.
    let entries = sealed();
    let head = chain::verify_chain(&seed(), &entries).expect("verifies");
    assert_eq!(hex::encode(head), VECTORS[VECTORS.len() - 1].hash);
    assert_eq!(chain::verify_chain(&seed(), &[]), Ok(GENESIS));
}

#[test]
fn verify_chain_names_the_first_bad_entry() {
    // Tampering with data, salt, seq or seed is caught at the first entry it affects.
    let mut entries = sealed();
    entries[2].data["hole"] = Value::from(2);
    assert_eq!(
        chain::verify_chain(&seed(), &entries),
        Err(ChainError::Hash { seq: 3 })
    );

    let mut entries = sealed();
    entries[1].salt = "00".repeat(16);
    assert_eq!(
        chain::verify_chain(&seed(), &entries),
        Err(ChainError::Salt { seq: 2 })
    );

    let mut entries = sealed();
    entries.remove(1);
    assert_eq!(
        chain::verify_chain(&seed(), &entries),
        Err(ChainError::Sequence {
            position: 1,
            expected: 2,
            found: 3
        })
    );

    let mut other_seed = seed();
    other_seed[0] ^= 1;
    assert_eq!(
        chain::verify_chain(&other_seed, &sealed()),
        Err(ChainError::Salt { seq: 1 })
    );
}
