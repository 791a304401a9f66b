//! Requests the server cannot take as they are, through real HTTP on both backends: bodies and
//! parameters that do not parse (400), missing and bad tokens (401), unknown games, entries and
//! routes (404) and methods a path does not answer (405).

mod common;

use common::contract::{
    NO_GAME, assert_unchanged, header, problem, raw, snapshot, started, version,
};
use common::{Backend, spawn_app};
use reqwest::Method;
use serde_json::{Value, json};

async fn requests_that_do_not_parse_are_400_malformed_request(backend: Backend) {
    // Bodies and parameters that do not parse into the request's shape are 400 malformed_request.
    let app = spawn_app(backend).await;
    let (id, _, seats) = started(&app, json!({"seats": 2, "holes": 1})).await;
    let before = snapshot(&app, &id).await;
    let token = format!("Bearer {}", seats[0].token);
    let auth = [("authorization", token.as_str())];

    for body in [
        "{",
        "",
        "null",
        r#"{"seats": 2, "colour": "red"}"#,
        r#"{"seats": "two"}"#,
        r#"{"seats": 2, "holes": 1.5}"#,
        r#"{"holes": 3}"#,
        r#"{"seats": 2, "rules": {"flip_after_discard": "sometimes"}}"#,
        r#"{"seats": 2, "rules": {"jokers": true}}"#,
        r#"{"seats": 2, "private": "yes"}"#,
    ] {
        let response = raw(&app, Method::POST, "/v1/games", Some(body), &[]).await;
        problem(response, 400, "malformed_request").await;
    }

    let moves = format!("/v1/games/{id}/moves");
    for body in [
        "{",
        "[]",
        r#"{"positions": [0, 1]}"#,
        r#"{"type": "peek", "position": 0}"#,
        r#"{"type": "reveal", "positions": [0, 1], "peek": true}"#,
        r#"{"type": "reveal", "positions": "0,1"}"#,
        r#"{"type": "reveal", "positions": [0, "1"]}"#,
        r#"{"type": "draw", "source": "deck"}"#,
        r#"{"type": "draw"}"#,
        r#"{"type": "swap", "position": "2"}"#,
        r#"{"type": "discard", "card": "AS"}"#,
        r#"{"type": "pass", "x": 1}"#,
    ] {
        let response = raw(&app, Method::POST, &moves, Some(body), &auth).await;
        problem(response, 400, "malformed_request").await;
    }
    assert_unchanged(&app, &id, before, "a malformed move").await;

    let (waiting, _) = app.create_game(json!({"seats": 2})).await;
    let players = format!("/v1/games/{waiting}/players");
    for body in [
        "{",
        r#"{"nom": "Ada"}"#,
        r#"{"name": 7}"#,
        r#"{"name": "Ada", "seat": 1}"#,
        r#"{"name": "Ada", "client_seed": 5}"#,
        r#"{"name": "Bot", "bot": "clever"}"#,
    ] {
        let response = raw(&app, Method::POST, &players, Some(body), &[]).await;
        problem(response, 400, "malformed_request").await;
    }

    // Cursors that decode, but to times this server never writes (the store could not compare
    // them), are malformed too.
    let odd_cursors: Vec<String> = [
        "+12345-01-01T00:00:00.000000Z",
        "0000-01-01T00:00:00.000000Z",
        "1969-12-31T23:59:59.999999Z",
        "2026-12-01T00:00:00Z",
    ]
    .iter()
    .map(|time| {
        format!(
            "cursor={}",
            hex::encode(format!("{time}|00000000-0000-4000-8000-000000000000"))
        )
    })
    .collect();
    for query in [
        "status=lost",
        "status=Waiting",
        "status=",
        "limit=ten",
        "cursor=zz",
        "cursor=00",
        "cursor=6e6f742d612d637572736f72",
        "sort=oldest",
    ]
    .into_iter()
    .chain(odd_cursors.iter().map(String::as_str))
    {
        let response = app.get(&format!("/v1/games?{query}")).await;
        problem(response, 400, "malformed_request").await;
    }
    for query in ["limit=ten", "after=x", "after=1.5", "colour=red"] {
        let response = app.get(&format!("/v1/games/{id}/events?{query}")).await;
        problem(response, 400, "malformed_request").await;
    }
}

