//! Whole games through real HTTP on both backends: humans, bots, winners, concurrency.

mod common;

use std::collections::BTreeMap;

use common::contract::{reveal_all, started};
use common::{Backend, TestApp, play_to_the_end, score_grid, spawn_app};
use reqwest::Method;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// Checks the finished log: each hole's scores against an independent scoring of its grids,
/// the totals, the winners and the revealed seed against the commitment.
async fn check_final_results(app: &TestApp, id: &str, seats: usize, holes: usize) -> Value {
    let log = app.events(id, None, 0).await;
    let mut totals = vec![0i64; seats];
    let mut holes_ended = 0;
    for entry in log.iter().filter(|e| e["type"] == "hole_ended") {
        holes_ended += 1;
        let data = &entry["data"];
        for seat in 0..seats {
            let grid = data["grids"][seat].as_array().unwrap();
            assert_eq!(grid.len(), 6);
            let score = score_grid(grid);
            assert_eq!(
                data["scores"][seat].as_i64().unwrap(),
                score,
                "hole {}",
                data["hole"]
            );
            totals[seat] += score;
        }
    }
    assert_eq!(holes_ended, holes);
    let ended = log.last().unwrap();
    assert_eq!(ended["type"], "game_ended");
    let reported: Vec<i64> = ended["data"]["totals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_i64().unwrap())
        .collect();
    assert_eq!(reported, totals);
    let best = *totals.iter().min().unwrap();
    let winners: Vec<Value> = (0..seats)
        .filter(|&seat| totals[seat] == best)
        .map(|seat| json!(seat))
        .collect();
    assert_eq!(ended["data"]["winners"], json!(winners));

    let view = app.view(id, None).await;
    assert_eq!(view["status"], "finished");
    assert_eq!(view["winners"], json!(winners));
    assert_eq!(view["current_seat"], Value::Null);
    assert_eq!(view["stage"], "hole_over");
    for seat in 0..seats {
        assert_eq!(
            view["players"][seat]["total"].as_i64().unwrap(),
            totals[seat]
        );
        assert_eq!(
            view["players"][seat]["hole_scores"]
                .as_array()
                .unwrap()
                .len(),
            holes
        );
    }
    let seed = hex::decode(ended["data"]["seed"].as_str().unwrap()).unwrap();
    assert_eq!(
        hex::encode(Sha256::digest(&seed)),
        view["commitment"].as_str().unwrap(),
        "the revealed seed matches the commitment published at creation"
    );
    view
}

async fn four_humans_play_nine_holes_to_the_right_winners(backend: Backend) {
    // A default game of four people runs nine holes; every score, total and winner is right.
    let app = spawn_app(backend).await;
    let (id, created) = app.create_game(json!({"seats": 4})).await;
    assert_eq!(created["holes"], 9);
    assert_eq!(created["status"], "waiting");
    assert_eq!(created["rules"]["max_turns_per_hole"], 200);
    let mut seats = Vec::new();
    for name in ["Ada", "Grace", "Alan", "Edsger"] {
        seats.push(app.join(&id, name).await);
    }
    assert_eq!(
        seats.iter().map(|s| s.seat).collect::<Vec<_>>(),
        vec![0, 1, 2, 3]
    );
    let view = app.view(&id, None).await;
    assert_eq!(view["status"], "playing");
    assert_eq!(view["stage"], "reveal");
    assert_eq!(view["current_seat"], Value::Null);

    let moves = play_to_the_end(&app, &id, &seats).await;
    assert!(moves > 9 * 4 * 3, "{moves} moves for nine holes");
    check_final_results(&app, &id, 4, 9).await;
}

async fn a_human_plays_three_bots_to_the_end(backend: Backend) {
    // Bots seated by the host take their turns by themselves while one person plays a game out.
    let app = spawn_app(backend).await;
    let (id, created) = app
        .create_game(json!({"seats": 4, "holes": 3, "rules": {"final_turns": true}}))
        .await;
    let host = created["host_token"].as_str().unwrap().to_owned();
    let human = app.join(&id, "Ada").await;
    for (name, bot) in [("Robo", "greedy"), ("Dice", "random"), ("Hal", "greedy")] {
        let response = app
            .send(
                Method::POST,
                &format!("/v1/games/{id}/players"),
                Some(&json!({"name": name, "bot": bot})),
                Some(&host),
            )
            .await;
        assert_eq!(response.status(), 201);
        let joined: Value = response.json().await.unwrap();
        assert!(
            joined.get("token").is_none(),
            "a bot gets no token: {joined}"
        );
    }
    // Bots play in the request that hands them the turn: the human is never left waiting, so
    // the human alone plays the game out.
    let moves = play_to_the_end(&app, &id, std::slice::from_ref(&human)).await;
    assert!(moves < 5_000);
    let view = check_final_results(&app, &id, 4, 3).await;
    assert_eq!(view["players"][1]["bot"], "greedy");
    assert_eq!(view["players"][2]["bot"], "random");
    let log = app.events(&id, None, 0).await;
    for bot_seat in 1..4 {
        assert!(
            log.iter()
                .any(|e| e["type"] == "card_drawn" && e["data"]["seat"] == bot_seat),
            "bot seat {bot_seat} played"
        );
    }
}

async fn ten_concurrent_identical_moves_apply_once(backend: Backend) {
    // Ten copies of one move at once: one applies and nine are 409; ten copies with one
    // idempotency key all get the answer of the one that applied.
    let app = spawn_app(backend).await;
    let (id, _, seats) = started(&app, json!({"seats": 2, "holes": 2})).await;
    reveal_all(&app, &id, &seats).await;
    let view = app.view(&id, None).await;
    let current = &seats[view["current_seat"].as_u64().unwrap() as usize];
    let version = view["version"].as_u64().unwrap();

    let draw = json!({"type": "draw", "source": "stock"});
    let responses =
        futures_util::future::join_all((0..10).map(|_| app.play(&id, &current.token, &draw))).await;
    let mut statuses: BTreeMap<u16, usize> = BTreeMap::new();
    for response in responses {
        *statuses.entry(response.status().as_u16()).or_default() += 1;
    }
    assert_eq!(statuses.get(&200), Some(&1), "{statuses:?}");
    assert_eq!(statuses.get(&409), Some(&9), "{statuses:?}");
    let log = app.events(&id, None, 0).await;
    assert_eq!(
        log.len() as u64,
        version + 1,
        "exactly one entry was appended"
    );
    assert_eq!(log.last().unwrap()["type"], "card_drawn");

    // The same request retried ten times at once with one key: one move, ten equal answers.
    let swap = json!({"type": "swap", "position": 0});
    let responses = futures_util::future::join_all((0..10).map(|_| {
        app.client
            .post(app.url(&format!("/v1/games/{id}/moves")))
            .bearer_auth(&current.token)
            .header("Idempotency-Key", "swap-once")
            .json(&swap)
            .send()
    }))
    .await;
    let mut bodies = Vec::new();
    for response in responses {
        let response = response.unwrap();
        assert_eq!(response.status(), 200);
        bodies.push(response.json::<Value>().await.unwrap());
    }
    assert!(bodies.windows(2).all(|pair| pair[0] == pair[1]));
    let log = app.events(&id, None, 0).await;
    assert_eq!(
        log.iter().filter(|e| e["type"] == "card_swapped").count(),
        1,
        "the swap was applied once"
    );
}

async fn simultaneous_joins_take_each_seat_once(backend: Backend) {
    // Eight people joining a four-seat game at once: four get a seat each, four get game_full.
    let app = spawn_app(backend).await;
    let (id, _) = app.create_game(json!({"seats": 4, "holes": 1})).await;
    let responses = futures_util::future::join_all((0..8).map(|n| {
        app.client
            .post(app.url(&format!("/v1/games/{id}/players")))
            .json(&json!({"name": format!("Player {n}")}))
            .send()
    }))
    .await;
    let mut seats = Vec::new();
    let mut full = 0;
    for response in responses {
        let response = response.unwrap();
        match response.status().as_u16() {
            201 => seats.push(
                response.json::<Value>().await.unwrap()["seat"]
                    .as_u64()
                    .unwrap(),
            ),
            409 => {
                let problem: Value = response.json().await.unwrap();
                assert_eq!(problem["code"], "game_full");
                full += 1;
            }
            other => panic!("unexpected status {other}"),
        }
    }
    seats.sort();
    assert_eq!(seats, vec![0, 1, 2, 3]);
    assert_eq!(full, 4);
    let log = app.events(&id, None, 0).await;
    assert_eq!(
        log.iter().filter(|e| e["type"] == "player_joined").count(),
        4
    );
    assert_eq!(
        log.iter().filter(|e| e["type"] == "hole_dealt").count(),
        1,
        "the deal happened once"
    );
}

on_both_backends!(
    four_humans_play_nine_holes_to_the_right_winners,
    a_human_plays_three_bots_to_the_end,
    ten_concurrent_identical_moves_apply_once,
    simultaneous_joins_take_each_seat_once,
);
