//! The HTTP contract of API.md through real HTTP on both backends: every problem code, the
//! precedence of failures, the headers, idempotency, the lobby, cancellation and replays.

mod common;

use std::collections::BTreeSet;

use common::{Backend, Seat, TestApp, play_to_the_end, spawn_app, stacked_deck};
use reqwest::Method;
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// A uuid no game has.
const NO_GAME: &str = "00000000-0000-4000-8000-000000000000";

/// Sends a raw body (any bytes, valid JSON or not) with extra headers.
async fn raw(
    app: &TestApp,
    method: Method,
    path: &str,
    body: Option<&str>,
    headers: &[(&str, &str)],
) -> reqwest::Response {
    let mut request = app.client.request(method, app.url(path));
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_owned());
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.expect("request reaches the server")
}

/// Asserts that `response` is the problem `code` with `status`, as API.md spells problems, and
/// returns its body.
async fn problem(response: reqwest::Response, status: u16, code: &str) -> Value {
    check_problem(response, status, code)
        .await
        .unwrap_or_else(|mismatch| panic!("{mismatch}"))
}

/// The body of `response` if it is the problem `code` with `status`, as API.md spells problems;
/// else what differs.
async fn check_problem(
    response: reqwest::Response,
    status: u16,
    code: &str,
) -> Result<Value, String> {
    let actual = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.map_err(|error| error.to_string())?;
    if actual != status {
        return Err(format!("expected {status} {code}, got {actual}: {text}"));
    }
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if content_type != "application/problem+json" {
        return Err(format!(
            "problem content type for {code} is {content_type:?}: {text}"
        ));
    }
    if !headers.contains_key("x-request-id") {
        return Err(format!("{code}: no x-request-id"));
    }
    let scheme = headers
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok());
    if status == 401 && scheme != Some("Bearer") {
        return Err(format!(
            "a 401 names the scheme it wants, not {scheme:?}: {text}"
        ));
    }
    let body: Value =
        serde_json::from_str(&text).map_err(|_| format!("a problem is JSON: {text}"))?;
    if body["code"] != code || body["status"] != status {
        return Err(format!("expected {status} {code}: {text}"));
    }
    for field in ["type", "title", "detail"] {
        if body[field].as_str().is_none_or(str::is_empty) {
            return Err(format!("{code}: `{field}` missing in {text}"));
        }
    }
    Ok(body)
}

/// The value of a response header as text.
fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .and_then(|v: &HeaderValue| v.to_str().ok())
        .unwrap_or_else(|| panic!("header {name} missing in {headers:?}"))
}

/// Asserts the headers of a response that depends on who asks.
fn assert_private(headers: &HeaderMap, what: &str) {
    assert_eq!(
        header(headers, "cache-control"),
        "private, no-store",
        "{what}"
    );
    assert!(
        header(headers, "vary")
            .split(',')
            .any(|v| v.trim().eq_ignore_ascii_case("authorization")),
        "{what}: Vary: Authorization"
    );
}

/// Creates a game with `body` and takes every seat; returns its id, the host token and the
/// seats.
async fn started(app: &TestApp, body: Value) -> (String, String, Vec<Seat>) {
    let seats = body["seats"].as_u64().unwrap();
    let (id, created) = app.create_game(body).await;
    let host = created["host_token"].as_str().unwrap().to_owned();
    let mut taken = Vec::new();
    for n in 0..seats {
        taken.push(app.join(&id, &format!("Player {n}")).await);
    }
    (id, host, taken)
}

/// The game's version, from its public view.
async fn version(app: &TestApp, id: &str) -> u64 {
    app.view(id, None).await["version"].as_u64().unwrap()
}

/// The number of entries of the game's log.
async fn log_len(app: &TestApp, id: &str) -> usize {
    app.events(id, None, 0).await.len()
}

/// Sends a move and asserts it is accepted; returns the caller's view.
async fn ok_move(app: &TestApp, id: &str, seat: &Seat, mv: Value) -> Value {
    let response = app.play(id, &seat.token, &mv).await;
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    assert_eq!(status, 200, "seat {} move {mv}: {body}", seat.seat);
    body
}

/// Every seat reveals positions 0 and 1.
async fn reveal_all(app: &TestApp, id: &str, seats: &[Seat]) {
    for seat in seats {
        ok_move(
            app,
            id,
            seat,
            json!({"type": "reveal", "positions": [0, 1]}),
        )
        .await;
    }
}

/// The seat to play and another seat.
async fn turn_order<'a>(app: &TestApp, id: &str, seats: &'a [Seat]) -> (&'a Seat, &'a Seat) {
    let current = app.view(id, None).await["current_seat"].as_u64().unwrap() as usize;
    (&seats[current], &seats[(current + 1) % seats.len()])
}

/// Asserts that a refused move changed nothing: the version and the log length are as before.
async fn assert_unchanged(app: &TestApp, id: &str, before: (u64, usize), what: &str) {
    assert_eq!(
        (version(app, id).await, log_len(app, id).await),
        before,
        "{what} changed the game"
    );
}

/// The version and the log length of a game.
async fn snapshot(app: &TestApp, id: &str) -> (u64, usize) {
    (version(app, id).await, log_len(app, id).await)
}

// ---------------------------------------------------------------------------------------------
// 400, 401, 404
// ---------------------------------------------------------------------------------------------

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
        (Method::GET, "/"),
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