async fn missing_and_bad_tokens_are_401_unauthorized(backend: Backend) {
    // A missing token where one is required, and any token that is not of this game (also where
    // the token is optional, or not Bearer), is 401 unauthorized and never a downgrade.
    let app = spawn_app(backend).await;
    let (id, host, seats) = started(&app, json!({"seats": 2, "holes": 1})).await;
    let (_other, other_host, other_seats) = started(&app, json!({"seats": 2, "holes": 1})).await;
    let before = snapshot(&app, &id).await;
    let reveal = json!({"type": "reveal", "positions": [0, 1]});
    let view = format!("/v1/games/{id}/view");

    // The own view: no token, a made-up token, another game's seat and host tokens, the host's.
    problem(
        app.send(Method::GET, &view, None, None).await,
        401,
        "unauthorized",
    )
    .await;
    for token in ["not-a-token", "", &other_seats[0].token, &other_host, &host] {
        let response = app.send(Method::GET, &view, None, Some(token)).await;
        problem(response, 401, "unauthorized").await;
    }
    // A move: no token, a wrong token, another game's seat, the host (not a seat).
    let moves = format!("/v1/games/{id}/moves");
    problem(
        app.send(Method::POST, &moves, Some(&reveal), None).await,
        401,
        "unauthorized",
    )
    .await;
    for token in ["not-a-token", &other_seats[1].token, &host] {
        problem(app.play(&id, token, &reveal).await, 401, "unauthorized").await;
    }
    // The public view is the same for everyone, but a bad token on it is still refused.
    let public = format!("/v1/games/{id}");
    assert_eq!(
        app.send(Method::GET, &public, None, None).await.status(),
        200
    );
    assert_eq!(
        app.send(Method::GET, &public, None, Some(&seats[0].token))
            .await
            .status(),
        200
    );
    for token in ["not-a-token", &other_seats[0].token] {
        let response = app.send(Method::GET, &public, None, Some(token)).await;
        problem(response, 401, "unauthorized").await;
    }
    // The events page takes an optional token: a bad one is refused, not taken as anonymous.
    let events = format!("/v1/games/{id}/events");
    assert_eq!(
        app.send(Method::GET, &events, None, None).await.status(),
        200
    );
    for token in ["not-a-token", &other_seats[0].token, &other_host] {
        let response = app.send(Method::GET, &events, None, Some(token)).await;
        problem(response, 401, "unauthorized").await;
    }
    // So does a replay.
    let replay = format!("/v1/games/{id}/replay/1");
    assert_eq!(
        app.send(Method::GET, &replay, None, None).await.status(),
        200
    );
    let response = app.send(Method::GET, &replay, None, Some("nope")).await;
    problem(response, 401, "unauthorized").await;
    // A header that is not `Bearer <token>`, even around a good token, is refused everywhere.
    for value in [
        seats[0].token.clone(),
        format!("Basic {}", seats[0].token),
        format!("Token {}", seats[0].token),
        format!("Bearer{}", seats[0].token),
        "Bearer".to_owned(),
        "Basic dXNlcjpwYXNz".to_owned(),
    ] {
        for path in [&view, &events, &replay] {
            let response = raw(&app, Method::GET, path, None, &[("authorization", &value)]).await;
            problem(response, 401, "unauthorized").await;
        }
        let response = raw(
            &app,
            Method::POST,
            &moves,
            Some(&reveal.to_string()),
            &[("authorization", &value)],
        )
        .await;
        problem(response, 401, "unauthorized").await;
    }
    assert_unchanged(&app, &id, before, "an unauthorized move").await;
    // The scheme is case-insensitive (RFC 9110): `bearer <token>` is the seat's token.
    for scheme in ["bearer", "BEARER"] {
        let value = format!("{scheme} {}", seats[0].token);
        let response = raw(&app, Method::GET, &view, None, &[("authorization", &value)]).await;
        assert_eq!(response.status(), 200, "{scheme}");
        assert_eq!(
            response.json::<Value>().await.unwrap()["you"],
            seats[0].seat
        );
    }

    // Seating a bot needs the host token: not anonymous, not a seat token, not another host's.
    let (waiting, created) = app.create_game(json!({"seats": 3})).await;
    let waiting_host = created["host_token"].as_str().unwrap().to_owned();
    let ada = app.join(&waiting, "Ada").await;
    let players = format!("/v1/games/{waiting}/players");
    let bot = json!({"name": "Robo", "bot": "greedy"});
    problem(
        app.send(Method::POST, &players, Some(&bot), None).await,
        401,
        "unauthorized",
    )
    .await;
    for token in [ada.token.as_str(), &other_host, "nope"] {
        let response = app
            .send(Method::POST, &players, Some(&bot), Some(token))
            .await;
        problem(response, 401, "unauthorized").await;
    }
    // A person joining with a bad token is refused too.
    let response = app
        .send(
            Method::POST,
            &players,
            Some(&json!({"name": "Bo"})),
            Some("nope"),
        )
        .await;
    problem(response, 401, "unauthorized").await;
    // Cancelling needs the host token: not anonymous, not a seat token, not another host's.
    let game = format!("/v1/games/{waiting}");
    problem(
        app.send(Method::DELETE, &game, None, None).await,
        401,
        "unauthorized",
    )
    .await;
    for token in [ada.token.as_str(), &other_host, "nope"] {
        let response = app.send(Method::DELETE, &game, None, Some(token)).await;
        problem(response, 401, "unauthorized").await;
    }
    let response = raw(
        &app,
        Method::DELETE,
        &game,
        None,
        &[("authorization", &format!("Basic {waiting_host}"))],
    )
    .await;
    problem(response, 401, "unauthorized").await;
    // Nothing happened to the waiting game: one seat taken, no bot.
    let view = app.view(&waiting, None).await;
    assert_eq!(view["status"], "waiting");
    assert_eq!(view["players"].as_array().unwrap().len(), 1);
}

