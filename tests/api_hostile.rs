//! Input meant to break the server, through real HTTP on both backends: deep JSON, bytes that
//! are not UTF-8, very long headers and names, integers far out of range. Each is a problem
//! with its code (or, for a head the HTTP codec refuses, a bare 4xx), never a 5xx, never a
//! change to the game, and the server goes on serving. The simpler cases (unknown enum values,
//! control characters in names, duplicate positions, tokens of other games, replayed
//! idempotency keys) are in `api_bad_requests`, `api_refusals` and `api_idempotency`.

mod common;

use std::time::Duration;

use common::contract::{assert_unchanged, problem, raw, snapshot, started};
use common::{Backend, TestApp, spawn_app};
use reqwest::Method;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Sends raw bytes as the body of `POST path`.
async fn post_bytes(app: &TestApp, path: &str, body: Vec<u8>, token: &str) -> reqwest::Response {
    let mut request = app
        .client
        .post(app.url(path))
        .header("content-type", "application/json")
        .body(body);
    if !token.is_empty() {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    request.send().await.expect("request reaches the server")
}

async fn deep_json_and_bytes_that_are_not_utf8_are_400(backend: Backend) {
    let app = spawn_app(backend).await;
    let (id, _, seats) = started(&app, json!({"seats": 2, "holes": 1})).await;
    let before = snapshot(&app, &id).await;
    let moves = format!("/v1/games/{id}/moves");
    let token = seats[0].token.as_str();

    // serde_json stops at 128 levels: deeper is malformed, not a stack overflow.
    for depth in [200, 20_000] {
        let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let response = post_bytes(&app, &moves, deep.clone().into_bytes(), token).await;
        problem(response, 400, "malformed_request").await;
        let nested_rules = format!(r#"{{"seats": 2, "rules": {deep}}}"#);
        let response = post_bytes(&app, "/v1/games", nested_rules.into_bytes(), "").await;
        problem(response, 400, "malformed_request").await;
    }
    let mut deep_object = String::new();
    for _ in 0..1000 {
        deep_object.push_str(r#"{"a":"#);
    }
    deep_object.push('1');
    deep_object.push_str(&"}".repeat(1000));
    let response = post_bytes(&app, &moves, deep_object.into_bytes(), token).await;
    problem(response, 400, "malformed_request").await;

    let mut name = br#"{"name": "Ad"#.to_vec();
    name.extend([0xff, 0xfe, 0xc3]);
    name.extend(br#""}"#);
    let (waiting, _) = app.create_game(json!({"seats": 2})).await;
    let players = format!("/v1/games/{waiting}/players");
    problem(
        post_bytes(&app, &players, name, "").await,
        400,
        "malformed_request",
    )
    .await;
    let mut kind = br#"{"type": "rev"#.to_vec();
    kind.extend([0xe9, 0x80]);
    kind.extend(br#"eal", "positions": [0, 1]}"#);
    problem(
        post_bytes(&app, &moves, kind, token).await,
        400,
        "malformed_request",
    )
    .await;
    // An overlong encoding of '"' must not end the string early.
    let overlong = [br#"{"type": "pass"#.as_slice(), &[0xc0, 0xa2], b"}"].concat();
    problem(
        post_bytes(&app, &moves, overlong, token).await,
        400,
        "malformed_request",
    )
    .await;

    // Header values that are not visible ASCII: a token that is no token, a key that is no key.
    let latin1 = reqwest::header::HeaderValue::from_bytes(b"Bearer \xe9t\xe9").unwrap();
    let response = app
        .client
        .get(app.url(&format!("/v1/games/{id}/view")))
        .header("authorization", latin1)
        .send()
        .await
        .unwrap();
    problem(response, 401, "unauthorized").await;
    let key =
        reqwest::header::HeaderValue::from_bytes(b"\xff\xfe-key-key-key-key-key-key").unwrap();
    let response = app
        .client
        .post(app.url(&moves))
        .header("authorization", format!("Bearer {token}"))
        .header("idempotency-key", key)
        .json(&json!({"type": "reveal", "positions": [0, 1]}))
        .send()
        .await
        .unwrap();
    problem(response, 400, "malformed_request").await;
    assert_unchanged(&app, &id, before, "hostile bodies").await;
}

async fn integers_far_out_of_range_are_refused_not_wrapped(backend: Backend) {
    let app = spawn_app(backend).await;
    let (id, _, seats) = started(&app, json!({"seats": 2, "holes": 1})).await;
    let before = snapshot(&app, &id).await;
    let auth = format!("Bearer {}", seats[0].token);
    let auth = [("authorization", auth.as_str())];
    let moves = format!("/v1/games/{id}/moves");

    for body in [
        r#"{"seats": -2}"#,
        r#"{"seats": 18446744073709551618}"#,
        r#"{"seats": 2, "holes": 1e300}"#,
        r#"{"seats": 2, "holes": -1}"#,
    ] {
        let response = raw(&app, Method::POST, "/v1/games", Some(body), &[]).await;
        let status = response.status().as_u16();
        assert!(status == 400 || status == 422, "{body}: {status}");
        response.text().await.unwrap();
    }
    for body in [
        r#"{"type": "reveal", "positions": [-1, 0]}"#,
        r#"{"type": "reveal", "positions": [0, 4294967297]}"#,
        r#"{"type": "flip", "position": 99999999999999999999999}"#,
        r#"{"type": "swap", "position": -9223372036854775808}"#,
    ] {
        // Refused for its value, or (a swap with nothing drawn) for its stage first.
        let response = raw(&app, Method::POST, &moves, Some(body), &auth).await;
        let status = response.status().as_u16();
        assert!(matches!(status, 400 | 409 | 422), "{body}: {status}");
        response.text().await.unwrap();
    }
    assert_unchanged(&app, &id, before, "out-of-range integers").await;

    for query in ["after=-1", "limit=0", "limit=1000000"] {
        let response = app.get(&format!("/v1/games/{id}/events?{query}")).await;
        problem(response, 422, "out_of_range").await;
    }
    for query in ["after=9223372036854775808", "limit=-99999999999999999999"] {
        let response = app.get(&format!("/v1/games/{id}/events?{query}")).await;
        problem(response, 400, "malformed_request").await;
    }
    let response = raw(
        &app,
        Method::GET,
        &format!("/v1/games/{id}/events?after=9223372036854775807"),
        None,
        &auth,
    )
    .await;
    assert_eq!(response.status(), 200);
    for seq in ["-1", "9223372036854775807", "99999999999999999999"] {
        let response = app.get(&format!("/v1/games/{id}/replay/{seq}")).await;
        let status = response.status().as_u16();
        assert!((400..500).contains(&status), "replay/{seq}: {status}");
    }
    let lobby = app
        .get("/v1/games?status=waiting&limit=18446744073709551617")
        .await;
    assert!(lobby.status().is_client_error(), "{}", lobby.status());
}

async fn a_stream_after_the_largest_seq_stays_open_and_quiet(backend: Backend) {
    // `after` = i64::MAX once overflowed in the stream (schemathesis found it): the stream
    // died with the worker's panic instead of waiting for entries.
    let app = spawn_app(backend).await;
    let (id, _, seats) = started(&app, json!({"seats": 2, "holes": 1})).await;
    let response = app
        .client
        .get(app.url(&format!("/v1/games/{id}/stream?after=9223372036854775807")))
        .header("authorization", format!("Bearer {}", seats[0].token))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut response = response;
    let reveal = json!({"type": "reveal", "positions": [0, 1]});
    assert_eq!(app.play(&id, &seats[0].token, &reveal).await.status(), 200);
    let next = tokio::time::timeout(Duration::from_secs(1), response.chunk()).await;
    assert!(
        next.is_err(),
        "the stream neither ends nor shows anything: {next:?}"
    );
    assert_eq!(app.get("/healthz").await.status(), 200);
}

async fn bodies_are_objects_and_if_match_names_a_version(backend: Backend) {
    // serde reads a struct from the array of its fields too, and an empty If-Match once was a
    // 412 naming no version (both found by schemathesis).
    let app = spawn_app(backend).await;
    let (id, _, seats) = started(&app, json!({"seats": 2, "holes": 1})).await;
    let before = snapshot(&app, &id).await;
    let token = format!("Bearer {}", seats[0].token);
    let auth = [("authorization", token.as_str())];
    for body in [
        "[2, 9]",
        r#" [2, 9, {"final_turns": true}]"#,
        r#"{"seats": 2, "rules": [null, null]}"#,
        r#"{"seats": 2, "rules": [true, "always", 10]}"#,
    ] {
        let response = raw(&app, Method::POST, "/v1/games", Some(body), &[]).await;
        problem(response, 400, "malformed_request").await;
    }
    let moves = format!("/v1/games/{id}/moves");
    for body in [r#"["reveal", [0, 1]]"#, r#"["pass"]"#] {
        let response = raw(&app, Method::POST, &moves, Some(body), &auth).await;
        problem(response, 400, "malformed_request").await;
    }
    let reveal = r#"{"type": "reveal", "positions": [0, 1]}"#;
    // An If-Match that is not `*` or a list of entity-tags (or bare numbers) is malformed, as
    // the spec's pattern says: `null` was once a 412 (found by schemathesis).
    for malformed in [
        "", " ", ",", " , ", "null", "garbage", "*, \"1\"", "\"1", "W/1",
    ] {
        let headers = [auth[0], ("if-match", malformed)];
        let response = raw(&app, Method::POST, &moves, Some(reveal), &headers).await;
        problem(response, 400, "malformed_request").await;
    }
    assert_unchanged(&app, &id, before, "arrays for objects, malformed If-Match").await;
    // Empty list elements are skipped (RFC 9110): these name versions the game has left.
    for stale in ["\"999\"", "\"1\", ", ", 999,\t,W/\"1\""] {
        let headers = [auth[0], ("if-match", stale)];
        let response = raw(&app, Method::POST, &moves, Some(reveal), &headers).await;
        problem(response, 412, "stale_version").await;
    }
}

on_both_backends!(
    bodies_are_objects_and_if_match_names_a_version,
    deep_json_and_bytes_that_are_not_utf8_are_400,
    integers_far_out_of_range_are_refused_not_wrapped,
    a_stream_after_the_largest_seq_stays_open_and_quiet,
);

#[tokio::test]
async fn very_long_headers_and_names_are_refused_and_the_server_goes_on() {
    let app = spawn_app(Backend::Sqlite).await;
    let (id, _, seats) = started(&app, json!({"seats": 2, "holes": 1})).await;
    // A long token is just a wrong one.
    let long_token = "t".repeat(8 * 1024);
    let response = app
        .client
        .get(app.url(&format!("/v1/games/{id}/view")))
        .header("authorization", format!("Bearer {long_token}"))
        .send()
        .await
        .unwrap();
    problem(response, 401, "unauthorized").await;
    let long_key = "k".repeat(4096);
    let response = raw(
        &app,
        Method::POST,
        "/v1/games",
        Some(r#"{"seats": 2}"#),
        &[("idempotency-key", long_key.as_str())],
    )
    .await;
    problem(response, 400, "malformed_request").await;
    let (waiting, _) = app.create_game(json!({"seats": 2})).await;
    let response = app
        .send(
            Method::POST,
            &format!("/v1/games/{waiting}/players"),
            Some(&json!({"name": "N".repeat(60_000)})),
            None,
        )
        .await;
    problem(response, 422, "invalid_name").await;

    // A head larger than the codec takes is refused before any handler: a 4xx, never a 5xx.
    let address = app.address.trim_start_matches("http://");
    let mut connection = TcpStream::connect(address).await.unwrap();
    let huge = format!(
        "GET /v1/games/{id}/view HTTP/1.1\r\nHost: golf\r\nAuthorization: Bearer {}\r\n\r\n",
        "x".repeat(256 * 1024)
    );
    // The server may close the connection before it has read all of it.
    let _ = connection.write_all(huge.as_bytes()).await;
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), connection.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 4"),
        "{answer}"
    );
    let view = app.view(&id, Some(&seats[0].token)).await;
    assert_eq!(view["you"], 0, "served as before");
}