async fn head_answers_like_get_without_a_body(backend: Backend) {
    // HEAD on any path that answers GET has the status and headers of the GET, and no body.
    let app = spawn_app(backend).await;
    let (id, _, seats) = started(&app, json!({"seats": 2, "holes": 1})).await;
    let tag = format!("\"{}\"", version(&app, &id).await);
    let token = format!("Bearer {}", seats[0].token);
    let game = format!("/v1/games/{id}");
    let own = format!("/v1/games/{id}/view");
    let unknown = format!("/v1/games/{NO_GAME}");
    let cases = [
        ("/healthz", None, 200),
        ("/readyz", None, 200),
        ("/metrics", None, 200),
        ("/openapi.json", None, 200),
        ("/docs/", None, 200),
        ("/docs", None, 308),
        ("/v1/games", None, 200),
        (game.as_str(), None, 200),
        (game.as_str(), Some(("if-none-match", tag.as_str())), 304),
        (own.as_str(), Some(("authorization", token.as_str())), 200),
        (own.as_str(), None, 401),
        (unknown.as_str(), None, 404),
        ("/docs/no-such-asset.js", None, 404),
    ];
    for (path, extra, status) in cases {
        let got = raw(&app, Method::GET, path, None, extra.as_slice()).await;
        let head = raw(&app, Method::HEAD, path, None, extra.as_slice()).await;
        assert_eq!(got.status().as_u16(), status, "GET {path}");
        assert_eq!(head.status().as_u16(), status, "HEAD {path}");
        for name in ["content-type", "etag", "cache-control", "vary", "location"] {
            assert_eq!(
                head.headers().get(name),
                got.headers().get(name),
                "HEAD {path}: {name}"
            );
        }
        if path != "/metrics" {
            // (The metrics change between the two requests.)
            assert_eq!(
                head.headers().get("content-length"),
                got.headers().get("content-length"),
                "HEAD {path}: the length of the GET's body"
            );
        }
        assert!(head.headers().contains_key("x-request-id"), "HEAD {path}");
        assert!(
            head.bytes().await.unwrap().is_empty(),
            "HEAD {path} has no body"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 409, 412, 413
// ---------------------------------------------------------------------------------------------

async fn moves_against_the_state_of_the_game_are_409(backend: Backend) {
    // not_your_turn, wrong_stage, game_full, game_not_started, game_finished, game_not_waiting and
    // already_revealed, each refused without changing the game.
    let app = spawn_app(backend).await;

    // game_not_started: a seat of a game that still waits for players.
    let (waiting, _) = app.create_game(json!({"seats": 2, "holes": 1})).await;
    let ada = app.join(&waiting, "Ada").await;
    let before = snapshot(&app, &waiting).await;
    let reveal = json!({"type": "reveal", "positions": [0, 1]});
    problem(
        app.play(&waiting, &ada.token, &reveal).await,
        409,
        "game_not_started",
    )
    .await;
    assert_unchanged(&app, &waiting, before, "a move before the start").await;

    // game_full: joining a started game.
    let grace = app.join(&waiting, "Grace").await;
    let seats = vec![ada, grace];
    let id = waiting;
    let response = app
        .send(
            Method::POST,
            &format!("/v1/games/{id}/players"),
            Some(&json!({"name": "Late"})),
            None,
        )
        .await;
    problem(response, 409, "game_full").await;

    // wrong_stage: a draw during the initial reveal.
    let before = snapshot(&app, &id).await;
    for mv in [
        json!({"type": "draw", "source": "stock"}),
        json!({"type": "swap", "position": 0}),
        json!({"type": "pass"}),
    ] {
        problem(
            app.play(&id, &seats[0].token, &mv).await,
            409,
            "wrong_stage",
        )
        .await;
    }
    assert_unchanged(&app, &id, before, "a move in the wrong stage").await;

    // already_revealed: a second reveal by the same seat.
    ok_move(&app, &id, &seats[0], reveal.clone()).await;
    let before = snapshot(&app, &id).await;
    let response = app
        .play(
            &id,
            &seats[0].token,
            &json!({"type": "reveal", "positions": [2, 3]}),
        )
        .await;
    problem(response, 409, "already_revealed").await;
    assert_unchanged(&app, &id, before, "a second reveal").await;
    ok_move(&app, &id, &seats[1], reveal.clone()).await;

    // not_your_turn: the other seat draws; wrong_stage: the current seat discards before drawing.
    let (current, other) = turn_order(&app, &id, &seats).await;
    let before = snapshot(&app, &id).await;
    let draw = json!({"type": "draw", "source": "stock"});
    let body = problem(
        app.play(&id, &other.token, &draw).await,
        409,
        "not_your_turn",
    )
    .await;
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains(&current.seat.to_string()),
        "{body}"
    );
    for mv in [
        json!({"type": "discard"}),
        json!({"type": "swap", "position": 0}),
        json!({"type": "flip", "position": 4}),
        reveal.clone(),
    ] {
        problem(app.play(&id, &current.token, &mv).await, 409, "wrong_stage").await;
    }
    // After a draw, a second draw is the wrong stage too.
    assert_unchanged(&app, &id, before, "a refused turn").await;
    ok_move(&app, &id, current, draw.clone()).await;
    let before = snapshot(&app, &id).await;
    problem(
        app.play(&id, &current.token, &draw).await,
        409,
        "wrong_stage",
    )
    .await;
    assert_unchanged(&app, &id, before, "a second draw").await;

    // game_not_waiting: cancelling a started game.
    let (started_id, host, _) = started(&app, json!({"seats": 2, "holes": 1})).await;
    let response = app
        .send(
            Method::DELETE,
            &format!("/v1/games/{started_id}"),
            None,
            Some(&host),
        )
        .await;
    problem(response, 409, "game_not_waiting").await;
    assert_eq!(app.view(&started_id, None).await["status"], "playing");

    // game_finished: any move once the last hole is scored.
    let (done, host, seats) = started(&app, json!({"seats": 2, "holes": 1})).await;
    play_to_the_end(&app, &done, &seats).await;
    let before = snapshot(&app, &done).await;
    for seat in &seats {
        for mv in [draw.clone(), reveal.clone(), json!({"type": "pass"})] {
            problem(
                app.play(&done, &seat.token, &mv).await,
                409,
                "game_finished",
            )
            .await;
        }
    }
    assert_unchanged(&app, &done, before, "a move after the end").await;
    let response = app
        .send(
            Method::DELETE,
            &format!("/v1/games/{done}"),
            None,
            Some(&host),
        )
        .await;
    problem(response, 409, "game_not_waiting").await;
}

async fn a_move_behind_a_held_lock_is_409_database_busy_and_changes_nothing(backend: Backend) {
    // Another transaction holds the game past the store's lock wait (PostgreSQL's lock_timeout,
    // SQLite's busy_timeout): the move is refused with a 409 that says to try again, not a 5xx,
    // and it is applied once the game is free.
    let app = spawn_app(backend).await;
    let (id, _) = app.create_game(json!({"seats": 2, "holes": 1})).await;
    let ada = app.join(&id, "Ada").await;
    app.join(&id, "Grace").await;
    let before = snapshot(&app, &id).await;
    let reveal = json!({"type": "reveal", "positions": [0, 1]});

    let holder = app
        .database
        .hold(id.parse().expect("a game id is a uuid"))
        .await;
    problem(
        app.play(&id, &ada.token, &reveal).await,
        409,
        "database_busy",
    )
    .await;
    holder.release().await;
    assert_unchanged(&app, &id, before, "a move behind a held lock").await;

    let response = app.play(&id, &ada.token, &reveal).await;
    assert_eq!(
        response.status(),
        200,
        "the same move once the game is free"
    );
}

async fn a_stale_if_match_is_412_and_changes_nothing(backend: Backend) {
    // If-Match with an old ETag is 412 stale_version and the version stays; the current one plays.
    let app = spawn_app(backend).await;
    let (id, _, seats) = started(&app, json!({"seats": 2, "holes": 1})).await;
    let old = app
        .send(
            Method::GET,
            &format!("/v1/games/{id}/view"),
            None,
            Some(&seats[0].token),
        )
        .await;
    let old_tag = header(old.headers(), "etag").to_owned();
    ok_move(
        &app,
        &id,
        &seats[1],
        json!({"type": "reveal", "positions": [0, 1]}),
    )
    .await;
    let before = snapshot(&app, &id).await;
    let moves = format!("/v1/games/{id}/moves");
    let auth = format!("Bearer {}", seats[0].token);
    let reveal = r#"{"type": "reveal", "positions": [0, 1]}"#;
    for tag in [old_tag.as_str(), "\"0\"", "\"999\"", "W/\"1\"", "garbage"] {
        let response = raw(
            &app,
            Method::POST,
            &moves,
            Some(reveal),
            &[("authorization", &auth), ("if-match", tag)],
        )
        .await;
        let body = problem(response, 412, "stale_version").await;
        assert!(body["detail"].is_string());
    }
    assert_unchanged(&app, &id, before, "a stale move").await;
    assert_eq!(before.0, 5);

    // The current ETag (as a view gives it) lets the move through.
    let current = app
        .send(
            Method::GET,
            &format!("/v1/games/{id}/view"),
            None,
            Some(&seats[0].token),
        )
        .await;
    let tag = header(current.headers(), "etag").to_owned();
    assert_eq!(tag, format!("\"{}\"", before.0));
    // If-Match compares strongly: the weak form of the current tag does not match.
    let weak = format!("W/{tag}");
    let response = raw(
        &app,
        Method::POST,
        &moves,
        Some(reveal),
        &[("authorization", &auth), ("if-match", &weak)],
    )
    .await;
    problem(response, 412, "stale_version").await;
    let response = raw(
        &app,
        Method::POST,
        &moves,
        Some(reveal),
        &[("authorization", &auth), ("if-match", &tag)],
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(header(response.headers(), "etag"), "\"6\"");
}

async fn bodies_over_64_kib_are_413_payload_too_large(backend: Backend) {
    // A body over 64 KiB is 413 payload_too_large on every endpoint that takes one; 64 KiB is not.
    let app = spawn_app(backend).await;
    let limit = 64 * 1024;
    let padded = |json: &str, size: usize| format!("{json}{}", " ".repeat(size - json.len()));

    let create = r#"{"seats": 2, "holes": 1}"#;
    let response = raw(
        &app,
        Method::POST,
        "/v1/games",
        Some(&padded(create, limit + 1)),
        &[],
    )
    .await;
    problem(response, 413, "payload_too_large").await;
    let response = raw(
        &app,
        Method::POST,
        "/v1/games",
        Some(&format!(
            r#"{{"seats": 2, "pad": "{}"}}"#,
            "x".repeat(300_000)
        )),
        &[],
    )
    .await;
    problem(response, 413, "payload_too_large").await;
    let response = raw(
        &app,
        Method::POST,
        "/v1/games",
        Some(&padded(create, limit)),
        &[],
    )
    .await;
    assert_eq!(response.status(), 201, "64 KiB exactly is accepted");

    let (id, _, seats) = started(&app, json!({"seats": 2, "holes": 1})).await;
    let before = snapshot(&app, &id).await;
    let auth = format!("Bearer {}", seats[0].token);
    let reveal = r#"{"type": "reveal", "positions": [0, 1]}"#;
    let response = raw(
        &app,
        Method::POST,
        &format!("/v1/games/{id}/moves"),
        Some(&padded(reveal, limit + 1)),
        &[("authorization", &auth)],
    )
    .await;
    problem(response, 413, "payload_too_large").await;
    assert_unchanged(&app, &id, before, "an oversized move").await;

    let (waiting, _) = app.create_game(json!({"seats": 2})).await;
    let response = raw(
        &app,
        Method::POST,
        &format!("/v1/games/{waiting}/players"),
        Some(&padded(r#"{"name": "Ada"}"#, limit + 1)),
        &[],
    )
    .await;
    problem(response, 413, "payload_too_large").await;
    assert_eq!(
        app.view(&waiting, None).await["players"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
}

// ---------------------------------------------------------------------------------------------
// 422
// ---------------------------------------------------------------------------------------------

async fn move_values_that_break_a_rule_are_422_and_change_nothing(backend: Backend) {
    // position_out_of_range, duplicate_positions, invalid_reveal and must_swap_discard_draw are
    // 422s that change neither the version nor the log.
    let app = spawn_app(backend).await;
    let (id, _, seats) = started(&app, json!({"seats": 2, "holes": 1})).await;

    let before = snapshot(&app, &id).await;
    for (positions, code) in [
        (json!([0, 6]), "position_out_of_range"),
        (json!([-1, 2]), "position_out_of_range"),
        (json!([1, 1]), "duplicate_positions"),
        (json!([0, 1, 2]), "invalid_reveal"),
        (json!([3]), "invalid_reveal"),
        (json!([]), "invalid_reveal"),
    ] {
        let mv = json!({"type": "reveal", "positions": positions});
        problem(app.play(&id, &seats[0].token, &mv).await, 422, code).await;
    }
    assert_unchanged(&app, &id, before, "a refused reveal").await;
    reveal_all(&app, &id, &seats).await;

    let (current, _) = turn_order(&app, &id, &seats).await;
    let public = app.view(&id, None).await;
    let top = public["discard_top"].as_str().unwrap().to_owned();
    ok_move(
        &app,
        &id,
        current,
        json!({"type": "draw", "source": "discard"}),
    )
    .await;
    let before = snapshot(&app, &id).await;
    for position in [6, -1, 100] {
        let mv = json!({"type": "swap", "position": position});
        let body = problem(
            app.play(&id, &current.token, &mv).await,
            422,
            "position_out_of_range",
        )
        .await;
        assert!(
            body["detail"]
                .as_str()
                .unwrap()
                .contains(&position.to_string()),
            "{body}"
        );
    }
    let body = problem(
        app.play(&id, &current.token, &json!({"type": "discard"}))
            .await,
        422,
        "must_swap_discard_draw",
    )
    .await;
    assert!(
        body["detail"].as_str().unwrap().contains(&top),
        "the detail names the public card {top}: {body}"
    );
    assert_unchanged(&app, &id, before, "a refused placement").await;
    let view = ok_move(&app, &id, current, json!({"type": "swap", "position": 5})).await;
    assert_eq!(view["players"][current.seat as usize]["grid"][5], top);
}

async fn flip_rules_are_422(backend: Backend) {
    // Under "optional", flipping a face-up card is position_already_revealed (and out of range
    // positions are refused); under "always", passing is flip_required.
    let app = spawn_app(backend).await;
    for (rule, refused, code) in [
        (
            "optional",
            json!({"type": "flip", "position": 0}),
            "position_already_revealed",
        ),
        (
            "optional",
            json!({"type": "flip", "position": 6}),
            "position_out_of_range",
        ),
        ("always", json!({"type": "pass"}), "flip_required"),
        (
            "always",
            json!({"type": "flip", "position": 1}),
            "position_already_revealed",
        ),
    ] {
        let (id, _, seats) = started(
            &app,
            json!({"seats": 2, "holes": 1, "rules": {"flip_after_discard": rule}}),
        )
        .await;
        reveal_all(&app, &id, &seats).await;
        let (current, other) = turn_order(&app, &id, &seats).await;
        ok_move(
            &app,
            &id,
            current,
            json!({"type": "draw", "source": "stock"}),
        )
        .await;
        let view = ok_move(&app, &id, current, json!({"type": "discard"})).await;
        assert_eq!(view["stage"], "flip", "{rule}");
        let before = snapshot(&app, &id).await;
        problem(app.play(&id, &current.token, &refused).await, 422, code).await;
        // The other seat is still not to play.
        problem(
            app.play(&id, &other.token, &json!({"type": "pass"})).await,
            409,
            "not_your_turn",
        )
        .await;
        assert_unchanged(&app, &id, before, code).await;
        let view = ok_move(&app, &id, current, json!({"type": "flip", "position": 4})).await;
        assert!(view["players"][current.seat as usize]["grid"][4].is_string());
    }
}

async fn creation_and_seat_values_that_break_a_rule_are_422(backend: Backend) {
    // invalid_name, invalid_client_seed, invalid_deck, invalid_game_options, out_of_range and
    // idempotency_key_reused on creation; good values next to them are accepted.
    let app = spawn_app(backend).await;
    let (id, _) = app.create_game(json!({"seats": 4})).await;
    let players = format!("/v1/games/{id}/players");
    let long = "n".repeat(41);
    for name in [
        "",
        "   ",
        "\t\n",
        long.as_str(),
        "Ada\u{7}",
        "\u{0}",
        "A\u{9f}da",
    ] {
        let response = app
            .send(Method::POST, &players, Some(&json!({"name": name})), None)
            .await;
        let body = problem(response, 422, "invalid_name").await;
        assert!(body["detail"].is_string());
    }
    let seed = "s".repeat(65);
    for client_seed in [seed.as_str(), "seed\u{1b}"] {
        let response = app
            .send(
                Method::POST,
                &players,
                Some(&json!({"name": "Ada", "client_seed": client_seed})),
                None,
            )
            .await;
        problem(response, 422, "invalid_client_seed").await;
    }
    assert_eq!(app.view(&id, None).await["players"], json!([]));
    // The edges of the ranges are accepted: 40 scalar values after trimming, a 64-character seed.
    let forty = format!("  {}  ", "é".repeat(40));
    let response = app
        .send(
            Method::POST,
            &players,
            Some(&json!({"name": forty, "client_seed": "s".repeat(64)})),
            None,
        )
        .await;
    assert_eq!(response.status(), 201);
    assert_eq!(
        app.view(&id, None).await["players"][0]["name"],
        "é".repeat(40)
    );

    for (body, needle) in [
        (json!({"seats": 5}), "seats"),
        (json!({"seats": 1}), "seats"),
        (json!({"seats": 2, "holes": 0}), "holes"),
        (json!({"seats": 2, "holes": 19}), "holes"),
        (
            json!({"seats": 3, "rules": {"max_turns_per_hole": 2}}),
            "max_turns_per_hole",
        ),
        (
            json!({"seats": 2, "rules": {"max_turns_per_hole": -1}}),
            "max_turns_per_hole",
        ),
        (
            json!({"seats": 2, "rules": {"max_turns_per_hole": 5_000_000_000i64}}),
            "max_turns_per_hole",
        ),
        (
            json!({"seats": 2, "rules": {"max_turns_per_hole": 401}}),
            "max_turns_per_hole",
        ),
        (
            json!({"seats": 2, "holes": 1, "decks": [stacked_deck(1), stacked_deck(2)]}),
            "decks",
        ),
    ] {
        let response = app.send(Method::POST, "/v1/games", Some(&body), None).await;
        let problem = problem(response, 422, "invalid_game_options").await;
        assert!(
            problem["detail"].as_str().unwrap().contains(needle),
            "{body}: {problem}"
        );
    }
    let mut duplicate = stacked_deck(7);
    duplicate[10] = duplicate[11].clone();
    let mut unknown = stacked_deck(7);
    unknown[3] = "1S".to_owned();
    let short = stacked_deck(7)[..51].to_vec();
    for bad in [duplicate, unknown, short] {
        let body = json!({"seats": 2, "holes": 2, "decks": [stacked_deck(3), bad]});
        let response = app.send(Method::POST, "/v1/games", Some(&body), None).await;
        let problem = problem(response, 422, "invalid_deck").await;
        assert!(
            problem["detail"].as_str().unwrap().contains("decks[1]"),
            "the detail names the deck: {problem}"
        );
    }
    let body = json!({"seats": 2, "holes": 2, "decks": [stacked_deck(3)]});
    let response = app.send(Method::POST, "/v1/games", Some(&body), None).await;
    assert_eq!(response.status(), 201);

    // Paging limits out of their ranges.
    for path in [
        format!("/v1/games/{id}/events?limit=0"),
        format!("/v1/games/{id}/events?limit=1001"),
        format!("/v1/games/{id}/events?limit=-5"),
        format!("/v1/games/{id}/events?after=-1"),
        "/v1/games?limit=101".to_owned(),
        "/v1/games?limit=0".to_owned(),
        "/v1/games?status=waiting&limit=101".to_owned(),
    ] {
        problem(app.get(&path).await, 422, "out_of_range").await;
    }
    // Statuses of API.md parse, but the lobby lists only waiting games.
    for status in ["playing", "finished"] {
        let path = format!("/v1/games?status={status}");
        let refused = problem(app.get(&path).await, 422, "out_of_range").await;
        assert!(
            refused["detail"].as_str().unwrap().contains("only waiting"),
            "{refused}"
        );
    }
    for path in [
        format!("/v1/games/{id}/events?limit=1"),
        format!("/v1/games/{id}/events?limit=1000"),
        "/v1/games?limit=100".to_owned(),
        "/v1/games?limit=1".to_owned(),
    ] {
        assert_eq!(app.get(&path).await.status(), 200, "{path}");
    }

    // idempotency_key_reused on creation.
    let first = app
        .client
        .post(app.url("/v1/games"))
        .header("idempotency-key", "create-1-5f0c2b9e-8d1a-4c7e")
        .json(&json!({"seats": 2}))
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), 201);
    let again = app
        .client
        .post(app.url("/v1/games"))
        .header("idempotency-key", "create-1-5f0c2b9e-8d1a-4c7e")
        .json(&json!({"seats": 3}))
        .send()
        .await
        .unwrap();
    problem(again, 422, "idempotency_key_reused").await;

    // Creation keys are shared by every client, so a short, guessable one is refused.
    let short = app
        .client
        .post(app.url("/v1/games"))
        .header("idempotency-key", "1")
        .json(&json!({"seats": 2}))
        .send()
        .await
        .unwrap();
    problem(short, 400, "malformed_request").await;
}

// ---------------------------------------------------------------------------------------------
// Precedence
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Headers
// ---------------------------------------------------------------------------------------------

async fn views_carry_a_strong_etag_and_answer_if_none_match(backend: Backend) {
    // Views carry ETag "<version>"; If-None-Match with it is a 304 without a body, another is 200.
    let app = spawn_app(backend).await;
    let (id, _, seats) = started(&app, json!({"seats": 2, "holes": 1})).await;
    let public = format!("/v1/games/{id}");
    let own = format!("/v1/games/{id}/view");
    for (path, token) in [(&public, None), (&own, Some(seats[0].token.as_str()))] {
        let response = app.send(Method::GET, path, None, token).await;
        assert_eq!(response.status(), 200);
        let tag = header(response.headers(), "etag").to_owned();
        let view: Value = response.json().await.unwrap();
        assert_eq!(tag, format!("\"{}\"", view["version"]), "{path}");
        assert!(!tag.starts_with("W/"), "a strong ETag");

        for matching in [
            tag.clone(),
            format!("W/{tag}"),
            format!("\"0\", {tag}"),
            "*".to_owned(),
        ] {
            let mut request = app
                .client
                .get(app.url(path))
                .header("if-none-match", &matching);
            if let Some(token) = token {
                request = request.bearer_auth(token);
            }
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), 304, "{path} If-None-Match {matching}");
            assert_eq!(header(response.headers(), "etag"), tag);
            assert!(response.headers().contains_key("x-request-id"));
            if token.is_some() {
                assert_private(response.headers(), "a 304 of the own view");
            }
            assert!(
                response.bytes().await.unwrap().is_empty(),
                "a 304 has no body"
            );
        }
        for other in ["\"0\"", "\"999\"", "W/\"1\"", "garbage"] {
            let mut request = app.client.get(app.url(path)).header("if-none-match", other);
            if let Some(token) = token {
                request = request.bearer_auth(token);
            }
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), 200, "{path} If-None-Match {other}");
            let body: Value = response.json().await.unwrap();
            assert_eq!(body["id"], id);
        }
    }

    // A move's response carries the new version; the old ETag no longer matches.
    let view = ok_move(
        &app,
        &id,
        &seats[0],
        json!({"type": "reveal", "positions": [2, 3]}),
    )
    .await;
    let response = app
        .client
        .get(app.url(&own))
        .bearer_auth(&seats[0].token)
        .header("if-none-match", "\"4\"")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(header(response.headers(), "etag"), "\"5\"");
    assert_eq!(view["version"], 5);
    let response = app
        .send(
            Method::POST,
            &format!("/v1/games/{id}/moves"),
            Some(&json!({"type": "reveal", "positions": [4, 5]})),
            Some(&seats[1].token),
        )
        .await;
    assert_eq!(response.status(), 200);
    let tag = header(response.headers(), "etag").to_owned();
    let body: Value = response.json().await.unwrap();
    assert_eq!(tag, format!("\"{}\"", body["version"]));

    // A replay is a view too: its ETag is its seq, and it answers If-None-Match.
    for token in [None, Some(seats[0].token.as_str())] {
        let path = format!("/v1/games/{id}/replay/3");
        let response = app.send(Method::GET, &path, None, token).await;
        assert_eq!(response.status(), 200);
        assert_eq!(header(response.headers(), "etag"), "\"3\"");
        let mut request = app
            .client
            .get(app.url(&path))
            .header("if-none-match", "\"3\"");
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 304);
        assert_private(response.headers(), "a 304 replay");
        assert!(response.bytes().await.unwrap().is_empty());
    }
}

