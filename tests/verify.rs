//! The offline audit (`golf_server::audit`, behind `golf-server verify`) on the committed logs of
//! real games: they verify, and each kind of tampering is found and located at the right entry by
//! the right check, including changes whose hashes were recomputed, which only the replay catches.

use golf_server::audit::ndjson::{audit_text, line};
use golf_server::audit::{AuditReport, Check, Outcome, audit};
use golf_server::store::Entry;
use golf_server::store::chain::{GENESIS, entry_hash};
use serde_json::{Value, json};

/// A 4-seat game of a person (with a client seed) and three bots, final turns, optional flips.
const FOUR_SEATS: &str = include_str!("vectors/log_four_seats_bots.ndjson");
/// A 2-seat game with reshuffles and turn caps.
const RESHUFFLES: &str = include_str!("vectors/log_two_seats_reshuffles.ndjson");

fn entries(ndjson: &str) -> Vec<Entry> {
    ndjson
        .lines()
        .map(|line| {
            let entry: Value = serde_json::from_str(line).unwrap();
            let text = |key: &str| entry[key].as_str().unwrap().to_owned();
            Entry {
                seq: entry["seq"].as_i64().unwrap(),
                at: text("at"),
                kind: text("type"),
                data: entry["data"].clone(),
                salt: text("salt"),
                hash: text("hash"),
            }
        })
        .collect()
}

fn export(entries: &[Entry]) -> String {
    entries.iter().map(line).collect()
}

/// Recomputes every hash, as a forger would, so that the chain verifies.
fn rechain(entries: &mut [Entry]) {
    let mut head = GENESIS;
    for entry in entries {
        head = entry_hash(
            &head,
            entry.seq,
            &entry.at,
            &entry.kind,
            &entry.data,
            &entry.salt,
        )
        .unwrap();
        entry.hash = hex::encode(head);
    }
}

/// The seq of the first entry of type `kind`.
fn first(entries: &[Entry], kind: &str) -> usize {
    entries.iter().position(|e| e.kind == kind).unwrap() + 1
}

fn outcome(report: &AuditReport, check: Check) -> Outcome {
    report
        .checks
        .iter()
        .find(|c| c.check == check)
        .unwrap()
        .outcome
}

/// Asserts that `report` fails first at `seq`, with a finding of `check` there.
fn fails_at(report: &AuditReport, seq: usize, check: Check) {
    assert!(!report.verified, "{}", report.render_text());
    assert_eq!(
        report.first_bad_seq,
        Some(seq as i64),
        "{}",
        report.render_text()
    );
    assert!(
        report
            .findings
            .iter()
            .any(|f| f.seq == Some(seq as i64) && f.check == check),
        "a {check:?} finding at {seq}: {}",
        report.render_text()
    );
    assert_eq!(outcome(report, check), Outcome::Failed);
}

#[test]
fn the_committed_logs_of_real_games_verify_line_for_line() {
    // Each vector is an export byte for byte, and every check passes on it.
    for (ndjson, reshuffles) in [(FOUR_SEATS, 0), (RESHUFFLES, 2)] {
        assert_eq!(export(&entries(ndjson)), ndjson, "the lines are canonical");
        let report = audit_text(ndjson);
        assert!(report.verified, "{}", report.render_text());
        assert_eq!(report.first_bad_seq, None);
        assert!(report.findings.is_empty());
        assert!(report.checks.iter().all(|c| c.outcome == Outcome::Ok));
        assert_eq!((report.fair_deals, report.reshuffles), (2, reshuffles));
        assert!(!report.stacked && report.stacked_holes.is_empty());
        let ended = entries(ndjson).pop().unwrap().data;
        assert_eq!(json!(report.totals), ended["totals"]);
        assert_eq!(json!(report.winners), ended["winners"]);
        assert!(report.render_text().ends_with("VERIFIED\n"));
    }
}