async fn unknown_games_entries_and_routes_are_404_not_found(backend: Backend) {
    // An unknown game id on every endpoint, a non-uuid id, replay seqs outside the log and unknown
    // routes are 404 not_found problems.
    let app = spawn_app(backend).await;
    let (id, host, seats) = started(&app, json!({"seats": 2, "holes": 1})).await;
    let reveal = json!({"type": "reveal", "positions": [0, 1]});
    let join = json!({"name": "Ada"});
    for game in [
        NO_GAME,
        "not-a-uuid",
        "12345",
        "00000000-0000-4000-8000-00000000000g",
    ] {
        let cases: Vec<(Method, String, Option<&Value>, Option<&str>)> = vec![
            (Method::GET, format!("/v1/games/{game}"), None, None),
            (
                Method::GET,
                format!("/v1/games/{game}/view"),
                None,
                Some(&seats[0].token),
            ),
            (
                Method::POST,
                format!("/v1/games/{game}/players"),
                Some(&join),
                None,
            ),
            (
                Method::POST,
                format!("/v1/games/{game}/moves"),
                Some(&reveal),
                Some(&seats[0].token),
            ),
            (Method::GET, format!("/v1/games/{game}/events"), None, None),
            (
                Method::GET,
                format!("/v1/games/{game}/replay/1"),
                None,
                None,
            ),
            (
                Method::DELETE,
                format!("/v1/games/{game}"),
                None,
                Some(&host),
            ),
        ];
        for (method, path, body, token) in cases {
            let response = app.send(method.clone(), &path, body, token).await;
            let found = problem(response, 404, "not_found").await;
            assert!(found["detail"].is_string(), "{method} {path}");
        }
    }
    let version = version(&app, &id).await;
    for seq in [
        "0".to_owned(),
        "-1".to_owned(),
        (version + 1).to_string(),
        "99999999999999999999".to_owned(),
        "x".to_owned(),
    ] {
        for token in [None, Some(seats[0].token.as_str())] {
            let path = format!("/v1/games/{id}/replay/{seq}");
            let response = app.send(Method::GET, &path, None, token).await;
            problem(response, 404, "not_found").await;
        }
    }
    let response = app.get(&format!("/v1/games/{id}/replay/{version}")).await;
    assert_eq!(response.status(), 200);
    for (method, path) in [
        (Method::GET, "/v2/games"),
        (Method::GET, "/v1/game"),
        (Method::GET, "/v1/games/{id}/scores"),
        (Method::POST, "/v1/games/{id}/undo"),
        (Method::GET, "/index.html"),
    ] {
        let path = path.replace("{id}", &id);
        let response = app.send(method, &path, None, None).await;
        problem(response, 404, "not_found").await;
    }
    // So is an asset the docs page does not have.
    for path in ["/docs/no-such-asset.js", "/docs/a/b/c"] {
        let found = problem(app.get(path).await, 404, "not_found").await;
        assert!(found["detail"].as_str().unwrap().contains(path), "{found}");
    }
    // A known path with a method it does not answer is 405, naming the methods it does answer;
    // the spec and the docs page are known paths too.
    for (method, path, allow) in [
        (Method::PUT, "/v1/games/{id}", "GET, HEAD, DELETE"),
        (Method::PATCH, "/v1/games/{id}/moves", "POST"),
        (Method::HEAD, "/v1/games/{id}/moves", "POST"),
        (Method::DELETE, "/v1/games", "GET, HEAD, POST"),
        (Method::POST, "/openapi.json", "GET, HEAD"),
        (Method::POST, "/docs", "GET, HEAD"),
        (Method::DELETE, "/docs/index.html", "GET, HEAD"),
        (Method::POST, "/healthz", "GET, HEAD"),
    ] {
        let path = path.replace("{id}", &id);
        let response = app.send(method.clone(), &path, None, None).await;
        assert_eq!(header(response.headers(), "allow"), allow, "{path}");
        if method == Method::HEAD {
            assert_eq!(response.status(), 405, "{path}");
            assert!(response.bytes().await.unwrap().is_empty(), "HEAD {path}");
        } else {
            problem(response, 405, "method_not_allowed").await;
        }
    }
}

