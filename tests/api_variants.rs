//! House-rule variants through HTTP: options out of range are 422 `invalid_game_options` naming
//! the option; a 9-card game and a 4-card knocking game are played to the end from
//! `legal_moves`, with views of `cells` entries and their `grid_shape`; their `golf-log/2`
//! exports verify, and a changed card or score (with the chain recomputed) is found at its seq.

mod common;

use common::{Backend, TestApp, play_to_the_end, spawn_app};
use golf_server::audit::ndjson::audit_text;
use golf_server::audit::{AuditReport, Check};
use golf_server::store::chain::{GENESIS, entry_hash};
use serde_json::{Value, json};

/// Creates a 2-seat game under `rules`, seats two players and plays it out; returns its id and
/// export.
async fn played(app: &TestApp, rules: Value) -> (String, String) {
    let (id, created) = app
        .create_game(json!({"seats": 2, "holes": 2, "rules": rules}))
        .await;
    assert_eq!(created["rules"]["grid"], rules["grid"]);
    let seats = [app.join(&id, "Ada").await, app.join(&id, "Bob").await];
    let view = app.view(&id, Some(&seats[0].token)).await;
    let cells = view["grid_shape"]["rows"].as_u64().unwrap()
        * view["grid_shape"]["columns"].as_u64().unwrap();
    assert_eq!(
        view["players"][0]["grid"].as_array().unwrap().len() as u64,
        cells
    );
    play_to_the_end(app, &id, &seats).await;
    let response = app.get(&format!("/v1/games/{id}/export")).await;
    assert_eq!(response.status(), 200);
    (id, response.text().await.unwrap())
}

/// The export with line `seq` changed by `change` and every hash after it recomputed.
fn tampered(export: &str, seq: usize, change: impl FnOnce(&mut Value)) -> String {
    let mut entries: Vec<Value> = export
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    change(&mut entries[seq - 1]["data"]);
    let mut head = GENESIS;
    let mut out = String::new();
    for entry in &mut entries {
        let salt = entry["salt"].as_str().unwrap().to_owned();
        head = entry_hash(
            &head,
            entry["seq"].as_i64().unwrap(),
            entry["at"].as_str().unwrap(),
            entry["type"].as_str().unwrap(),
            &entry["data"],
            &salt,
        )
        .unwrap();
        entry["hash"] = json!(hex::encode(head));
        out.push_str(&serde_json::to_string(entry).unwrap());
        out.push('\n');
    }
    out
}

/// The seq of the first entry of type `kind`.
fn first(export: &str, kind: &str) -> usize {
    export
        .lines()
        .position(|line| serde_json::from_str::<Value>(line).unwrap()["type"] == kind)
        .unwrap()
        + 1
}

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
        "{}",
        report.render_text()
    );
}

async fn golf_log_2_games_verify_and_tampering_is_found(backend: Backend) {
    let app = spawn_app(backend).await;
    for rules in [
        json!({"grid": "3x3", "initial_reveal": 3, "jokers": 2, "joker_value": -5}),
        json!({"grid": "2x2", "knock": true, "negative_pairs": "keep", "four_of_a_kind": -10}),
    ] {
        let (id, export) = played(&app, rules.clone()).await;
        let created: Value = serde_json::from_str(export.lines().next().unwrap()).unwrap();
        assert_eq!(created["data"]["format"], "golf-log/2");
        assert_eq!(
            created["data"]["rules"]["knock"],
            rules.get("knock").cloned().unwrap_or(json!(false))
        );
        let report = audit_text(&export);
        assert!(report.verified, "{rules}: {}", report.render_text());
        let audit = app.audit(&id).await;
        assert_eq!(audit["verified"], true, "{rules}");

        let seq = first(&export, "card_swapped");
        let changed = tampered(&export, seq, |data| {
            let card = data["card"].as_str().unwrap().to_owned();
            data["card"] = json!(if card == "KS" { "KH" } else { "KS" });
        });
        fails_at(&audit_text(&changed), seq, Check::Moves);
        let seq = first(&export, "hole_ended");
        let changed = tampered(&export, seq, |data| {
            let score = data["scores"][0].as_i64().unwrap();
            data["scores"][0] = json!(score + 1);
        });
        fails_at(&audit_text(&changed), seq, Check::Scores);
    }
}

async fn options_out_of_range_are_422_naming_the_option(backend: Backend) {
    let app = spawn_app(backend).await;
    for (rules, name) in [
        (json!({"grid": "4x4"}), "rules.grid"),
        (json!({"initial_reveal": 6}), "rules.initial_reveal"),
        (json!({"jokers": 3}), "rules.jokers"),
        (json!({"joker_value": 2}), "rules.joker_value"),
        (json!({"negative_pairs": "double"}), "rules.negative_pairs"),
        (
            json!({"grid": "3x3", "four_of_a_kind": -5}),
            "rules.four_of_a_kind",
        ),
    ] {
        let body = json!({"seats": 2, "rules": rules});
        let response = app
            .send(reqwest::Method::POST, "/v1/games", Some(&body), None)
            .await;
        assert_eq!(response.status(), 422, "{rules}");
        let problem: Value = response.json().await.unwrap();
        assert_eq!(problem["code"], "invalid_game_options");
        assert!(
            problem["detail"].as_str().unwrap().contains(name),
            "{problem}"
        );
    }
}

on_both_backends!(
    golf_log_2_games_verify_and_tampering_is_found,
    options_out_of_range_are_422_naming_the_option,
);
