//! Checking the HTTP contract of docs/API.md: raw requests, problems as docs/API.md spells them, headers,
//! and the version and log length a refused request must leave alone.

use reqwest::Method;
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::{Value, json};

use super::{Seat, TestApp};

/// A uuid no game has.
pub const NO_GAME: &str = "00000000-0000-4000-8000-000000000000";

/// Sends a raw body (any bytes, valid JSON or not) with extra headers.
pub async fn raw(
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

/// Asserts that `response` is the problem `code` with `status`, as docs/API.md spells problems, and
/// returns its body.
pub async fn problem(response: reqwest::Response, status: u16, code: &str) -> Value {
    check_problem(response, status, code)
        .await
        .unwrap_or_else(|mismatch| panic!("{mismatch}"))
}

/// The body of `response` if it is the problem `code` with `status`, as docs/API.md spells problems;
/// else what differs.
pub async fn check_problem(
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
pub fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .and_then(|v: &HeaderValue| v.to_str().ok())
        .unwrap_or_else(|| panic!("header {name} missing in {headers:?}"))
}

/// Asserts the headers of a response that depends on who asks.
pub fn assert_private(headers: &HeaderMap, what: &str) {
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
pub async fn started(app: &TestApp, body: Value) -> (String, String, Vec<Seat>) {
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
pub async fn version(app: &TestApp, id: &str) -> u64 {
    app.view(id, None).await["version"].as_u64().unwrap()
}

/// The number of entries of the game's log.
pub async fn log_len(app: &TestApp, id: &str) -> usize {
    app.events(id, None, 0).await.len()
}

/// Sends a move and asserts it is accepted; returns the caller's view.
pub async fn ok_move(app: &TestApp, id: &str, seat: &Seat, mv: Value) -> Value {
    let response = app.play(id, &seat.token, &mv).await;
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    assert_eq!(status, 200, "seat {} move {mv}: {body}", seat.seat);
    body
}

/// Every seat reveals positions 0 and 1.
pub async fn reveal_all(app: &TestApp, id: &str, seats: &[Seat]) {
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
pub async fn turn_order<'a>(app: &TestApp, id: &str, seats: &'a [Seat]) -> (&'a Seat, &'a Seat) {
    let current = app.view(id, None).await["current_seat"].as_u64().unwrap() as usize;
    (&seats[current], &seats[(current + 1) % seats.len()])
}

/// Asserts that a refused move changed nothing: the version and the log length are as before.
pub async fn assert_unchanged(app: &TestApp, id: &str, before: (u64, usize), what: &str) {
    assert_eq!(
        (version(app, id).await, log_len(app, id).await),
        before,
        "{what} changed the game"
    );
}

/// The version and the log length of a game.
pub async fn snapshot(app: &TestApp, id: &str) -> (u64, usize) {
    (version(app, id).await, log_len(app, id).await)
}
