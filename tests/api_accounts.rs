//! Accounts through real HTTP on both backends: creation and each refusal, the account token,
//! its rotation across instances, profiles.

mod common;

use common::{Backend, Seat, TestApp, play_to_the_end, spawn_app, spawn_app_on};
use reqwest::Method;
use serde_json::{Value, json};

/// Creates an account and answers its status and body.
async fn post_account(app: &TestApp, body: Value, key: Option<&str>) -> (u16, Value) {
    let mut request = app.client.post(app.url("/v1/accounts")).json(&body);
    if let Some(key) = key {
        request = request.header("idempotency-key", key);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

/// Creates account `username` and answers its token.
pub async fn account(app: &TestApp, username: &str) -> String {
    let (status, body) = post_account(app, json!({"username": username}), None).await;
    assert_eq!(status, 201, "{body}");
    body["token"].as_str().unwrap().to_owned()
}

async fn get_json(app: &TestApp, path: &str, token: Option<&str>) -> (u16, Value) {
    let response = app.send(Method::GET, path, None, token).await;
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn an_account_is_created_read_and_its_name_folded(backend: Backend) {
    // A new account answers its token once; GET /v1/account shows it; the name is stored lowercase.
    let app = spawn_app(backend).await;
    let (status, created) = post_account(&app, json!({"username": "Ada_1"}), None).await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["username"], "ada_1");
    assert_eq!(
        created["display_name"], "ada_1",
        "the display name defaults to the username"
    );
    assert_eq!(created["rating"], Value::Null);
    assert_eq!(created["games"], json!({"played": 0, "won": 0}));
    let token = created["token"].as_str().unwrap();
    let (status, own) = get_json(&app, "/v1/account", Some(token)).await;
    assert_eq!(status, 200);
    assert_eq!(own["username"], "ada_1");
    assert_eq!(own["created_at"], created["created_at"]);
    assert!(own.get("token").is_none(), "the token is shown once");
    let (status, profile) = get_json(&app, "/v1/accounts/ADA_1", None).await;
    assert_eq!((status, &profile["username"]), (200, &json!("ada_1")));
    assert_eq!(profile["recent"], json!([]));
    let (status, named) = post_account(
        &app,
        json!({"username": "bob", "display_name": "Bob B"}),
        None,
    )
    .await;
    assert_eq!((status, &named["display_name"]), (201, &json!("Bob B")));
}

async fn every_refusal_of_a_new_account_has_its_code(backend: Backend) {
    // Invalid and reserved names are 422 invalid_username, a taken one (in any case) 409.
    let app = spawn_app(backend).await;
    account(&app, "ada").await;
    let cases = [
        (json!({"username": "ab"}), 422, "invalid_username"),
        (json!({"username": "9ada"}), 422, "invalid_username"),
        (json!({"username": "ada.b"}), 422, "invalid_username"),
        (json!({"username": "a".repeat(25)}), 422, "invalid_username"),
        (json!({"username": "bot-greedy"}), 422, "invalid_username"),
        (json!({"username": "ADA"}), 409, "username_taken"),
        (json!({"username": "ada"}), 409, "username_taken"),
        (
            json!({"username": "cleo", "display_name": ""}),
            422,
            "invalid_name",
        ),
        (
            json!({"username": "cleo", "extra": 1}),
            400,
            "malformed_request",
        ),
    ];
    for (body, status, code) in cases {
        let (got, problem) = post_account(&app, body.clone(), None).await;
        assert_eq!(
            (got, problem["code"].as_str().unwrap()),
            (status, code),
            "{body}"
        );
    }
    let (status, problem) = get_json(&app, "/v1/accounts/nobody", None).await;
    assert_eq!(
        (status, problem["code"].as_str().unwrap()),
        (404, "not_found")
    );
    for token in [None, Some("not-a-token")] {
        let (status, problem) = get_json(&app, "/v1/account", token).await;
        assert_eq!(
            (status, problem["code"].as_str().unwrap()),
            (401, "unauthorized")
        );
    }
}

async fn a_retried_creation_with_its_key_answers_the_same_account(backend: Backend) {
    // The same key and body answer the first account and token; another body is refused.
    let app = spawn_app(backend).await;
    let key = "6f1d2c9e-4b7a-4e2f-9c3d-acc0un7k3y01";
    let (first_status, first) = post_account(&app, json!({"username": "ada"}), Some(key)).await;
    let (again_status, again) = post_account(&app, json!({"username": "ada"}), Some(key)).await;
    assert_eq!((first_status, again_status), (201, 201));
    assert_eq!(first, again, "the replay carries the same token");
    let (status, problem) = post_account(&app, json!({"username": "bob"}), Some(key)).await;
    assert_eq!(
        (status, problem["code"].as_str().unwrap()),
        (422, "idempotency_key_reused")
    );
    let (status, _) = get_json(&app, "/v1/account", first["token"].as_str()).await;
    assert_eq!(status, 200);
}

async fn a_rotated_token_is_refused_at_once_on_another_instance(backend: Backend) {
    // After a rotation on one instance, the other refuses the old token and takes the new one.
    let first = spawn_app(backend).await;
    let second = spawn_app_on(first.database.shared()).await;
    let old = account(&first, "ada").await;
    assert_eq!(get_json(&second, "/v1/account", Some(&old)).await.0, 200);
    let response = first
        .send(Method::POST, "/v1/account/token", None, Some(&old))
        .await;
    assert_eq!(response.status(), 200);
    let new = response.json::<Value>().await.unwrap()["token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(new, old);
    assert_eq!(get_json(&second, "/v1/account", Some(&old)).await.0, 401);
    assert_eq!(get_json(&first, "/v1/account", Some(&old)).await.0, 401);
    let (status, own) = get_json(&second, "/v1/account", Some(&new)).await;
    assert_eq!((status, &own["username"]), (200, &json!("ada")));
}

/// Takes a seat of game `id` with `token` and `body`; answers the status and body.
async fn join_with(app: &TestApp, id: &str, token: &str, body: Value) -> (u16, Value) {
    let path = format!("/v1/games/{id}/players");
    let response = app
        .send(Method::POST, &path, Some(&body), Some(token))
        .await;
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

/// Creates a game of two with `token` as the host's bearer; answers its id.
async fn game_hosted_by(app: &TestApp, token: &str) -> String {
    let body = json!({"seats": 2, "holes": 1});
    let response = app
        .send(Method::POST, "/v1/games", Some(&body), Some(token))
        .await;
    assert_eq!(response.status(), 201);
    response.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn a_seat_bound_to_an_account_is_read_and_moved_by_its_token(backend: Backend) {
    // The account that created a game joins it with its token: the seat takes its display name,
    // its player_joined names the account (an anonymous one does not), a second seat is refused,
    // and the account token reads the seat's view and moves it.
    let app = spawn_app(backend).await;
    let ada = account(&app, "ada").await;
    let id = game_hosted_by(&app, &ada).await;
    let (status, joined) = join_with(&app, &id, &ada, json!({"client_seed": "s"})).await;
    assert_eq!(status, 201, "{joined}");
    let (status, problem) = join_with(&app, &id, &ada, json!({})).await;
    assert_eq!(
        (status, problem["code"].as_str().unwrap()),
        (409, "already_seated")
    );
    app.join(&id, "Bob").await;
    let log = app.events(&id, None, 0).await;
    let joins: Vec<&Value> = log
        .iter()
        .filter(|e| e["type"] == "player_joined")
        .collect();
    assert_eq!(joins[0]["data"]["account"], "ada");
    assert_eq!(joins[0]["data"]["name"], "ada");
    assert!(joins[1]["data"].get("account").is_none(), "{}", joins[1]);
    let view = app.view(&id, Some(&ada)).await;
    assert_eq!(view["you"], joined["seat"], "{view}");
    let reveal = json!({"type": "reveal", "positions": [0, 1]});
    let moved = app.play(&id, &ada, &reveal).await;
    assert_eq!(moved.status(), 200);
    let audit = app.get(&format!("/v1/games/{id}/audit")).await;
    assert_eq!(audit.status(), 200);
}

async fn an_account_token_reads_other_games_as_a_spectator_only(backend: Backend) {
    // In a game it has no seat of, an account token reads the public view and the log, and gets
    // 401 where a seat is needed; an unknown or rotated token is 401 everywhere.
    let app = spawn_app(backend).await;
    let ada = account(&app, "ada").await;
    let (id, _) = app.create_game(json!({"seats": 2, "holes": 1})).await;
    let bob: Seat = app.join(&id, "Bob").await;
    app.join(&id, "Cleo").await;
    let public = |token: &str| {
        let path = format!("/v1/games/{id}");
        let token = token.to_owned();
        let app = &app;
        async move {
            app.send(Method::GET, &path, None, Some(&token))
                .await
                .status()
                .as_u16()
        }
    };
    assert_eq!(public(&ada).await, 200);
    assert_eq!(public(&bob.token).await, 200);
    let own = app
        .send(
            Method::GET,
            &format!("/v1/games/{id}/view"),
            None,
            Some(&ada),
        )
        .await;
    assert_eq!(own.status(), 401);
    let reveal = json!({"type": "reveal", "positions": [0, 1]});
    assert_eq!(app.play(&id, &ada, &reveal).await.status(), 401);
    let cancel = app
        .send(Method::DELETE, &format!("/v1/games/{id}"), None, Some(&ada))
        .await;
    assert_eq!(cancel.status(), 401);
    let rotated = app
        .send(Method::POST, "/v1/account/token", None, Some(&ada))
        .await;
    assert_eq!(rotated.status(), 200);
    assert_eq!(public(&ada).await, 401, "a rotated token is a bad token");
    assert_eq!(public("0123").await, 401);
    let create = app
        .send(
            Method::POST,
            "/v1/games",
            Some(&json!({"seats": 2})),
            Some(&ada),
        )
        .await;
    assert_eq!(create.status(), 401);
}

async fn a_game_of_two_accounts_plays_to_the_end_and_verifies(backend: Backend) {
    // Two account seats play a whole game by their account tokens; the log audits clean.
    let app = spawn_app(backend).await;
    let ada = account(&app, "ada").await;
    let bob = account(&app, "bob").await;
    let id = game_hosted_by(&app, &ada).await;
    let mut seats = Vec::new();
    for token in [&ada, &bob] {
        let (status, joined) = join_with(&app, &id, token, json!({})).await;
        assert_eq!(status, 201, "{joined}");
        let seat = joined["seat"].as_u64().unwrap() as u8;
        seats.push(Seat {
            seat,
            token: token.clone(),
        });
    }
    play_to_the_end(&app, &id, &seats).await;
    assert_eq!(app.view(&id, None).await["status"], "finished");
    let audit: Value = app
        .get(&format!("/v1/games/{id}/audit"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(audit["verified"], true, "{audit}");
}

on_both_backends!(
    a_seat_bound_to_an_account_is_read_and_moved_by_its_token,
    an_account_token_reads_other_games_as_a_spectator_only,
    a_game_of_two_accounts_plays_to_the_end_and_verifies,
    an_account_is_created_read_and_its_name_folded,
    every_refusal_of_a_new_account_has_its_code,
    a_retried_creation_with_its_key_answers_the_same_account,
    a_rotated_token_is_refused_at_once_on_another_instance,
);