#[test]
fn a_changed_card_is_found_where_it_changed_by_the_chain_and_by_the_rules() {
    // A drawn card changed: the chain breaks there; with every hash recomputed the rules still
    // decide another card there.
    let mut log = entries(FOUR_SEATS);
    let seq = first(&log, "card_drawn");
    let card = log[seq - 1].data["card"].as_str().unwrap().to_owned();
    let other = if card == "KS" { "KH" } else { "KS" };
    log[seq - 1].data["card"] = json!(other);
    let report = audit(&log);
    fails_at(&report, seq, Check::Chain);
    fails_at(&report, seq, Check::Moves);
    rechain(&mut log);
    let report = audit(&log);
    fails_at(&report, seq, Check::Moves);
    assert_eq!(outcome(&report, Check::Chain), Outcome::Ok);
}

#[test]
fn a_dropped_entry_is_found_where_it_is_missing() {
    let mut log = entries(FOUR_SEATS);
    log.remove(40 - 1);
    fails_at(&audit(&log), 40, Check::Chain);
    // Renumbered and rechained, the rules find the hole in the play.
    for (seq, entry) in (1..).zip(log.iter_mut()) {
        entry.seq = seq;
    }
    rechain(&mut log);
    let report = audit(&log);
    assert_eq!(outcome(&report, Check::Chain), Outcome::Ok);
    assert!(!report.verified);
    assert!(
        report.first_bad_seq.unwrap() <= 40,
        "{}",
        report.render_text()
    );
}

#[test]
fn two_swapped_entries_are_found_at_the_first_of_them() {
    let mut log = entries(FOUR_SEATS);
    log.swap(30 - 1, 31 - 1);
    fails_at(&audit_text(&export(&log)), 30, Check::Chain);
    for (seq, entry) in (1..).zip(log.iter_mut()) {
        entry.seq = seq;
    }
    rechain(&mut log);
    let report = audit(&log);
    assert_eq!(outcome(&report, Check::Chain), Outcome::Ok);
    fails_at(&report, 30, Check::Moves);
}

#[test]
fn a_changed_seed_fails_the_commitment_at_the_end() {
    // The seed is what the salts, deals and replay read: none of them can be checked against a
    // seed that is not the one committed to, and the fault is located at the entry revealing it.
    let mut log = entries(RESHUFFLES);
    let last = log.len();
    log[last - 1].data["seed"] = json!("00".repeat(32));
    rechain(&mut log);
    let report = audit(&log);
    fails_at(&report, last, Check::Commitment);
    for check in [Check::Salts, Check::Deals, Check::Moves, Check::Winners] {
        assert_eq!(outcome(&report, check), Outcome::Skipped, "{check:?}");
    }
    // A seed that is no seed at all is a finding of its own.
    log[last - 1].data["seed"] = json!("not hex");
    fails_at(&audit(&log), last, Check::Commitment);
}

#[test]
fn a_changed_client_seed_breaks_the_chain_and_the_deals() {
    // The client seeds feed the effective seed: changed with the hashes recomputed, the deal of
    // hole 1 is no longer the fair shuffle.
    let mut log = entries(FOUR_SEATS);
    assert_eq!(log[1].kind, "player_joined");
    log[1].data["client_seed"] = json!("someone else's entropy");
    fails_at(&audit(&log), 2, Check::Chain);
    rechain(&mut log);
    let report = audit(&log);
    let dealt = first(&log, "hole_dealt");
    fails_at(&report, dealt, Check::Deals);
    assert_eq!(outcome(&report, Check::EffectiveSeed), Outcome::Ok);
}

#[test]
fn seats_that_join_out_of_order_fail_the_effective_seed() {
    // The client seeds enter S in seat order: a log whose joins are reordered (renumbered and
    // rechained) cannot give the seed its deals were shuffled with.
    let mut log = entries(FOUR_SEATS);
    log.swap(1, 2);
    for (seq, entry) in (1..).zip(log.iter_mut()) {
        entry.seq = seq;
    }
    rechain(&mut log);
    let report = audit(&log);
    fails_at(&report, 2, Check::EffectiveSeed);
    for check in [Check::Deals, Check::Moves, Check::Scores] {
        assert_eq!(outcome(&report, check), Outcome::Skipped, "{check:?}");
    }
}