async fn integral_floats_are_integers_as_json_schema_counts_them(backend: Backend) {
    // `4.0` and `1e0` are integers to JSON Schema, so the spec allows them where it says integer
    // (schemathesis sent `"seats": 4.0`): the server reads them as 4 and 1. `1.5` stays a 400.
    let app = spawn_app(backend).await;
    let body = r#"{"seats": 2.0, "holes": 1e0, "rules": {"max_turns_per_hole": 100.0}}"#;
    let response = raw(&app, Method::POST, "/v1/games", Some(body), &[]).await;
    assert_eq!(response.status(), 201);
    let created: Value = response.json().await.unwrap();
    assert_eq!(created["seats"], 2, "{created}");
    assert_eq!(created["holes"], 1, "{created}");
    assert_eq!(created["rules"]["max_turns_per_hole"], 100, "{created}");
    let (id, _, seats) = started(&app, json!({"seats": 2, "holes": 1})).await;
    let token = format!("Bearer {}", seats[0].token);
    let moves = format!("/v1/games/{id}/moves");
    let reveal = r#"{"type": "reveal", "positions": [0.0, 4e0]}"#;
    let response = raw(
        &app,
        Method::POST,
        &moves,
        Some(reveal),
        &[("authorization", &token)],
    )
    .await;
    assert_eq!(response.status(), 200);
    let half = r#"{"type": "flip", "position": 1.5}"#;
    let response = raw(
        &app,
        Method::POST,
        &moves,
        Some(half),
        &[("authorization", &token)],
    )
    .await;
    problem(response, 400, "malformed_request").await;
}

on_both_backends!(
    integral_floats_are_integers_as_json_schema_counts_them,
    requests_that_do_not_parse_are_400_malformed_request,
    missing_and_bad_tokens_are_401_unauthorized,
    unknown_games_entries_and_routes_are_404_not_found,
);