async fn seat_specific_responses_are_private_and_every_response_has_a_request_id(backend: Backend) {
    // Creation is a 201 with Location and host_token; seat-specific responses (own view, moves,
    // joins, event pages, replays) are private, no-store and vary on Authorization; every response
    // carries x-request-id.
    let app = spawn_app(backend).await;
    let response = app
        .send(
            Method::POST,
            "/v1/games",
            Some(&json!({"seats": 2, "holes": 1})),
            None,
        )
        .await;
    assert_eq!(response.status(), 201);
    let headers = response.headers().clone();
    let created: Value = response.json().await.unwrap();
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(header(&headers, "location"), format!("/v1/games/{id}"));
    assert!(header(&headers, "content-type").starts_with("application/json"));
    assert!(headers.contains_key("x-request-id"));
    assert!(
        created["host_token"]
            .as_str()
            .is_some_and(|t| t.len() >= 32),
        "{created}"
    );
    assert_eq!(created["status"], "waiting");
    assert!(created["commitment"].is_string());
    // The Location names the game.
    let located = app.get(header(&headers, "location")).await;
    assert_eq!(located.status(), 200);

    // The join response.
    let mut seats = Vec::new();
    for name in ["Ada", "Grace"] {
        let response = app
            .send(
                Method::POST,
                &format!("/v1/games/{id}/players"),
                Some(&json!({"name": name})),
                None,
            )
            .await;
        assert_eq!(response.status(), 201);
        assert_private(response.headers(), "the join response");
        assert!(response.headers().contains_key("x-request-id"));
        let joined: Value = response.json().await.unwrap();
        seats.push(Seat {
            seat: joined["seat"].as_u64().unwrap() as u8,
            token: joined["token"].as_str().unwrap().to_owned(),
        });
    }

    let own = app
        .send(
            Method::GET,
            &format!("/v1/games/{id}/view"),
            None,
            Some(&seats[0].token),
        )
        .await;
    assert_eq!(own.status(), 200);
    assert_private(own.headers(), "the own view");
    let moved = app
        .play(
            &id,
            &seats[0].token,
            &json!({"type": "reveal", "positions": [0, 1]}),
        )
        .await;
    assert_eq!(moved.status(), 200);
    assert_private(moved.headers(), "a move response");
    for token in [None, Some(seats[1].token.as_str())] {
        for path in [
            format!("/v1/games/{id}/events"),
            format!("/v1/games/{id}/events?after=2&limit=1"),
            format!("/v1/games/{id}/replay/4"),
        ] {
            let response = app.send(Method::GET, &path, None, token).await;
            assert_eq!(response.status(), 200, "{path}");
            assert_private(response.headers(), &path);
            assert!(response.headers().contains_key("x-request-id"));
        }
    }

    // x-request-id on every kind of response, errors and empty ones included; each one differs.
    let mut ids = BTreeSet::new();
    let (cancelled, created) = app.create_game(json!({"seats": 2})).await;
    let host = created["host_token"].as_str().unwrap();
    let responses = vec![
        app.get(&format!("/v1/games/{id}")).await,
        app.get("/v1/games?status=waiting").await,
        app.get("/v1/games/nope").await,
        app.get("/nowhere").await,
        app.get("/healthz").await,
        app.get("/openapi.json").await,
        app.send(
            Method::DELETE,
            &format!("/v1/games/{cancelled}"),
            None,
            Some(host),
        )
        .await,
        app.client
            .get(app.url(&format!("/v1/games/{id}")))
            .header("if-none-match", "\"5\"")
            .send()
            .await
            .unwrap(),
        app.play(&id, "nope", &json!({"type": "pass"})).await,
    ];
    for response in responses {
        let status = response.status();
        let request_id = header(response.headers(), "x-request-id").to_owned();
        assert!(!request_id.is_empty(), "{status}");
        assert!(ids.insert(request_id), "request ids are unique");
    }
}

