//! Idempotency keys through real HTTP on both backends: a retried move or creation applies once
//! and gets the stored answer.

mod common;

use common::contract::{
    assert_private, assert_unchanged, header, ok_move, problem, snapshot, started, turn_order,
};
use common::{Backend, Seat, spawn_app};
use reqwest::Method;
use serde_json::{Value, json};

async fn idempotent_moves_apply_once_per_key_and_seat(backend: Backend) {
    // The same key and body gets the identical stored answer and applies nothing twice; another
    // body with the key is 422; another seat's same key is another scope and applies.
    let app = spawn_app(backend).await;
    let (id, _, seats) = started(&app, json!({"seats": 2, "holes": 1})).await;
    let send = |seat: &Seat, key: &str, mv: Value| {
        app.client
            .post(app.url(&format!("/v1/games/{id}/moves")))
            .bearer_auth(&seat.token)
            .header("idempotency-key", key.to_owned())
            .json(&mv)
            .send()
    };
    let reveal = json!({"type": "reveal", "positions": [0, 3]});
    let first = send(&seats[0], "k-1", reveal.clone()).await.unwrap();
    assert_eq!(first.status(), 200);
    let first_tag = header(first.headers(), "etag").to_owned();
    let first: Value = first.json().await.unwrap();
    let before = snapshot(&app, &id).await;
    for _ in 0..3 {
        let again = send(&seats[0], "k-1", reveal.clone()).await.unwrap();
        assert_eq!(again.status(), 200);
        assert_eq!(header(again.headers(), "etag"), first_tag);
        assert_private(again.headers(), "a replayed move");
        assert_eq!(again.json::<Value>().await.unwrap(), first);
    }
    assert_unchanged(&app, &id, before, "a retried reveal").await;
    // The same key with another body is refused, and applies nothing.
    let other = send(
        &seats[0],
        "k-1",
        json!({"type": "reveal", "positions": [1, 4]}),
    )
    .await
    .unwrap();
    problem(other, 422, "idempotency_key_reused").await;
    assert_unchanged(&app, &id, before, "a reused key").await;
    // The same key from another seat is a different scope: the move applies.
    let theirs = send(&seats[1], "k-1", reveal.clone()).await.unwrap();
    assert_eq!(theirs.status(), 200);
    let theirs: Value = theirs.json().await.unwrap();
    assert_eq!(theirs["you"], seats[1].seat);
    assert_eq!(
        theirs["players"][seats[1].seat as usize]["revealed_count"],
        2
    );
    assert_eq!(snapshot(&app, &id).await, (before.0 + 1, before.1 + 1));

    // A draw retried after the turn moved on still gets its stored answer, and draws once.
    let (current, _) = turn_order(&app, &id, &seats).await;
    let draw = json!({"type": "draw", "source": "stock"});
    let drew = send(current, "draw-1", draw.clone()).await.unwrap();
    assert_eq!(drew.status(), 200);
    let drew: Value = drew.json().await.unwrap();
    ok_move(&app, &id, current, json!({"type": "swap", "position": 1})).await;
    let before = snapshot(&app, &id).await;
    let again = send(current, "draw-1", draw.clone()).await.unwrap();
    assert_eq!(again.status(), 200);
    assert_eq!(again.json::<Value>().await.unwrap(), drew);
    assert_unchanged(&app, &id, before, "a retried draw").await;
    let log = app.events(&id, None, 0).await;
    assert_eq!(log.iter().filter(|e| e["type"] == "card_drawn").count(), 1);
    // The game moves on normally.
    let (next, _) = turn_order(&app, &id, &seats).await;
    assert_ne!(next.seat, current.seat);

    // A key that is not 1 to 255 visible ASCII characters does not parse.
    for key in ["", "a b", &"k".repeat(256)] {
        let response = send(next, key, draw.clone()).await.unwrap();
        problem(response, 400, "malformed_request").await;
    }
}

async fn idempotent_creation_creates_one_game(backend: Backend) {
    // The same key and body twice give the same game and host token (one game exists); another
    // body with the key is 422.
    let app = spawn_app(backend).await;
    let create = |key: &str, body: Value| {
        app.client
            .post(app.url("/v1/games"))
            .header("idempotency-key", key.to_owned())
            .json(&body)
            .send()
    };
    let body = json!({"seats": 2, "holes": 3, "rules": {"final_turns": true}});
    let first = create("game-1-3b8f6e2a-91c4-4f0d-a7e5", body.clone())
        .await
        .unwrap();
    assert_eq!(first.status(), 201);
    let location = header(first.headers(), "location").to_owned();
    let first: Value = first.json().await.unwrap();
    let second = create("game-1-3b8f6e2a-91c4-4f0d-a7e5", body.clone())
        .await
        .unwrap();
    assert_eq!(second.status(), 201);
    assert_eq!(header(second.headers(), "location"), location);
    let second: Value = second.json().await.unwrap();
    assert_eq!(second["id"], first["id"]);
    assert_eq!(second["host_token"], first["host_token"]);
    assert_eq!(second, first);
    let id = first["id"].as_str().unwrap();
    let lobby: Value = app
        .get("/v1/games?status=waiting")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(lobby["games"].as_array().unwrap().len(), 1, "{lobby}");
    assert_eq!(lobby["games"][0]["id"], id);

    // Another body with the key is refused; a different key makes a second game.
    problem(
        create(
            "game-1-3b8f6e2a-91c4-4f0d-a7e5",
            json!({"seats": 2, "holes": 4}),
        )
        .await
        .unwrap(),
        422,
        "idempotency_key_reused",
    )
    .await;
    let other = create("game-2-3b8f6e2a-91c4-4f0d-a7e5", body.clone())
        .await
        .unwrap();
    assert_eq!(other.status(), 201);
    let other: Value = other.json().await.unwrap();
    assert_ne!(other["id"], first["id"]);
    assert_ne!(other["host_token"], first["host_token"]);

    // The replayed host token is the real one: it seats a bot, once; then one person fills it.
    let host = second["host_token"].as_str().unwrap();
    let response = app
        .send(
            Method::POST,
            &format!("/v1/games/{id}/players"),
            Some(&json!({"name": "Robo", "bot": "random"})),
            Some(host),
        )
        .await;
    assert_eq!(response.status(), 201);
    assert_eq!(response.json::<Value>().await.unwrap()["seat"], 0);
    let ada = app.join(id, "Ada").await;
    assert_eq!(ada.seat, 1);
    let response = app
        .send(
            Method::POST,
            &format!("/v1/games/{id}/players"),
            Some(&json!({"name": "Late"})),
            None,
        )
        .await;
    problem(response, 409, "game_full").await;
    // A retry of the creation after the game filled still answers as it first did.
    let third: Value = create("game-1-3b8f6e2a-91c4-4f0d-a7e5", body)
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(third, first);
    let log = app.events(id, None, 0).await;
    assert_eq!(
        log.iter().filter(|e| e["type"] == "game_created").count(),
        1
    );
}

on_both_backends!(
    idempotent_moves_apply_once_per_key_and_seat,
    idempotent_creation_creates_one_game,
);
