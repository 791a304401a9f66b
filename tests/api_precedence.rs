//! Which failure a request that breaks several rules of docs/API.md gets, through real HTTP on both
//! backends.

mod common;

use common::contract::{
    NO_GAME, check_problem, ok_move, raw, snapshot, started, turn_order, version,
};
use common::{Backend, TestApp, spawn_app};
use reqwest::Method;
use serde_json::{Value, json};

/// What a precedence case must answer: a problem, or the stored answer of an idempotent request.
enum Answer<'a> {
    Problem(u16, &'a str),
    Stored(&'a Value),
}

/// A precedence case: what it shows, then the request (method, path, body, headers) and the
/// answer it must get.
type PrecedenceCase<'a> = (
    &'a str,
    Method,
    String,
    Option<&'a str>,
    Vec<(&'a str, &'a str)>,
    Answer<'a>,
);

/// Sends every case in order; returns a line for each case that got another answer.
async fn precedence_mismatches(app: &TestApp, cases: Vec<PrecedenceCase<'_>>) -> Vec<String> {
    let mut mismatches = Vec::new();
    for (name, method, path, body, headers, answer) in cases {
        let response = raw(app, method.clone(), &path, body, &headers).await;
        let outcome = match answer {
            Answer::Problem(status, code) => check_problem(response, status, code).await.map(drop),
            Answer::Stored(stored) => {
                let status = response.status().as_u16();
                let text = response.text().await.unwrap_or_default();
                match serde_json::from_str::<Value>(&text) {
                    Ok(body) if status == 200 && body == *stored => Ok(()),
                    _ => Err(format!(
                        "expected the stored 200 {stored}, got {status}: {text}"
                    )),
                }
            }
        };
        if let Err(mismatch) = outcome {
            mismatches.push(format!("{name} ({method} {path}): {mismatch}"));
        }
    }
    mismatches
}

