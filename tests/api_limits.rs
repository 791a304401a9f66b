//! What one client may ask of an instance, through real HTTP: the budgets of creations and
//! joins and of expensive reads, on by default (per client address, forwarded addresses only
//! from trusted proxies), the cap on open streams, CORS, and slow clients that never finish a
//! request.

mod common;

use std::time::{Duration, Instant};

use common::contract::{header, problem, raw};
use common::{Backend, TestApp, TestDatabase, spawn_app_with};
use golf_server::config::{DEFAULT_EXPENSIVE_READS_PER_MIN, DEFAULT_WRITES_PER_MIN, HttpSettings};
use golf_server::service::Clock;
use reqwest::Method;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn app_with(backend: Backend, http: HttpSettings) -> TestApp {
    spawn_app_with(
        TestDatabase::new(backend).await,
        Clock::system(),
        |config| {
            config.http = http;
        },
    )
    .await
}

async fn create(app: &TestApp, forwarded_for: Option<&str>) -> reqwest::Response {
    let headers: Vec<_> = forwarded_for
        .map(|ip| ("x-forwarded-for", ip))
        .into_iter()
        .collect();
    let body = r#"{"seats": 2, "holes": 1}"#;
    raw(app, Method::POST, "/v1/games", Some(body), &headers).await
}

