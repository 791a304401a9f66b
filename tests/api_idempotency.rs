//! Idempotency keys through real HTTP on both backends: a retried move, creation, join or leave
//! applies once and gets the stored answer; the keys of creations and joins are the client's own.

mod common;

use common::contract::{
    assert_private, assert_unchanged, header, ok_move, problem, snapshot, started, turn_order,
};
use common::{Backend, Seat, TestApp, spawn_app};
use reqwest::{Client, Method, Response};
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

/// The key of the joins below: as long as a creation's, since a replay returns a seat token.
const JOIN_KEY: &str = "join-7c1e9f04-5b2a-4d8e-93c6";

/// Sends a join of `body` with `key` from `client`.
async fn join_with_key(
    app: &TestApp,
    client: &Client,
    id: &str,
    key: &str,
    body: Value,
) -> Response {
    client
        .post(app.url(&format!("/v1/games/{id}/players")))
        .header("idempotency-key", key)
        .json(&body)
        .send()
        .await
        .unwrap()
}

/// The names of the players seated in game `id`.
async fn player_names(app: &TestApp, id: &str) -> Vec<Value> {
    let view = app.view(id, None).await;
    let players = view["players"].as_array().unwrap();
    players
        .iter()
        .map(|player| player["name"].clone())
        .collect()
}

async fn idempotent_joins_seat_once_per_key(backend: Backend) {
    // A retried join gets the same seat and token and seats nobody else, even after the game
    // filled; another body with the key is 422; another key is another seat.
    let app = spawn_app(backend).await;
    let (id, _) = app.create_game(json!({"seats": 3, "holes": 1})).await;
    let ada = json!({"name": "Ada", "client_seed": "ada's dice"});
    let first = join_with_key(&app, &app.client, &id, JOIN_KEY, ada.clone()).await;
    assert_eq!(first.status(), 201);
    let first: Value = first.json().await.unwrap();
    assert_eq!(first["seat"], 0);
    for _ in 0..2 {
        let again = join_with_key(&app, &app.client, &id, JOIN_KEY, ada.clone()).await;
        assert_eq!(again.status(), 201);
        assert_private(again.headers(), "a replayed join");
        assert_eq!(again.json::<Value>().await.unwrap(), first);
    }
    assert_eq!(player_names(&app, &id).await, [json!("Ada")]);
    let other = join_with_key(&app, &app.client, &id, JOIN_KEY, json!({"name": "Eve"})).await;
    problem(other, 422, "idempotency_key_reused").await;
    assert_eq!(player_names(&app, &id).await, [json!("Ada")]);

    // Another key takes the next seat; the last seat starts the game.
    let bob = join_with_key(
        &app,
        &app.client,
        &id,
        "join-2-7c1e9f04-5b2a-4d8e",
        json!({"name": "Bob"}),
    )
    .await;
    assert_eq!(bob.json::<Value>().await.unwrap()["seat"], 1);
    app.join(&id, "Cy").await;
    let late = join_with_key(&app, &app.client, &id, JOIN_KEY, ada).await;
    assert_eq!(late.status(), 201);
    assert_eq!(late.json::<Value>().await.unwrap(), first);
    let token = first["token"].as_str().unwrap();
    assert_eq!(
        app.view(&id, Some(token)).await["you"],
        0,
        "the replayed token is the seat's"
    );
    let log = app.events(&id, None, 0).await;
    assert_eq!(
        log.iter().filter(|e| e["type"] == "player_joined").count(),
        3
    );

    // A join key that is too short to be secret does not parse.
    let short = join_with_key(&app, &app.client, &id, "k-1", json!({"name": "Dee"})).await;
    problem(short, 400, "malformed_request").await;
}

async fn concurrent_identical_joins_with_one_key_seat_one_player(backend: Backend) {
    // Eight copies of one join at once: all get the one seat and token, and one player sits.
    let app = spawn_app(backend).await;
    let (id, _) = app.create_game(json!({"seats": 4, "holes": 1})).await;
    let body = json!({"name": "Ada"});
    let joins = (0..8).map(|_| join_with_key(&app, &app.client, &id, JOIN_KEY, body.clone()));
    let mut answers = Vec::new();
    for response in futures_util::future::join_all(joins).await {
        assert_eq!(response.status(), 201);
        answers.push(response.json::<Value>().await.unwrap());
    }
    assert!(
        answers.iter().all(|answer| *answer == answers[0]),
        "{answers:?}"
    );
    assert_eq!(player_names(&app, &id).await, [json!("Ada")]);
}