async fn failures_follow_the_contracts_precedence(backend: Backend) {
    // 404 game, then 401 token, then 400 body, then an idempotent replay, then 412, 409 and 422:
    // each case breaks two of them and must get the answer of the first; every case runs.
    use Answer::{Problem, Stored};
    let app = spawn_app(backend).await;
    let (id, _, seats) = started(&app, json!({"seats": 2, "holes": 1})).await;
    let (waiting, _) = app.create_game(json!({"seats": 2})).await;
    let moves = format!("/v1/games/{id}/moves");
    let good = format!("Bearer {}", seats[0].token);
    let bad = "Bearer not-a-token";

    // Seat 0 reveals with a key and the current If-Match, then seat 1 reveals: the key's stored
    // answer outlives both the tag and the stage it was given in.
    let reveal = r#"{"type": "reveal", "positions": [0, 1]}"#;
    let tag = format!("\"{}\"", version(&app, &id).await);
    let keyed = [
        ("authorization", good.as_str()),
        ("if-match", tag.as_str()),
        ("idempotency-key", "reveal-0"),
    ];
    let first = raw(&app, Method::POST, &moves, Some(reveal), &keyed).await;
    assert_eq!(first.status(), 200);
    let first: Value = first.json().await.unwrap();
    ok_move(
        &app,
        &id,
        &seats[1],
        json!({"type": "reveal", "positions": [0, 1]}),
    )
    .await;
    let before = snapshot(&app, &id).await;
    let (current, other) = turn_order(&app, &id, &seats).await;
    let current_auth = format!("Bearer {}", current.token);
    let other_auth = format!("Bearer {}", other.token);

    let unknown_moves = format!("/v1/games/{NO_GAME}/moves");
    let unknown_events = format!("/v1/games/{NO_GAME}/events");
    let events = format!("/v1/games/{id}/events");
    let pass = r#"{"type": "pass"}"#;
    let swap_out_of_range = r#"{"type": "swap", "position": 9}"#;
    #[rustfmt::skip]
    let before_the_draw: Vec<PrecedenceCase> = vec![
        ("unknown game + bad token + bad body + stale If-Match", Method::POST, unknown_moves.clone(), Some("{"), vec![("authorization", bad), ("if-match", "\"1\"")], Problem(404, "not_found")),
        ("unknown game + bad token + bad join body", Method::POST, format!("/v1/games/{NO_GAME}/players"), Some("{"), vec![("authorization", bad)], Problem(404, "not_found")),
        ("unknown game + bad token + limit out of range", Method::GET, format!("{unknown_events}?limit=0"), None, vec![("authorization", bad)], Problem(404, "not_found")),
        // A parameter that does not parse is a 400 only once the game is found and the token good.
        ("unknown game + unparsed parameter", Method::GET, format!("{unknown_events}?limit=ten"), None, vec![], Problem(404, "not_found")),
        ("bad token + unparsed parameter", Method::GET, format!("{events}?limit=ten"), None, vec![("authorization", bad)], Problem(401, "unauthorized")),
        // So is a header that does not parse (an Idempotency-Key with a space).
        ("unknown game + bad token + unparsed header", Method::POST, unknown_moves.clone(), Some(pass), vec![("authorization", bad), ("idempotency-key", "a b")], Problem(404, "not_found")),
        ("bad token + unparsed header", Method::POST, moves.clone(), Some(pass), vec![("authorization", bad), ("idempotency-key", "a b")], Problem(401, "unauthorized")),
        ("bad token + bad body + stale If-Match", Method::POST, moves.clone(), Some("{"), vec![("authorization", bad), ("if-match", "\"1\"")], Problem(401, "unauthorized")),
        ("no token + bad body", Method::POST, moves.clone(), Some(r#"{"type": "peek"}"#), vec![], Problem(401, "unauthorized")),
        ("bad token + limit out of range", Method::GET, format!("{events}?limit=0"), None, vec![("authorization", bad)], Problem(401, "unauthorized")),
        ("bad token + bad join body", Method::POST, format!("/v1/games/{waiting}/players"), Some(r#"{"name": 1}"#), vec![("authorization", bad)], Problem(401, "unauthorized")),
        ("bad body + stale If-Match", Method::POST, moves.clone(), Some(r#"{"type": "reveal"}"#), vec![("authorization", &good), ("if-match", "\"1\"")], Problem(400, "malformed_request")),
        ("idempotent replay + stale If-Match", Method::POST, moves.clone(), Some(reveal), keyed.to_vec(), Stored(&first)),
        ("idempotent replay + already revealed (409)", Method::POST, moves.clone(), Some(reveal), vec![("authorization", &good), ("idempotency-key", "reveal-0")], Stored(&first)),
        ("stale If-Match + not your turn", Method::POST, moves.clone(), Some(r#"{"type": "draw", "source": "stock"}"#), vec![("authorization", &other_auth), ("if-match", "\"2\"")], Problem(412, "stale_version")),
        ("not your turn + position out of range", Method::POST, moves.clone(), Some(swap_out_of_range), vec![("authorization", &other_auth)], Problem(409, "not_your_turn")),
        ("wrong stage + position out of range", Method::POST, moves.clone(), Some(swap_out_of_range), vec![("authorization", &current_auth)], Problem(409, "wrong_stage")),
    ];
    let mut mismatches = precedence_mismatches(&app, before_the_draw).await;
    if snapshot(&app, &id).await != before {
        mismatches.push("the refused requests and the replays changed the game".to_owned());
    }

    // The current seat takes the discard, so discarding it would break a rule (422).
    ok_move(
        &app,
        &id,
        current,
        json!({"type": "draw", "source": "discard"}),
    )
    .await;
    let join = format!("/v1/games/{id}/players");
    let long_seed = format!(r#"{{"name": "Ok", "client_seed": "{}"}}"#, "x".repeat(65));
    #[rustfmt::skip]
    let after_the_draw: Vec<PrecedenceCase> = vec![
        ("stale If-Match + must swap the discard draw (422)", Method::POST, moves.clone(), Some(r#"{"type": "discard"}"#), vec![("authorization", &current_auth), ("if-match", "\"3\"")], Problem(412, "stale_version")),
        // A full game refuses a join (409) before it judges the joiner's name or seed (422).
        ("full game + invalid name", Method::POST, join.clone(), Some(r#"{"name": "   "}"#), vec![], Problem(409, "game_full")),
        ("full game + invalid client seed", Method::POST, join.clone(), Some(&long_seed), vec![], Problem(409, "game_full")),
    ];
    mismatches.extend(precedence_mismatches(&app, after_the_draw).await);
    if snapshot(&app, &id).await != (before.0 + 1, before.1 + 1) {
        mismatches.push("refused moves after the draw changed the game".to_owned());
    }
    assert!(
        mismatches.is_empty(),
        "{} precedence cases failed:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

on_both_backends!(failures_follow_the_contracts_precedence,);