async fn creations_and_joins_over_the_rate_limit_are_429_with_retry_after(backend: Backend) {
    // Three a minute: a creation and two joins pass, the fourth is refused with Retry-After,
    // and nothing else (views, the lobby) counts.
    let http = HttpSettings {
        writes_per_min: Some(3),
        ..HttpSettings::default()
    };
    let app = app_with(backend, http).await;
    let (id, _) = app.create_game(json!({"seats": 3, "holes": 1})).await;
    app.join(&id, "Ada").await;
    app.join(&id, "Bob").await;
    for _ in 0..5 {
        assert_eq!(app.get("/v1/games?status=waiting").await.status(), 200);
        assert_eq!(app.get(&format!("/v1/games/{id}")).await.status(), 200);
    }
    let join = raw(
        &app,
        Method::POST,
        &format!("/v1/games/{id}/players"),
        Some(r#"{"name": "Cy"}"#),
        &[],
    )
    .await;
    let retry_after: u64 = header(join.headers(), "retry-after")
        .parse()
        .expect("Retry-After is whole seconds");
    assert!((1..=20).contains(&retry_after), "3 a minute: {retry_after}");
    problem(join, 429, "rate_limited").await;
    let view = app.view(&id, None).await;
    assert_eq!(
        view["players"].as_array().unwrap().len(),
        2,
        "no seat taken"
    );

    // A client cannot pick its address: X-Forwarded-For from a peer that is no trusted proxy is
    // not read.
    problem(
        create(&app, Some("198.51.100.7")).await,
        429,
        "rate_limited",
    )
    .await;
}

async fn behind_a_trusted_proxy_each_forwarded_client_has_its_own_limit(backend: Backend) {
    // The tests' peer, 127.0.0.1, is the trusted proxy here: the forwarded addresses count.
    let http = HttpSettings {
        writes_per_min: Some(2),
        trusted_proxies: vec!["127.0.0.1".parse().unwrap()],
        ..HttpSettings::default()
    };
    let app = app_with(backend, http).await;
    for _ in 0..2 {
        assert_eq!(create(&app, Some("198.51.100.7")).await.status(), 201);
    }
    problem(
        create(&app, Some("198.51.100.7")).await,
        429,
        "rate_limited",
    )
    .await;
    // The nearest untrusted hop is the client: an address it prepends itself changes nothing.
    let spoofed = create(&app, Some("203.0.113.1, 198.51.100.7")).await;
    problem(spoofed, 429, "rate_limited").await;
    assert_eq!(create(&app, Some("198.51.100.8")).await.status(), 201);
    // The proxy sets X-Forwarded-For and passes the client's own Forwarded through: a Forwarded
    // that names another address does not make another client.
    for spoofed in [
        "for=198.51.100.99",
        "for=\"[2001:db8::7]:4711\";proto=https",
    ] {
        let refused = raw(
            &app,
            Method::POST,
            "/v1/games",
            Some(r#"{"seats": 2}"#),
            &[("forwarded", spoofed), ("x-forwarded-for", "198.51.100.7")],
        )
        .await;
        problem(refused, 429, "rate_limited").await;
    }
}

/// Sends requests with `send` until one is refused, expecting `budget` to be admitted first, and
/// as many more as the bucket refilled meanwhile (`budget` a minute): checks that the refusal is
/// `rate_limited` with a `Retry-After`.
async fn admitted_until_refused<F: Future<Output = reqwest::Response>>(
    budget: u32,
    send: impl Fn() -> F,
) {
    let started = Instant::now();
    let mut admitted = 0u32;
    let refused = loop {
        let response = send().await;
        if response.status() == 429 {
            break response;
        }
        admitted += 1;
        let refilled = started.elapsed().as_secs_f64() * f64::from(budget) / 60.0;
        assert!(
            f64::from(admitted) <= f64::from(budget) + refilled.ceil(),
            "{admitted} admitted: the budget is {budget} a minute"
        );
    };
    assert!(admitted >= budget, "refused after {admitted} of {budget}");
    assert!(
        header(refused.headers(), "retry-after")
            .parse::<u64>()
            .is_ok()
    );
    problem(refused, 429, "rate_limited").await;
}

#[tokio::test]
async fn by_default_each_client_has_a_budget_of_creations_and_of_expensive_reads() {
    // The tests' peer is a trusted proxy, so that two clients can be told apart.
    let http = HttpSettings {
        trusted_proxies: vec!["127.0.0.1".parse().unwrap()],
        ..HttpSettings::default()
    };
    let app = app_with(Backend::Sqlite, http).await;
    let (id, _) = app.create_game(json!({"seats": 2, "holes": 1})).await;
    let (client, other) = (Some("198.51.100.7"), Some("198.51.100.8"));
    admitted_until_refused(DEFAULT_WRITES_PER_MIN, || create(&app, client)).await;
    assert_eq!(create(&app, other).await.status(), 201, "another client");

    // An export of a game not finished is refused (409), yet it is asked for, and counts.
    let get = |path: String, client: &'static str| {
        let app = &app;
        async move {
            raw(
                app,
                Method::GET,
                &path,
                None,
                &[("x-forwarded-for", client)],
            )
            .await
        }
    };
    let export = format!("/v1/games/{id}/export");
    admitted_until_refused(DEFAULT_EXPENSIVE_READS_PER_MIN, || {
        get(export.clone(), "198.51.100.7")
    })
    .await;
    for expensive in ["export", "audit", "replay/1", "events"] {
        let path = format!("/v1/games/{id}/{expensive}");
        // The budget refills by one every 100 ms: on a loaded machine a request may find a token
        // back, but a client asking as fast as it can is soon refused again.
        let mut refused = None;
        for _ in 0..20 {
            let response = get(path.clone(), "198.51.100.7").await;
            if response.status() == 429 {
                refused = Some(response);
                break;
            }
        }
        let refused = refused.unwrap_or_else(|| panic!("{expensive} is never refused"));
        problem(refused, 429, "rate_limited").await;
        assert_ne!(
            get(path, "198.51.100.8").await.status(),
            429,
            "another client"
        );
    }
    // Views are no expensive reads.
    let view = get(format!("/v1/games/{id}"), "198.51.100.7").await;
    assert_eq!(view.status(), 200);
}

async fn streams_over_the_per_client_cap_are_429_until_one_closes(backend: Backend) {
    let http = HttpSettings {
        max_streams_per_client: 2,
        ..HttpSettings::default()
    };
    let app = app_with(backend, http).await;
    let (id, created) = app.create_game(json!({"seats": 2, "holes": 1})).await;
    let host = created["host_token"].as_str().unwrap().to_owned();
    let open = || {
        app.client
            .get(app.url(&format!("/v1/games/{id}/stream?token={host}")))
            .send()
    };
    let first = open().await.unwrap();
    let second = open().await.unwrap();
    assert_eq!(
        (first.status().as_u16(), second.status().as_u16()),
        (200, 200)
    );
    let refused = open().await.unwrap();
    assert!(
        header(refused.headers(), "retry-after")
            .parse::<u64>()
            .is_ok()
    );
    problem(refused, 429, "too_many_streams").await;

    // A closed stream frees its slot once the server sees the client gone: at the latest when a
    // keep-alive comment (every 15 s) cannot be written. The first write after a client's close
    // can still succeed (the client's end answers it with a reset), the second cannot.
    drop(first);
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        let again = open().await.unwrap();
        if again.status() == 200 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the slot of a closed stream is never freed"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    drop(second);
}

on_both_backends!(
    creations_and_joins_over_the_rate_limit_are_429_with_retry_after,
    behind_a_trusted_proxy_each_forwarded_client_has_its_own_limit,
    streams_over_the_per_client_cap_are_429_until_one_closes,
);

const ORIGIN: &str = "https://golf.example.org";

#[tokio::test]
async fn cors_answers_preflights_of_the_listed_origins_only() {
    let http = HttpSettings {
        cors_origins: vec![ORIGIN.to_owned(), "http://localhost:3000".to_owned()],
        ..HttpSettings::default()
    };
    let app = app_with(Backend::Sqlite, http).await;
    let (id, created) = app.create_game(json!({"seats": 2})).await;
    let moves = format!("/v1/games/{id}/moves");
    let preflight = |origin: &'static str| {
        app.client
            .request(Method::OPTIONS, app.url(&moves))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "authorization, content-type, if-match, idempotency-key",
            )
            .send()
    };
    let allowed = preflight(ORIGIN).await.unwrap();
    assert!(allowed.status().is_success(), "{}", allowed.status());
    let headers = allowed.headers();
    assert_eq!(header(headers, "access-control-allow-origin"), ORIGIN);
    let allow_headers = header(headers, "access-control-allow-headers").to_lowercase();
    for name in [
        "authorization",
        "content-type",
        "if-match",
        "if-none-match",
        "idempotency-key",
        "last-event-id",
    ] {
        assert!(allow_headers.contains(name), "{name} in {allow_headers}");
    }
    assert!(header(headers, "access-control-allow-methods").contains("POST"));

    let refused = preflight("https://evil.example.com").await.unwrap();
    assert!(
        refused
            .headers()
            .get("access-control-allow-origin")
            .is_none()
    );
    problem(refused, 400, "malformed_request").await;

    // The actual request: the origin is allowed, and the headers a client reads are exposed.
    let view = app
        .client
        .get(app.url(&format!("/v1/games/{id}")))
        .header("origin", ORIGIN)
        .send()
        .await
        .unwrap();
    assert_eq!(
        header(view.headers(), "access-control-allow-origin"),
        ORIGIN
    );
    let exposed = header(view.headers(), "access-control-expose-headers").to_lowercase();
    for name in ["etag", "location", "retry-after"] {
        assert!(exposed.contains(name), "{name} in {exposed}");
    }
    // Another origin's request is served, without the header that would let its page read it.
    let other = app
        .client
        .get(app.url(&format!("/v1/games/{id}")))
        .header("origin", "https://evil.example.com")
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 200);
    assert!(other.headers().get("access-control-allow-origin").is_none());
    assert!(created["host_token"].is_string());
}

