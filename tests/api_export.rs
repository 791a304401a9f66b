//! `GET /v1/games/{id}/export` on both backends: refused before the end, then the complete log as
//! canonical NDJSON that the offline audit verifies for games under every rule option, seeded by
//! the players and stacked; the real `golf-server verify` and the Python of docs/AUDIT.md agree.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::{Backend, Seat, TestApp, play_to_the_end, spawn_app, stacked_deck};
use golf_server::audit::ndjson::audit_text;
use golf_server::audit::{AuditReport, Check, Outcome};
use reqwest::Method;
use serde_json::{Value, json};

/// Creates a game with `body` and seats a person in each seat, each with a client seed.
async fn seated(app: &TestApp, body: Value) -> (String, Vec<Seat>) {
    let (id, _) = app.create_game(body.clone()).await;
    let mut seats = Vec::new();
    for seat in 0..body["seats"].as_u64().unwrap() {
        let join = json!({"name": format!("P{seat}"), "client_seed": format!("entropy {seat} ✓")});
        let path = format!("/v1/games/{id}/players");
        let response = app.send(Method::POST, &path, Some(&join), None).await;
        assert_eq!(response.status(), 201);
        let joined: Value = response.json().await.unwrap();
        seats.push(Seat {
            seat: seat as u8,
            token: joined["token"].as_str().unwrap().to_owned(),
        });
    }
    (id, seats)
}

/// The export of a finished game, its headers checked.
async fn export(app: &TestApp, id: &str, token: Option<&str>) -> String {
    let path = format!("/v1/games/{id}/export");
    let response = app.send(Method::GET, &path, None, token).await;
    assert_eq!(response.status(), 200);
    let header = |name: &str| response.headers()[name].to_str().unwrap().to_owned();
    assert_eq!(header("content-type"), "application/x-ndjson");
    assert_eq!(
        header("content-disposition"),
        format!("attachment; filename=\"golf-{id}.ndjson\"")
    );
    assert_eq!(
        header("cache-control"),
        "public, max-age=31536000, immutable"
    );
    response.text().await.unwrap()
}

/// Asserts the export is the log `/events` serves, line for line, and that it verifies.
async fn verified(app: &TestApp, id: &str, text: &str) -> AuditReport {
    let served = app.events(id, None, 0).await;
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines, served, "the export is the complete log");
    assert!(text.ends_with('\n'));
    let report = audit_text(text);
    assert!(report.verified, "{}", report.render_text());
    assert!(report.checks.iter().all(|c| c.outcome == Outcome::Ok));
    report
}

async fn export_is_refused_before_the_end_and_verifies_after(backend: Backend) {
    // 404 for no game, 401 for a bad token, 409 not_finished while the game runs (its log holds
    // secrets), then the complete log, the same for everyone.
    let app = spawn_app(backend).await;
    let (id, seats) = seated(&app, json!({"seats": 2, "holes": 1})).await;
    let path = format!("/v1/games/{id}/export");
    let unknown = "/v1/games/00000000-0000-4000-8000-000000000000/export";
    for (path, token, status, code) in [
        (unknown, None, 404, "not_found"),
        (path.as_str(), Some("nope"), 401, "unauthorized"),
        (path.as_str(), None, 409, "not_finished"),
        (
            path.as_str(),
            Some(seats[0].token.as_str()),
            409,
            "not_finished",
        ),
    ] {
        let response = app.send(Method::GET, path, None, token).await;
        assert_eq!(response.status(), status, "{path}");
        assert_eq!(
            response.headers()["content-type"],
            "application/problem+json"
        );
        let problem: Value = response.json().await.unwrap();
        assert_eq!(problem["code"], code);
    }
    play_to_the_end(&app, &id, &seats).await;
    let text = export(&app, &id, None).await;
    assert_eq!(export(&app, &id, Some(&seats[1].token)).await, text);
    let report = verified(&app, &id, &text).await;
    assert_eq!(report.game_id.as_deref(), Some(id.as_str()));
    assert_eq!((report.fair_deals, report.stacked), (1, false));
    let bad = app.send(Method::GET, &path, None, Some("nope")).await;
    assert_eq!(
        bad.status(),
        401,
        "a bad token is refused after the end too"
    );

    // The finished log never changes: its ETag is the game's last version, and a client that has
    // it gets 304 with no body (the file is not rebuilt).
    let first = app.send(Method::GET, &path, None, None).await;
    let tag = first.headers()["etag"].to_str().unwrap().to_owned();
    let version = app.view(&id, None).await["version"].clone();
    assert_eq!(tag, format!("\"{version}\""));
    for if_none_match in [
        tag.clone(),
        format!("W/{tag}"),
        format!("\"1\", {tag}"),
        "*".into(),
    ] {
        let again = common::contract::raw(
            &app,
            Method::GET,
            &path,
            None,
            &[("if-none-match", &if_none_match)],
        )
        .await;
        assert_eq!(again.status(), 304, "{if_none_match}");
        assert_eq!(again.headers()["etag"], tag.as_str());
        assert!(again.bytes().await.unwrap().is_empty());
    }
    let stale = common::contract::raw(
        &app,
        Method::GET,
        &path,
        None,
        &[("if-none-match", "\"1\"")],
    )
    .await;
    assert_eq!(stale.status(), 200);
    assert_eq!(stale.text().await.unwrap(), text);
}

