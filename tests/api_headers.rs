//! The headers of docs/API.md through real HTTP on both backends: HEAD, ETags and conditional
//! requests, private answers, request ids, and the served spec documenting every answer.

mod common;

use std::collections::BTreeSet;

use common::contract::{NO_GAME, assert_private, header, ok_move, raw, started, version};
use common::{Backend, Seat, spawn_app};
use reqwest::Method;
use serde_json::{Value, json};

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
    let export = format!("/v1/games/{id}/export");
    let unknown_export = format!("/v1/games/{NO_GAME}/export");
    let audit = format!("/v1/games/{id}/audit");
    let unknown_audit = format!("/v1/games/{NO_GAME}/audit");
    let (unparsed_after, negative_after) =
        (format!("{events}?after=x"), format!("{events}?after=-1"));
    let stream = format!("/v1/games/{id}/stream");
    let (unparsed_stream, negative_stream) =
        (format!("{stream}?after=x"), format!("{stream}?after=-1"));
    let unknown_stream = format!("/v1/games/{NO_GAME}/stream");
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
        (Method::GET, "/v1/games/{id}/stream", &stream, None, as_first.to_vec(), 200),
        (Method::GET, "/v1/games/{id}/stream", &stream, None, bad.to_vec(), 401),
        (Method::GET, "/v1/games/{id}/stream", &unknown_stream, None, vec![], 404),
        (Method::GET, "/v1/games/{id}/stream", &unparsed_stream, None, vec![], 400),
        (Method::GET, "/v1/games/{id}/stream", &negative_stream, None, vec![], 422),
        (Method::GET, "/v1/games/{id}/replay/{seq}", &replay, None, as_first.to_vec(), 200),
        (Method::GET, "/v1/games/{id}/replay/{seq}", &replay, None, vec![("if-none-match", "\"1\"")], 304),
        (Method::GET, "/v1/games/{id}/replay/{seq}", &no_entry, None, vec![], 404),
        (Method::GET, "/v1/games/{id}/export", &export, None, vec![], 409),
        (Method::GET, "/v1/games/{id}/export", &export, None, bad.to_vec(), 401),
        (Method::GET, "/v1/games/{id}/export", &unknown_export, None, vec![], 404),
        (Method::GET, "/v1/games/{id}/audit", &audit, None, vec![], 200),
        (Method::GET, "/v1/games/{id}/audit", &audit, None, bad.to_vec(), 401),
        (Method::GET, "/v1/games/{id}/audit", &unknown_audit, None, vec![], 404),
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

on_both_backends!(
    head_answers_like_get_without_a_body,
    views_carry_a_strong_etag_and_answer_if_none_match,
    seat_specific_responses_are_private_and_every_response_has_a_request_id,
    every_answer_is_documented_with_the_headers_it_carries,
);