/// A request and the status it answers, for checking the answer against the spec.
type Case<'a> = (
    Method,
    &'a str,
    &'a str,
    Option<&'a str>,
    Vec<(&'a str, &'a str)>,
    u16,
);

async fn every_answer_is_documented_with_the_headers_it_carries(backend: Backend) {
    // For each documented status an endpoint can be made to answer here, the served spec
    // documents that status, and every header it documents for it is in the real answer (with
    // its documented value where the value is fixed).
    let app = spawn_app(backend).await;
    let spec: Value = app.get("/openapi.json").await.json().await.unwrap();
    let (id, host, seats) = started(&app, json!({"seats": 2, "holes": 1})).await;
    let (waiting, created) = app.create_game(json!({"seats": 2})).await;
    let waiting_host = created["host_token"].as_str().unwrap().to_owned();
    // Hole 1 starts with the reveal, where both seats may move once.
    let (first, second) = (&seats[0], &seats[1]);
    let auth = |seat: &Seat| format!("Bearer {}", seat.token);
    let (first_auth, second_auth) = (auth(first), auth(second));
    let host_auth = format!("Bearer {host}");
    let waiting_host_auth = format!("Bearer {waiting_host}");
    let tag = format!("\"{}\"", version(&app, &id).await);
    let big = format!(r#"{{"seats": 2, "pad": "{}"}}"#, "x".repeat(70 * 1024));
    let reveal = r#"{"type": "reveal", "positions": [0, 1]}"#;
    let bad = [("authorization", "Bearer nope")];
    let game = format!("/v1/games/{id}");
    let own = format!("/v1/games/{id}/view");
    let moves = format!("/v1/games/{id}/moves");
    let events = format!("/v1/games/{id}/events");
    let replay = format!("/v1/games/{id}/replay/1");
    let no_entry = format!("/v1/games/{id}/replay/99");
    let (unparsed_after, negative_after) =
        (format!("{events}?after=x"), format!("{events}?after=-1"));
    let players = format!("/v1/games/{waiting}/players");
    let full = format!("/v1/games/{id}/players");
    let cancel = format!("/v1/games/{waiting}");
    let unknown = format!("/v1/games/{NO_GAME}");
    let as_first = [("authorization", first_auth.as_str())];
    let as_second = [("authorization", second_auth.as_str())];
    // method, documented path, path, body, headers, the status it answers
    #[rustfmt::skip]
    let cases: Vec<Case> = vec![
        (Method::POST, "/v1/games", "/v1/games", Some(r#"{"seats": 2}"#), vec![], 201),
        (Method::POST, "/v1/games", "/v1/games", Some("{"), vec![], 400),
        (Method::POST, "/v1/games", "/v1/games", Some(&big), vec![], 413),
        (Method::POST, "/v1/games", "/v1/games", Some(r#"{"seats": 5}"#), vec![], 422),
        (Method::GET, "/v1/games", "/v1/games", None, vec![], 200),
        (Method::GET, "/v1/games", "/v1/games?limit=ten", None, vec![], 400),
        (Method::GET, "/v1/games", "/v1/games?limit=0", None, vec![], 422),
        (Method::GET, "/v1/games/{id}", &game, None, vec![], 200),
        (Method::GET, "/v1/games/{id}", &game, None, vec![("if-none-match", &tag)], 304),
        (Method::GET, "/v1/games/{id}", &game, None, bad.to_vec(), 401),
        (Method::GET, "/v1/games/{id}", &unknown, None, vec![], 404),
        (Method::GET, "/v1/games/{id}/view", &own, None, as_first.to_vec(), 200),
        (Method::GET, "/v1/games/{id}/view", &own, None, vec![as_first[0], ("if-none-match", &tag)], 304),
        (Method::GET, "/v1/games/{id}/view", &own, None, vec![], 401),
        (Method::POST, "/v1/games/{id}/moves", &moves, Some("{"), as_first.to_vec(), 400),
        (Method::POST, "/v1/games/{id}/moves", &moves, Some(reveal), bad.to_vec(), 401),
        (Method::POST, "/v1/games/{id}/moves", &moves, Some(r#"{"type": "reveal", "positions": [0, 9]}"#), as_first.to_vec(), 422),
        (Method::POST, "/v1/games/{id}/moves", &moves, Some(reveal), vec![as_first[0], ("if-match", "\"1\"")], 412),
        (Method::POST, "/v1/games/{id}/moves", &moves, Some(reveal), as_first.to_vec(), 200),
        (Method::POST, "/v1/games/{id}/moves", &moves, Some(reveal), as_first.to_vec(), 409),
        (Method::POST, "/v1/games/{id}/moves", &moves, Some(reveal), as_second.to_vec(), 200),
        (Method::GET, "/v1/games/{id}/events", &events, None, vec![], 200),
        (Method::GET, "/v1/games/{id}/events", &unparsed_after, None, vec![], 400),
        (Method::GET, "/v1/games/{id}/events", &negative_after, None, vec![], 422),
        (Method::GET, "/v1/games/{id}/replay/{seq}", &replay, None, as_first.to_vec(), 200),
        (Method::GET, "/v1/games/{id}/replay/{seq}", &replay, None, vec![("if-none-match", "\"1\"")], 304),
        (Method::GET, "/v1/games/{id}/replay/{seq}", &no_entry, None, vec![], 404),
        (Method::POST, "/v1/games/{id}/players", &players, Some(r#"{"name": ""}"#), vec![], 422),
        (Method::POST, "/v1/games/{id}/players", &players, Some(r#"{"name": "Ada"}"#), vec![], 201),
        (Method::POST, "/v1/games/{id}/players", &full, Some(r#"{"name": "Cy"}"#), vec![], 409),
        (Method::DELETE, "/v1/games/{id}", &cancel, None, vec![], 401),
        (Method::DELETE, "/v1/games/{id}", &game, None, vec![("authorization", &host_auth)], 409),
        (Method::DELETE, "/v1/games/{id}", &cancel, None, vec![("authorization", &waiting_host_auth)], 204),
        (Method::GET, "/healthz", "/healthz", None, vec![], 200),
        (Method::GET, "/readyz", "/readyz", None, vec![], 200),
        (Method::GET, "/metrics", "/metrics", None, vec![], 200),
    ];
    let fixed_values = ["Cache-Control", "Vary", "WWW-Authenticate"];
    for (method, template, path, body, headers, status) in cases {
        let what = format!("{method} {path} ({status})");
        let response = raw(&app, method.clone(), path, body, &headers).await;
        assert_eq!(response.status().as_u16(), status, "{what}");
        let operation = &spec["paths"][template][method.as_str().to_lowercase()];
        let documented = &operation["responses"][status.to_string()];
        assert!(documented.is_object(), "{what} is not documented");
        for (name, declared) in documented["headers"].as_object().unwrap() {
            let declared = match declared["$ref"].as_str() {
                Some(reference) => spec.pointer(&reference[1..]).unwrap(),
                None => declared,
            };
            let actual = response
                .headers()
                .get(name)
                .unwrap_or_else(|| panic!("{what}: the documented {name} is missing"));
            if fixed_values.contains(&name.as_str()) {
                assert_eq!(
                    actual.to_str().unwrap(),
                    declared["example"],
                    "{what}: {name}"
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Idempotency
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Lobby and cancel
// ---------------------------------------------------------------------------------------------

async fn the_lobby_lists_public_waiting_games_newest_first(backend: Backend) {
    // The lobby lists public waiting games with free seats newest first, without private, started
    // or cancelled games; limit=1 pages through each game once.
    let app = spawn_app(backend).await;
    let (oldest, _) = app.create_game(json!({"seats": 2})).await;
    let (_private, _) = app.create_game(json!({"seats": 2, "private": true})).await;
    let (full, _, _) = started(&app, json!({"seats": 2, "holes": 1})).await;
    let (cancelled, created) = app.create_game(json!({"seats": 3})).await;
    let host = created["host_token"].as_str().unwrap();
    let (half, _) = app.create_game(json!({"seats": 3, "holes": 2})).await;
    app.join(&half, "Ada").await;
    let response = app
        .send(
            Method::DELETE,
            &format!("/v1/games/{cancelled}"),
            None,
            Some(host),
        )
        .await;
    assert_eq!(response.status(), 204);
    let (newest, _) = app.create_game(json!({"seats": 4})).await;
    let expected = vec![newest.clone(), half.clone(), oldest.clone()];

    for path in ["/v1/games?status=waiting", "/v1/games"] {
        let response = app.get(path).await;
        assert_eq!(response.status(), 200);
        let page: Value = response.json().await.unwrap();
        let games = page["games"].as_array().unwrap();
        let ids: Vec<&str> = games.iter().map(|g| g["id"].as_str().unwrap()).collect();
        assert_eq!(ids, expected, "{path}");
        assert_eq!(page["next_cursor"], Value::Null);
        for game in games {
            assert_eq!(game["status"], "waiting");
            assert!(game.get("you").is_none() && game.get("legal_moves").is_none());
        }
        assert_eq!(games[1]["players"][0]["name"], "Ada");
    }
    assert!(!expected.contains(&full));

    // One game a page, following next_cursor until it is null.
    let mut seen = Vec::new();
    let mut path = "/v1/games?status=waiting&limit=1".to_owned();
    for _ in 0..10 {
        let page: Value = app.get(&path).await.json().await.unwrap();
        let games = page["games"].as_array().unwrap();
        assert!(games.len() <= 1);
        seen.extend(games.iter().map(|g| g["id"].as_str().unwrap().to_owned()));
        match page["next_cursor"].as_str() {
            Some(cursor) => path = format!("/v1/games?status=waiting&limit=1&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(seen, expected, "every game seen once, newest first");
    // Two a page.
    let page: Value = app.get("/v1/games?limit=2").await.json().await.unwrap();
    assert_eq!(page["games"].as_array().unwrap().len(), 2);
    let cursor = page["next_cursor"].as_str().unwrap();
    let page: Value = app
        .get(&format!("/v1/games?limit=2&cursor={cursor}"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(page["games"][0]["id"], oldest);
    assert_eq!(page["games"].as_array().unwrap().len(), 1);
    assert_eq!(page["next_cursor"], Value::Null);

    // A game that fills leaves the lobby.
    app.join(&half, "Grace").await;
    app.join(&half, "Alan").await;
    let page: Value = app.get("/v1/games").await.json().await.unwrap();
    let ids: Vec<&str> = page["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![newest.as_str(), oldest.as_str()]);
}

async fn the_host_cancels_a_waiting_game_and_it_is_gone(backend: Backend) {
    // DELETE by the host is a 204; afterwards the game is 404 everywhere; a started game is 409
    // game_not_waiting.
    let app = spawn_app(backend).await;
    let (id, created) = app.create_game(json!({"seats": 3})).await;
    let host = created["host_token"].as_str().unwrap().to_owned();
    let ada = app.join(&id, "Ada").await;
    let response = app
        .send(
            Method::DELETE,
            &format!("/v1/games/{id}"),
            None,
            Some(&host),
        )
        .await;
    assert_eq!(response.status(), 204);
    assert!(response.headers().contains_key("x-request-id"));
    assert!(response.bytes().await.unwrap().is_empty());
    let reveal = json!({"type": "reveal", "positions": [0, 1]});
    let join = json!({"name": "Grace"});
    for (method, path, body, token) in [
        (Method::GET, format!("/v1/games/{id}"), None, None),
        (
            Method::GET,
            format!("/v1/games/{id}/view"),
            None,
            Some(ada.token.as_str()),
        ),
        (
            Method::POST,
            format!("/v1/games/{id}/players"),
            Some(&join),
            None,
        ),
        (
            Method::POST,
            format!("/v1/games/{id}/moves"),
            Some(&reveal),
            Some(ada.token.as_str()),
        ),
        (Method::GET, format!("/v1/games/{id}/events"), None, None),
        (
            Method::GET,
            format!("/v1/games/{id}/events"),
            None,
            Some(ada.token.as_str()),
        ),
        (Method::GET, format!("/v1/games/{id}/replay/1"), None, None),
        (
            Method::DELETE,
            format!("/v1/games/{id}"),
            None,
            Some(host.as_str()),
        ),
    ] {
        let response = app.send(method.clone(), &path, body, token).await;
        problem(response, 404, "not_found").await;
    }
    let page: Value = app.get("/v1/games").await.json().await.unwrap();
    assert_eq!(page["games"], json!([]));

    // A started game cannot be cancelled, and stays.
    let (started_id, host, seats) = started(&app, json!({"seats": 2})).await;
    let response = app
        .send(
            Method::DELETE,
            &format!("/v1/games/{started_id}"),
            None,
            Some(&host),
        )
        .await;
    problem(response, 409, "game_not_waiting").await;
    let view = app.view(&started_id, Some(&seats[0].token)).await;
    assert_eq!(view["status"], "playing");
}

// ---------------------------------------------------------------------------------------------
// Replays
// ---------------------------------------------------------------------------------------------

async fn replays_show_the_view_as_it_was(backend: Backend) {
    // A replay with a seat token is that seat's view after entry seq (you and legal_moves as
    // then), without a token the spectator's; the latest seq equals the current views.
    let app = spawn_app(backend).await;
    let (id, _, seats) = started(&app, json!({"seats": 2, "holes": 1})).await;
    // game_created 1, player_joined 2 and 3, hole_dealt 4.
    assert_eq!(version(&app, &id).await, 4);
    let dealt_views: Vec<Value> = {
        let mut views = Vec::new();
        for seat in &seats {
            views.push(app.view(&id, Some(&seat.token)).await);
        }
        views
    };
    reveal_all(&app, &id, &seats).await;
    let (current, _) = turn_order(&app, &id, &seats).await;
    ok_move(
        &app,
        &id,
        current,
        json!({"type": "draw", "source": "stock"}),
    )
    .await;

    let replay = |seq: u64, token: Option<String>| {
        let app = &app;
        let id = id.clone();
        async move {
            let response = app
                .send(
                    Method::GET,
                    &format!("/v1/games/{id}/replay/{seq}"),
                    None,
                    token.as_deref(),
                )
                .await;
            assert_eq!(response.status(), 200, "replay {seq}");
            response.json::<Value>().await.unwrap()
        }
    };

    // Right after the deal every seat could reveal any of the 15 pairs.
    for (seat, dealt) in seats.iter().zip(&dealt_views) {
        let view = replay(4, Some(seat.token.clone())).await;
        assert_eq!(view["version"], 4);
        assert_eq!(view["you"], seat.seat);
        assert_eq!(view["stage"], "reveal");
        let legal = view["legal_moves"].as_array().unwrap();
        assert_eq!(legal.len(), 15, "{view}");
        assert!(legal.iter().all(|m| m["type"] == "reveal"));
        assert_eq!(
            &view, dealt,
            "the replay equals the view seat {} had",
            seat.seat
        );
    }
    // Before seat 1 joined (seq 2) it is still seat 1's view: you, and nothing it may do yet.
    let early = replay(2, Some(seats[1].token.clone())).await;
    assert_eq!(early["you"], seats[1].seat);
    assert_eq!(early["legal_moves"], json!([]));
    assert_eq!(early["players"].as_array().unwrap().len(), 1);
    // After seat 0's reveal (seq 5), seat 0 waits while seat 1 may still reveal.
    let first = replay(5, Some(seats[0].token.clone())).await;
    assert_eq!(first["version"], 5);
    assert_eq!(first["legal_moves"], json!([]));
    assert_eq!(first["players"][0]["revealed_count"], 2);
    let second = replay(5, Some(seats[1].token.clone())).await;
    assert_eq!(second["legal_moves"].as_array().unwrap().len(), 15);
    assert_eq!(second["players"][0]["grid"], first["players"][0]["grid"]);
    // Before the deal: waiting, one player.
    let early = replay(2, Some(seats[0].token.clone())).await;
    assert_eq!(early["status"], "waiting");
    assert_eq!(early["players"].as_array().unwrap().len(), 1);
    assert_eq!(early["legal_moves"], json!([]));
    assert_eq!(early["stage"], Value::Null);

    // Without a token: the spectator's view, no `you`, no `legal_moves`, no face-down cards.
    let spectator = replay(4, None).await;
    assert_eq!(spectator["version"], 4);
    assert!(spectator.get("you").is_none(), "{spectator}");
    assert!(spectator.get("legal_moves").is_none(), "{spectator}");
    for player in spectator["players"].as_array().unwrap() {
        assert_eq!(player["grid"], json!([null, null, null, null, null, null]));
    }

    // The latest seq equals the current views, for each seat and for spectators.
    let latest = version(&app, &id).await;
    for seat in &seats {
        assert_eq!(
            replay(latest, Some(seat.token.clone())).await,
            app.view(&id, Some(&seat.token)).await
        );
    }
    assert_eq!(replay(latest, None).await, app.view(&id, None).await);
    // The drawer sees the drawn card in the replay; the other seat does not.
    let drawn_by_current = replay(latest, Some(current.token.clone())).await;
    assert!(drawn_by_current["drawn"]["card"].is_string());
    let other = seats.iter().find(|s| s.seat != current.seat).unwrap();
    assert_eq!(
        replay(latest, Some(other.token.clone())).await["drawn"]["card"],
        Value::Null
    );
}

on_both_backends!(
    requests_that_do_not_parse_are_400_malformed_request,
    missing_and_bad_tokens_are_401_unauthorized,
    unknown_games_entries_and_routes_are_404_not_found,
    head_answers_like_get_without_a_body,
    moves_against_the_state_of_the_game_are_409,
    a_move_behind_a_held_lock_is_409_database_busy_and_changes_nothing,
    a_stale_if_match_is_412_and_changes_nothing,
    bodies_over_64_kib_are_413_payload_too_large,
    move_values_that_break_a_rule_are_422_and_change_nothing,
    flip_rules_are_422,
    creation_and_seat_values_that_break_a_rule_are_422,
    failures_follow_the_contracts_precedence,
    views_carry_a_strong_etag_and_answer_if_none_match,
    seat_specific_responses_are_private_and_every_response_has_a_request_id,
    every_answer_is_documented_with_the_headers_it_carries,
    idempotent_moves_apply_once_per_key_and_seat,
    idempotent_creation_creates_one_game,
    the_lobby_lists_public_waiting_games_newest_first,
    the_host_cancels_a_waiting_game_and_it_is_gone,
    replays_show_the_view_as_it_was,
);