async fn a_retried_leave_with_a_key_replays_its_answer(backend: Backend) {
    // A leave retried with its key gets its stored answer and applies nothing; without a key a
    // second leave is still 409; the key of one of the seat's moves is not a leave's.
    let app = spawn_app(backend).await;
    let (id, _, seats) = started(&app, json!({"seats": 2, "holes": 1})).await;
    let leave = |seat: &Seat, key: Option<&str>| {
        let mut request = app
            .client
            .post(app.url(&format!("/v1/games/{id}/leave")))
            .bearer_auth(&seat.token);
        if let Some(key) = key {
            request = request.header("idempotency-key", key.to_owned());
        }
        request.send()
    };
    let reveal = json!({"type": "reveal", "positions": [0, 3]});
    let revealed = app
        .client
        .post(app.url(&format!("/v1/games/{id}/moves")))
        .bearer_auth(&seats[1].token)
        .header("idempotency-key", "m-1")
        .json(&reveal)
        .send()
        .await
        .unwrap();
    assert_eq!(revealed.status(), 200);
    let before = snapshot(&app, &id).await;
    problem(
        leave(&seats[1], Some("m-1")).await.unwrap(),
        422,
        "idempotency_key_reused",
    )
    .await;
    assert_unchanged(&app, &id, before, "a move's key sent with a leave").await;

    let first = leave(&seats[0], Some("leave-1")).await.unwrap();
    assert_eq!(first.status(), 200);
    let first_tag = header(first.headers(), "etag").to_owned();
    let first: Value = first.json().await.unwrap();
    assert_eq!(first["players"][0]["bot"], "greedy");
    let before = snapshot(&app, &id).await;
    for _ in 0..2 {
        let again = leave(&seats[0], Some("leave-1")).await.unwrap();
        assert_eq!(again.status(), 200);
        assert_eq!(header(again.headers(), "etag"), first_tag);
        assert_private(again.headers(), "a replayed leave");
        assert_eq!(again.json::<Value>().await.unwrap(), first);
    }
    assert_unchanged(&app, &id, before, "a retried leave").await;
    problem(
        leave(&seats[0], None).await.unwrap(),
        409,
        "seat_taken_by_bot",
    )
    .await;
    let log = app.events(&id, None, 0).await;
    assert_eq!(
        log.iter().filter(|e| e["type"] == "bot_took_seat").count(),
        1
    );
}

async fn creation_and_join_keys_are_scoped_to_the_client(backend: Backend) {
    // A creation's key and body sent from another client address make a game of their own, with
    // its own host token; a join's key from another address takes another seat and token.
    let app = spawn_app(backend).await;
    // The tests' server sees its clients as 127.0.0.1; this one comes from 127.0.0.2.
    let stranger = Client::builder()
        .local_address("127.0.0.2".parse::<std::net::IpAddr>().unwrap())
        .build()
        .unwrap();
    let key = "game-1-3b8f6e2a-91c4-4f0d-a7e5";
    let body = json!({"seats": 3, "holes": 1});
    let create = |client: &Client| {
        client
            .post(app.url("/v1/games"))
            .header("idempotency-key", key)
            .json(&body)
            .send()
    };
    let first: Value = create(&app.client).await.unwrap().json().await.unwrap();
    let replayed: Value = create(&app.client).await.unwrap().json().await.unwrap();
    assert_eq!(replayed, first, "the same client's retry replays");
    let theirs = create(&stranger).await.unwrap();
    assert_eq!(theirs.status(), 201);
    let theirs: Value = theirs.json().await.unwrap();
    assert_ne!(theirs["id"], first["id"]);
    assert_ne!(theirs["host_token"], first["host_token"]);

    let id = first["id"].as_str().unwrap();
    let ada = json!({"name": "Ada"});
    let mine: Value = join_with_key(&app, &app.client, id, JOIN_KEY, ada.clone())
        .await
        .json()
        .await
        .unwrap();
    let strangers = join_with_key(&app, &stranger, id, JOIN_KEY, ada).await;
    assert_eq!(strangers.status(), 201);
    let strangers: Value = strangers.json().await.unwrap();
    assert_eq!(
        (mine["seat"].clone(), strangers["seat"].clone()),
        (json!(0), json!(1))
    );
    assert_ne!(strangers["token"], mine["token"]);
}

on_both_backends!(
    idempotent_moves_apply_once_per_key_and_seat,
    idempotent_creation_creates_one_game,
    idempotent_joins_seat_once_per_key,
    concurrent_identical_joins_with_one_key_seat_one_player,
    a_retried_leave_with_a_key_replays_its_answer,
    creation_and_join_keys_are_scoped_to_the_client,
);