#[tokio::test]
async fn without_origins_there_is_no_cors() {
    let app = app_with(Backend::Sqlite, HttpSettings::default()).await;
    let response = app
        .client
        .get(app.url("/v1/games"))
        .header("origin", ORIGIN)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        response
            .headers()
            .get("access-control-allow-origin")
            .is_none()
    );
    let preflight = app
        .client
        .request(Method::OPTIONS, app.url("/v1/games"))
        .header("origin", ORIGIN)
        .header("access-control-request-method", "POST")
        .send()
        .await
        .unwrap();
    assert!(
        preflight
            .headers()
            .get("access-control-allow-origin")
            .is_none()
    );
    problem(preflight, 405, "method_not_allowed").await;
}

/// How long the slow clients' server gives a request to arrive.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(1);
/// How many slow clients hang at once.
const SLOW_CLIENTS: usize = 64;

/// Reads what the server sends until it closes the connection; `None` if it keeps it open for
/// longer than `limit`.
async fn read_until_closed(connection: &mut TcpStream, limit: Duration) -> Option<String> {
    let mut received = Vec::new();
    tokio::time::timeout(limit, connection.read_to_end(&mut received))
        .await
        .ok()?
        .ok()?;
    Some(String::from_utf8_lossy(&received).into_owned())
}

#[tokio::test]
async fn slow_clients_are_cut_off_and_never_hold_up_the_others() {
    // Slowloris: clients that send part of a head, or a head and part of a body, then nothing.
    let http = HttpSettings {
        client_timeout: CLIENT_TIMEOUT,
        ..HttpSettings::default()
    };
    let app = app_with(Backend::Sqlite, http).await;
    let address = app.address.trim_start_matches("http://").to_owned();
    let started = Instant::now();
    let mut heads = Vec::new();
    let mut bodies = Vec::new();
    for n in 0..SLOW_CLIENTS {
        let mut connection = TcpStream::connect(&address).await.unwrap();
        if n % 2 == 0 {
            connection
                .write_all(b"GET /healthz HTTP/1.1\r\nHost: golf\r\nX-Slow: ")
                .await
                .unwrap();
            heads.push(connection);
        } else {
            connection
                .write_all(
                    b"POST /v1/games HTTP/1.1\r\nHost: golf\r\nContent-Type: application/json\r\n\
                      Content-Length: 100\r\n\r\n{\"seats\": ",
                )
                .await
                .unwrap();
            bodies.push(connection);
        }
    }

    // While they hang, everyone else is served.
    for _ in 0..5 {
        let (id, _) = app.create_game(json!({"seats": 2, "holes": 1})).await;
        assert_eq!(app.get(&format!("/v1/games/{id}")).await.status(), 200);
    }

    // And each slow one is cut off within the timeout (with room for a loaded machine).
    let deadline = started + CLIENT_TIMEOUT * 4;
    let left = || deadline.saturating_duration_since(Instant::now());
    for mut connection in heads {
        let answer = read_until_closed(&mut connection, left())
            .await
            .expect("a client whose head never ends is disconnected");
        assert!(
            answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
            "{answer}"
        );
    }
    for mut connection in bodies {
        let answer = read_until_closed(&mut connection, left())
            .await
            .expect("a client whose body never ends is disconnected");
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        assert!(answer.contains("\"code\":\"request_timeout\""), "{answer}");
    }
    let lobby: serde_json::Value = app
        .get("/v1/games?status=waiting")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        lobby["games"].as_array().unwrap().len(),
        5,
        "no half-sent game was created"
    );
}