async fn games_under_every_rule_option_export_and_verify(backend: Backend) {
    // Final turns or not, each flip rule, turn caps that end holes, 2 to 4 seats each with a
    // client seed: each finished game's export verifies, every deal fair.
    let app = spawn_app(backend).await;
    let mut capped = false;
    for (number, flip) in ["never", "optional", "always"].iter().enumerate() {
        for final_turns in [false, true] {
            let seats = 2 + (number + usize::from(final_turns)) % 3;
            let cap = if final_turns { seats } else { 50 * seats };
            let rules = json!({
                "final_turns": final_turns,
                "flip_after_discard": flip,
                "max_turns_per_hole": cap,
            });
            let body = json!({"seats": seats, "holes": 2, "rules": rules});
            let (id, players) = seated(&app, body).await;
            play_to_the_end(&app, &id, &players).await;
            let text = export(&app, &id, None).await;
            let report = verified(&app, &id, &text).await;
            assert_eq!(report.fair_deals, 2, "{rules}");
            assert!(report.stacked_holes.is_empty());
            capped |= text.contains(r#""reason":"turn_cap""#);
        }
    }
    assert!(capped, "some hole ended at the turn cap");
}

async fn a_stacked_game_verifies_with_its_explicit_deck_reported(backend: Backend) {
    // Hole 1 from an explicit deck, holes 2 and 3 from the fair shuffle: the first is reported
    // stacked, not failed, and a change to a fair deal after it is still found.
    let app = spawn_app(backend).await;
    let body = json!({"seats": 2, "holes": 3, "decks": [stacked_deck(7)]});
    let (id, seats) = seated(&app, body).await;
    play_to_the_end(&app, &id, &seats).await;
    let text = export(&app, &id, None).await;
    let report = verified(&app, &id, &text).await;
    assert!(report.stacked);
    assert_eq!(
        (report.stacked_holes.clone(), report.fair_deals),
        (vec![1], 2)
    );
    assert!(report.render_text().contains("2 fair, 1 stacked (holes 1)"));

    let mut lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let third = lines
        .iter()
        .position(|e| e["type"] == "hole_dealt" && e["data"]["hole"] == 3)
        .unwrap();
    lines[third]["data"]["deck"]
        .as_array_mut()
        .unwrap()
        .swap(40, 50);
    let tampered: String = lines
        .iter()
        .map(|entry| serde_jcs::to_string(entry).unwrap() + "\n")
        .collect();
    let report = audit_text(&tampered);
    let seq = third as i64 + 1;
    assert_eq!(report.first_bad_seq, Some(seq), "{}", report.render_text());
    assert!(
        report
            .findings
            .iter()
            .any(|f| f.seq == Some(seq) && f.check == Check::Deals),
        "{}",
        report.render_text()
    );
}

async fn the_binary_and_the_python_example_verify_a_real_export(backend: Backend) {
    // `golf-server verify` on the file and on stdin, text and JSON, exit codes 0, 1 and 2; and the
    // Python of docs/AUDIT.md re-derives the commitment and the deal of hole 1.
    let app = spawn_app(backend).await;
    let (id, seats) = seated(&app, json!({"seats": 3, "holes": 1})).await;
    play_to_the_end(&app, &id, &seats).await;
    let text = export(&app, &id, None).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(format!("golf-{id}.ndjson"));
    std::fs::write(&file, &text).unwrap();
    let verify = |args: &[&str], stdin: &str| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_golf-server"))
            .arg("verify")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        let output = child.wait_with_output().unwrap();
        (
            output.status.code(),
            String::from_utf8(output.stdout).unwrap(),
        )
    };
    let path = file.to_str().unwrap();
    let (code, out) = verify(&[path], "");
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.starts_with(&format!("game {id}: 3 seats, 1 holes")),
        "{out}"
    );
    assert!(out.ends_with("VERIFIED\n"), "{out}");
    let (code, out) = verify(&["--json", "-"], &text);
    assert_eq!(code, Some(0), "{out}");
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (json["verified"].clone(), json["first_bad_seq"].clone()),
        (json!(true), Value::Null)
    );
    let tampered = text.replacen(r#""type":"card_drawn""#, r#""type":"card_drawn" "#, 1);
    let (code, out) = verify(&["-"], &tampered);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("FAILED at seq"), "{out}");
    let (code, _) = verify(&[dir.path().join("missing").to_str().unwrap()], "");
    assert_eq!(code, Some(2));

    let output = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/docs/audit_example.py"
        ))
        .arg(path)
        .output()
        .expect("python3 runs");
    assert!(output.status.success(), "{output:?}");
    let out = String::from_utf8(output.stdout).unwrap();
    let report = audit_text(&text);
    let deck = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|entry| entry["type"] == "hole_dealt")
        .unwrap()["data"]["deck"]
        .as_array()
        .unwrap()
        .iter()
        .map(|card| card.as_str().unwrap())
        .collect::<Vec<_>>()
        .join(" ");
    let expected = format!(
        "commitment OK {}\neffective seed {}\nhole 1 deal OK {deck}\n",
        report.commitment.unwrap(),
        report.effective_seed.unwrap()
    );
    assert_eq!(out, expected);
}

on_both_backends!(
    export_is_refused_before_the_end_and_verifies_after,
    games_under_every_rule_option_export_and_verify,
    a_stacked_game_verifies_with_its_explicit_deck_reported,
    the_binary_and_the_python_example_verify_a_real_export,
);
