//! Logs of finished games, as a real server wrote and served them (`GET /v1/games/{id}/events`),
//! committed in the public format of docs/API.md: they must verify and replay through today's rules.
//!
//! A change to the rules, the shuffle or the log that would refuse or alter these logs breaks
//! every stored game's audit and replay: it needs a new log format, not a new fixture.
//! `tests/vectors/verify_log.py` checks the same files with an independent RFC 8785
//! implementation.

use golf_server::audit::replay::{rebuild, rebuild_prefix};
use golf_server::engine::{Event, Secrets, Status, Viewer, play_bot_turns, shuffle, view};
use golf_server::store::codec::entry_event;
use golf_server::store::{Entry, verify_chain};
use serde_json::Value;

/// A 4-seat, 2-hole game of one person and three bots, with final turns and optional flips.
const FOUR_SEATS_BOTS: &str = include_str!("vectors/log_four_seats_bots.ndjson");
/// A 2-seat, 2-hole game whose players hoard from the stock: reshuffles, then turn caps.
const TWO_SEATS_RESHUFFLES: &str = include_str!("vectors/log_two_seats_reshuffles.ndjson");

fn entries(ndjson: &str) -> Vec<Entry> {
    ndjson
        .lines()
        .map(|line| {
            let entry: Value = serde_json::from_str(line).expect("one entry per line");
            let text = |key: &str| entry[key].as_str().expect(key).to_owned();
            Entry {
                seq: entry["seq"].as_i64().expect("seq"),
                at: text("at"),
                kind: text("type"),
                data: entry["data"].clone(),
                salt: text("salt"),
                hash: text("hash"),
            }
        })
        .collect()
}

/// The server seed the `game_ended` entry reveals.
fn revealed_seed(entries: &[Entry]) -> [u8; 32] {
    let last = entries.last().expect("a log");
    assert_eq!(last.kind, "game_ended");
    let seed = hex::decode(last.data["seed"].as_str().expect("seed")).expect("hex");
    seed.try_into().expect("32 bytes")
}

fn check_finished_log(ndjson: &str, kinds: &[&str]) {
    let entries = entries(ndjson);
    for kind in kinds {
        assert!(
            entries.iter().any(|entry| entry.kind == *kind),
            "the log has a {kind} entry"
        );
    }
    let seed = revealed_seed(&entries);
    assert_eq!(
        entries[0].data["commitment"],
        shuffle::commitment(&seed),
        "the revealed seed is the one committed to at creation"
    );
    let head = verify_chain(&seed, &entries).expect("the hash chain verifies");
    assert_eq!(hex::encode(head), entries.last().unwrap().hash);

    let secrets = Secrets {
        server_seed: seed,
        decks: Vec::new(),
    };
    let state = rebuild(&entries, &secrets).expect("the rules re-decide every entry");
    assert_eq!(state.status, Status::Finished);
    let public = view(&state, Viewer::Spectator);
    let ended = &entries.last().unwrap().data;
    let totals: Vec<Value> = public.players.iter().map(|p| p.total.into()).collect();
    assert_eq!(Value::from(totals), ended["totals"]);
    assert_eq!(
        serde_json::to_value(&public.winners).unwrap(),
        ended["winners"]
    );

    // Every replay point of the log replays, as `GET /v1/games/{id}/replay/{seq}` asks.
    for seq in 1..=entries.len() {
        let state = rebuild_prefix(&entries[..seq], &secrets)
            .unwrap_or_else(|error| panic!("replay to {seq}: {error}"));
        assert_eq!(state.version, seq as u64);
    }
}

#[test]
fn a_four_seat_game_with_bots_verifies_and_replays() {
    check_finished_log(
        FOUR_SEATS_BOTS,
        &[
            "card_flipped",
            "flip_declined",
            "card_swapped",
            "hole_ended",
        ],
    );
}

#[test]
fn a_two_seat_game_with_reshuffles_and_turn_caps_verifies_and_replays() {
    check_finished_log(TWO_SEATS_RESHUFFLES, &["stock_reshuffled", "hole_ended"]);
    let capped = entries(TWO_SEATS_RESHUFFLES)
        .iter()
        .filter(|entry| entry.kind == "hole_ended")
        .all(|entry| entry.data["reason"] == "turn_cap");
    assert!(capped, "both holes end at the turn cap");
}

#[test]
fn the_engine_plays_the_bots_moves_of_a_served_game() {
    // After any command the server played every bot turn that was due: from each point between
    // commands, the engine's bot driver must play exactly the entries that follow.
    let entries = entries(FOUR_SEATS_BOTS);
    let secrets = Secrets {
        server_seed: revealed_seed(&entries),
        decks: Vec::new(),
    };
    let events: Vec<Event> = entries
        .iter()
        .map(|entry| entry_event(entry).expect("a log event").0)
        .collect();
    let mut bot_moves = 0;
    for cut in 1..entries.len() {
        let Ok(mut state) = rebuild(&entries[..cut], &secrets) else {
            continue;
        };
        let (_, at) = entry_event(&entries[cut - 1]).expect("a log event");
        let played = play_bot_turns(&mut state, &secrets, at).expect("bots play legal moves");
        assert_eq!(played, events[cut..cut + played.len()], "after entry {cut}");
        bot_moves += usize::from(!played.is_empty());
    }
    assert!(bot_moves > 10, "{bot_moves} points where bots were due");
}