#[test]
fn a_stacked_deck_must_still_hold_each_card_once() {
    // Marked stacked, a game's first deal may be any order of the 52 cards, but not a card twice.
    let mut log = entries(FOUR_SEATS);
    log[0].data["stacked"] = json!(true);
    let dealt = first(&log, "hole_dealt");
    let deck = log[dealt - 1].data["deck"].as_array_mut().unwrap();
    deck[51] = deck[50].clone();
    rechain(&mut log);
    fails_at(&audit(&log), dealt, Check::Deals);
}

#[test]
fn a_game_marked_stacked_whose_deals_are_all_fair_verifies_as_stacked() {
    // Its explicit decks, if any, were the fair ones: nothing is hidden, and it says it is stacked.
    let mut log = entries(FOUR_SEATS);
    log[0].data["stacked"] = json!(true);
    rechain(&mut log);
    let report = audit(&log);
    assert!(report.verified, "{}", report.render_text());
    assert!(report.stacked && report.stacked_holes.is_empty());
    assert_eq!(report.fair_deals, 2);
}

#[test]
fn a_changed_score_with_its_hash_recomputed_is_caught_by_the_replay() {
    // The chain cannot tell a forger who recomputes every hash; the rules re-score the hole.
    let mut log = entries(RESHUFFLES);
    let seq = first(&log, "hole_ended");
    let score = log[seq - 1].data["scores"][0].as_i64().unwrap();
    log[seq - 1].data["scores"][0] = json!(score - 10);
    rechain(&mut log);
    let report = audit(&log);
    assert_eq!(outcome(&report, Check::Chain), Outcome::Ok);
    assert_eq!(outcome(&report, Check::Salts), Outcome::Ok);
    fails_at(&report, seq, Check::Scores);
    let finding = &report.findings[0].message;
    assert!(finding.contains("scores differs"), "{finding}");
    // Winners changed to match forged totals are caught the same way.
    let mut log = entries(RESHUFFLES);
    let last = log.len();
    log[last - 1].data["winners"] = json!([1]);
    rechain(&mut log);
    fails_at(&audit(&log), last, Check::Winners);
}

#[test]
fn a_changed_reshuffle_is_caught_by_the_replay() {
    let mut log = entries(RESHUFFLES);
    let seq = first(&log, "stock_reshuffled");
    let order = log[seq - 1].data["order"].as_array_mut().unwrap();
    order.swap(0, 1);
    rechain(&mut log);
    fails_at(&audit(&log), seq, Check::Reshuffles);
}

#[test]
fn a_line_that_is_not_canonical_json_is_found_though_its_entry_is_intact() {
    // Same entry, other bytes: white space, or keys in another order.
    let log = entries(FOUR_SEATS);
    let mut lines: Vec<String> = log.iter().map(line).collect();
    lines[6] = serde_json::to_string_pretty(&log[6].to_json())
        .unwrap()
        .replace('\n', " ")
        + "\n";
    let report = audit_text(&lines.concat());
    fails_at(&report, 7, Check::Format);
    assert_eq!(report.findings.len(), 1, "{}", report.render_text());
    lines[6] = "not json\n".to_owned();
    let report = audit_text(&lines.concat());
    fails_at(&report, 7, Check::Format);
    fails_at(&report, 7, Check::Chain);
}

#[test]
fn an_unfinished_log_cannot_be_verified() {
    let log = entries(FOUR_SEATS);
    let report = audit(&log[..50]);
    fails_at(&report, 51, Check::Complete);
    assert_eq!(outcome(&report, Check::Chain), Outcome::Ok);
    assert_eq!(outcome(&report, Check::Moves), Outcome::Skipped);
    let report = audit_text("");
    assert!(!report.verified);
    assert_eq!(outcome(&report, Check::Complete), Outcome::Failed);
}
