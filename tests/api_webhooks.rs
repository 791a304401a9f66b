//! Webhooks through real HTTP on both backends, delivered to a receiver on 127.0.0.1: signed
//! deliveries of a game's events, retries with the same id, a 410 disabling the webhook, the
//! delivery log, redirects not followed, the address guard at registration and at delivery, and
//! two instances sending each event once.

mod common;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use common::process::ServerProcess;
use common::webhooks::{MapResolver, Receiver, Reply, eventually, signed_by};
use common::{
    Backend, Seat, TestApp, TestDatabase, play_to_the_end, spawn_app, spawn_app_on,
    spawn_app_with_resolver,
};
use reqwest::Method;
use serde_json::{Value, json};

/// Creates account `username`; answers its token.
async fn account(app: &TestApp, username: &str) -> String {
    let body = json!({"username": username});
    let response = app
        .send(Method::POST, "/v1/accounts", Some(&body), None)
        .await;
    assert_eq!(response.status(), 201);
    let created: Value = response.json().await.unwrap();
    created["token"].as_str().unwrap().to_owned()
}

/// Registers `token`'s webhook with `body`; answers the status and the reply.
async fn put_webhook(app: &TestApp, token: &str, body: Value) -> (u16, Value) {
    let response = app
        .send(Method::PUT, "/v1/account/webhook", Some(&body), Some(token))
        .await;
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Registers `token`'s webhook at `url` for `events`; answers its secret.
async fn register(app: &TestApp, token: &str, url: &str, events: Value) -> String {
    let (status, reply) = put_webhook(app, token, json!({"url": url, "events": events})).await;
    assert_eq!(status, 200, "{reply}");
    reply["secret"].as_str().unwrap().to_owned()
}

async fn get_json(app: &TestApp, path: &str, token: &str) -> Value {
    let response = app.send(Method::GET, path, None, Some(token)).await;
    assert_eq!(response.status(), 200, "{path}");
    response.json().await.unwrap()
}

/// The delivery log of `token`'s account, newest first.
async fn deliveries(app: &TestApp, token: &str) -> Vec<Value> {
    let page = get_json(app, "/v1/account/webhook/deliveries?limit=100", token).await;
    page["deliveries"].as_array().unwrap().clone()
}

/// Every event of `token`'s account.
async fn events(app: &TestApp, token: &str) -> Vec<Value> {
    let page = get_json(app, "/v1/account/events?limit=1000", token).await;
    page["events"].as_array().unwrap().clone()
}

/// A game of two that `first` creates and both join, so that it starts; answers its id and
/// the seats.
async fn started_game(app: &TestApp, first: &str, second: &str) -> (String, Vec<Seat>) {
    let body = json!({"seats": 2, "holes": 1});
    let response = app
        .send(Method::POST, "/v1/games", Some(&body), Some(first))
        .await;
    assert_eq!(response.status(), 201);
    let id = response.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut seats = Vec::new();
    for token in [first, second] {
        let path = format!("/v1/games/{id}/players");
        let response = app
            .send(Method::POST, &path, Some(&json!({})), Some(token))
            .await;
        assert_eq!(response.status(), 201);
        let joined: Value = response.json().await.unwrap();
        seats.push(Seat {
            seat: joined["seat"].as_u64().unwrap() as u8,
            token: token.to_owned(),
        });
    }
    (id, seats)
}

/// `delivery` is JSON, signed with `secret`, stamped with the time it was sent.
fn assert_signed_now(delivery: &common::webhooks::Received, secret: &str) {
    assert!(signed_by(delivery, secret), "{delivery:?}");
    assert_eq!(delivery.header("content-type"), "application/json");
    let sent: i64 = delivery.header("webhook-timestamp").parse().unwrap();
    let now = chrono::Utc::now().timestamp();
    assert!(
        (now - sent).abs() < 120,
        "{sent} is not the time of the attempt"
    );
}

async fn a_game_of_two_accounts_is_delivered_signed(backend: Backend) {
    // Each account's receiver gets every event its filter takes, once, signed, the body as
    // /v1/account/events serves it; the log shows each acknowledged attempt.
    let app = spawn_app(backend).await;
    let receiver = Receiver::start(Vec::new());
    let ada = account(&app, "ada").await;
    let bob = account(&app, "bob").await;
    let ada_url = format!("{}/ada", receiver.base);
    let ada_secret = register(&app, &ada, &ada_url, Value::Null).await;
    let bob_url = format!("{}/bob", receiver.base);
    let bob_secret = register(&app, &bob, &bob_url, json!(["game_ended"])).await;
    let (id, seats) = started_game(&app, &ada, &bob).await;
    play_to_the_end(&app, &id, &seats).await;
    let ada_events = events(&app, &ada).await;
    let kinds: Vec<&str> = ada_events
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.first(), Some(&"game_started"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"game_ended"), "{kinds:?}");
    assert!(kinds.contains(&"your_turn"), "{kinds:?}");
    let received = receiver.wait_for(ada_events.len() + 1).await;
    let to = |path: &str| -> Vec<_> {
        received
            .iter()
            .filter(|r| r.path == path)
            .cloned()
            .collect()
    };
    let (to_ada, to_bob) = (to("/ada"), to("/bob"));
    let bodies: Vec<Value> = to_ada.iter().map(|r| r.json()).collect();
    let mut sorted = bodies.clone();
    sorted.sort_by_key(|event| event["id"].as_i64());
    assert_eq!(
        sorted, ada_events,
        "every event once, as the events page shows it"
    );
    for delivery in &to_ada {
        assert_signed_now(delivery, &ada_secret);
        assert!(!signed_by(delivery, &bob_secret));
    }
    let ids: std::collections::HashSet<&str> =
        to_ada.iter().map(|r| r.header("webhook-id")).collect();
    assert_eq!(ids.len(), to_ada.len(), "one webhook-id per event");
    assert_eq!(to_bob.len(), 1, "bob's filter takes game_ended only");
    assert_eq!(to_bob[0].json()["type"], "game_ended");
    assert_signed_now(&to_bob[0], &bob_secret);
    let log = eventually("the last attempt is logged", || async {
        let log = deliveries(&app, &ada).await;
        (log.len() == ada_events.len()).then_some(log)
    })
    .await;
    assert!(
        log.iter()
            .all(|a| a["status"] == 200 && a["attempt"] == 1 && a["error"].is_null())
    );
    let webhook = get_json(&app, "/v1/account/webhook", &ada).await;
    assert_eq!(
        webhook,
        json!({"url": ada_url, "events": null, "failing_since": null, "disabled": false})
    );
}

async fn failed_deliveries_are_retried_with_the_same_id(backend: Backend) {
    // A 500, then no answer within 5 s, then a 200: three attempts of one event, one id, one
    // body, each in the log; the webhook is failing until the third.
    let app = spawn_app(backend).await;
    let receiver = Receiver::start(vec![
        Reply::Status(500),
        Reply::Hang(Duration::from_secs(8)),
    ]);
    let ada = account(&app, "ada").await;
    let bob = account(&app, "bob").await;
    let url = format!("{}/hook", receiver.base);
    let secret = register(&app, &ada, &url, json!(["game_started"])).await;
    started_game(&app, &ada, &bob).await;
    let received = receiver.wait_for(3).await;
    assert!(received.iter().all(|r| signed_by(r, &secret)));
    for retry in &received[1..] {
        assert_eq!(retry.header("webhook-id"), received[0].header("webhook-id"));
        assert_eq!(retry.body, received[0].body);
    }
    let log = eventually("three attempts are logged", || async {
        let log = deliveries(&app, &ada).await;
        (log.len() == 3).then_some(log)
    })
    .await;
    let summary: Vec<(i64, Value)> = log
        .iter()
        .map(|a| (a["attempt"].as_i64().unwrap(), a["status"].clone()))
        .collect();
    assert_eq!(
        summary,
        [(3, json!(200)), (2, Value::Null), (1, json!(500))]
    );
    assert!(
        log[1]["error"].as_str().unwrap().contains("no answer"),
        "{log:?}"
    );
    assert_eq!(log[2]["error"], "answered 500");
    assert!(log.iter().all(|a| a["event_id"] == log[0]["event_id"]));
    let webhook = get_json(&app, "/v1/account/webhook", &ada).await;
    assert_eq!(webhook["failing_since"], Value::Null, "it works again");
}

async fn a_410_disables_the_webhook_until_it_is_registered_again(backend: Backend) {
    // A 410 disables the webhook: failing_since set, no retry; registered again, it delivers
    // the events that come after.
    let app = spawn_app(backend).await;
    let receiver = Receiver::start(vec![Reply::Status(410)]);
    let ada = account(&app, "ada").await;
    let bob = account(&app, "bob").await;
    let url = format!("{}/hook", receiver.base);
    register(&app, &ada, &url, json!(["game_started"])).await;
    started_game(&app, &ada, &bob).await;
    let webhook = eventually("the webhook is disabled", || async {
        let webhook = get_json(&app, "/v1/account/webhook", &ada).await;
        (webhook["disabled"] == true).then_some(webhook)
    })
    .await;
    assert!(webhook["failing_since"].is_string(), "{webhook}");
    let log = deliveries(&app, &ada).await;
    assert_eq!(log.len(), 1, "no retry after a 410: {log:?}");
    assert_eq!(log[0]["status"], 410);
    let secret = register(&app, &ada, &url, json!(["game_started"])).await;
    let webhook = get_json(&app, "/v1/account/webhook", &ada).await;
    assert_eq!(
        (&webhook["disabled"], &webhook["failing_since"]),
        (&json!(false), &Value::Null)
    );
    started_game(&app, &ada, &bob).await;
    let received = receiver.wait_for(2).await;
    assert_eq!(
        received.len(),
        2,
        "the first game's event is not sent again"
    );
    assert!(signed_by(&received[1], &secret));
    assert_ne!(
        received[1].header("webhook-id"),
        received[0].header("webhook-id")
    );
}

async fn a_redirect_is_a_failed_attempt_and_is_not_followed(backend: Backend) {
    // A 302 is logged as a failed attempt; its location is never requested; the retry is
    // acknowledged.
    let app = spawn_app(backend).await;
    let receiver = Receiver::start(Vec::new());
    let elsewhere = format!("{}/elsewhere", receiver.base);
    let redirecting = Receiver::start(vec![Reply::Redirect(elsewhere)]);
    let ada = account(&app, "ada").await;
    let bob = account(&app, "bob").await;
    let url = format!("{}/hook", redirecting.base);
    register(&app, &ada, &url, json!(["game_started"])).await;
    started_game(&app, &ada, &bob).await;
    let log = eventually("two attempts are logged", || async {
        let log = deliveries(&app, &ada).await;
        (log.len() == 2).then_some(log)
    })
    .await;
    assert_eq!(
        (&log[1]["status"], &log[0]["status"]),
        (&json!(302), &json!(200))
    );
    assert!(log[1]["error"].as_str().unwrap().contains("redirect"));
    assert!(receiver.received().is_empty(), "the location was requested");
    assert_eq!(redirecting.received().len(), 2);
}

/// URLs the address guard refuses at registration: `port` is the receiver's.
fn refused_urls(port: &str) -> Vec<String> {
    vec![
        "https://127.0.0.1/hook".to_owned(),
        format!("https://127.0.0.1:{port}/hook"),
        "https://10.1.2.3/hook".to_owned(),
        "https://172.20.0.1/hook".to_owned(),
        "https://192.168.0.1/hook".to_owned(),
        "https://169.254.169.254/latest/meta-data".to_owned(),
        "https://100.64.0.1/hook".to_owned(),
        "https://[::1]/hook".to_owned(),
        "https://[::ffff:127.0.0.1]/hook".to_owned(),
        "https://[::ffff:a9fe:a9fe]/hook".to_owned(),
        "https://[fd00::1]/hook".to_owned(),
        "https://[fe80::1]/hook".to_owned(),
        "https://internal.example/hook".to_owned(),
        "https://mixed.example/hook".to_owned(),
        "https://unknown.example/hook".to_owned(),
        "http://hooks.example/hook".to_owned(),
        "ftp://hooks.example/hook".to_owned(),
    ]
}

async fn the_address_guard_refuses_private_addresses(backend: Backend) {
    // Without GOLF_WEBHOOK_ALLOW_PRIVATE, loopback, private, link-local and IPv4-mapped
    // addresses are refused at registration, literal or resolved; a name that resolved to a
    // public address then resolves to 127.0.0.1 is refused at delivery, and nothing is sent.
    let resolver = Arc::new(MapResolver::default());
    resolver.map("internal.example", &["192.168.1.10"]);
    resolver.map("mixed.example", &["1.1.1.1", "10.0.0.7"]);
    resolver.map("hooks.example", &["1.1.1.1"]);
    let receiver = Receiver::start(Vec::new());
    let port = receiver.base.rsplit(':').next().unwrap().to_owned();
    let database = TestDatabase::new(backend).await;
    let app = spawn_app_with_resolver(
        database,
        |config| {
            config.webhooks.allow_private = false;
            config.webhooks.ports = vec![443, port.parse().unwrap()];
        },
        resolver.clone(),
    )
    .await;
    let ada = account(&app, "ada").await;
    let bob = account(&app, "bob").await;
    for url in refused_urls(&port) {
        let (status, problem) = put_webhook(&app, &ada, json!({"url": url})).await;
        assert_eq!(
            (status, &problem["code"]),
            (422, &json!("invalid_webhook_url")),
            "{url}"
        );
    }
    let url = format!("https://hooks.example:{port}/hook");
    register(&app, &ada, &url, json!(["game_started"])).await;
    resolver.map("hooks.example", &["127.0.0.1"]);
    started_game(&app, &ada, &bob).await;
    let log = eventually("the refused attempt is logged", || async {
        let log = deliveries(&app, &ada).await;
        (!log.is_empty()).then_some(log)
    })
    .await;
    assert_eq!(log[0]["status"], Value::Null);
    let error = log[0]["error"].as_str().unwrap();
    assert!(
        error.contains("refused") && !error.contains("127.0.0.1"),
        "the log says the address was refused, not what the name resolves to: {error}"
    );
    assert!(
        receiver.received().is_empty(),
        "a refused address was reached"
    );
}

async fn the_webhook_endpoints_answer_their_refusals(backend: Backend) {
    // Without a token, 401; a bad body, 400; an empty filter, a bad URL or a bad limit, 422;
    // without a webhook, GET is 404.
    let app = spawn_app(backend).await;
    let ada = account(&app, "ada").await;
    let code = |response: Value| response["code"].as_str().unwrap_or_default().to_owned();
    let unauthorized = app
        .send(Method::GET, "/v1/account/webhook", None, None)
        .await;
    assert_eq!(unauthorized.status(), 401);
    let (status, problem) = put_webhook(&app, "nope", json!({"url": 3})).await;
    assert_eq!((status, code(problem)), (401, "unauthorized".to_owned()));
    for (body, status, expected) in [
        (
            json!({"url": "https://1.1.1.1/", "events": ["your_move"]}),
            400,
            "malformed_request",
        ),
        (
            json!({"url": "https://1.1.1.1/", "extra": 1}),
            400,
            "malformed_request",
        ),
        (
            json!({"url": "https://1.1.1.1/", "events": []}),
            422,
            "out_of_range",
        ),
        (
            json!({"url": "mailto:ada@example.org"}),
            422,
            "invalid_webhook_url",
        ),
    ] {
        let (got, problem) = put_webhook(&app, &ada, body.clone()).await;
        assert_eq!(
            (got, code(problem)),
            (status, expected.to_owned()),
            "{body}"
        );
    }
    let missing = app
        .send(Method::GET, "/v1/account/webhook", None, Some(&ada))
        .await;
    assert_eq!(missing.status(), 404);
    let path = "/v1/account/webhook/deliveries?limit=0";
    let response = app.send(Method::GET, path, None, Some(&ada)).await;
    assert_eq!(response.status(), 422);
}

async fn every_put_rotates_the_secret_and_delete_removes_the_webhook(backend: Backend) {
    // Two PUTs answer two secrets; DELETE is 204 (again without a webhook), then GET is 404.
    let app = spawn_app(backend).await;
    let ada = account(&app, "ada").await;
    let (status, first) = put_webhook(&app, &ada, json!({"url": "https://1.1.1.1/a"})).await;
    assert_eq!(status, 200);
    let (_, second) = put_webhook(&app, &ada, json!({"url": "https://1.1.1.1/a"})).await;
    assert_ne!(
        first["secret"], second["secret"],
        "every PUT rotates the secret"
    );
    for _ in 0..2 {
        let deleted = app
            .send(Method::DELETE, "/v1/account/webhook", None, Some(&ada))
            .await;
        assert_eq!(deleted.status(), 204);
    }
    let gone = app
        .send(Method::GET, "/v1/account/webhook", None, Some(&ada))
        .await;
    assert_eq!(gone.status(), 404);
}

async fn an_event_whose_delivery_a_sigkill_cut_is_delivered_after_restart(backend: Backend) {
    // The server is killed while its first attempt waits for the receiver's answer; started
    // again on the same database, it delivers the event, with the same id and body.
    let database = TestDatabase::new(backend).await;
    let settings = [
        ("GOLF_WEBHOOK_ALLOW_PRIVATE", "true"),
        ("GOLF_WEBHOOK_RETRY_DELAYS_MS", "200"),
    ];
    let mut server = ServerProcess::start(&database.url, &settings);
    let app = server.app(&database);
    let receiver = Receiver::start(vec![Reply::Hang(Duration::from_secs(30))]);
    let ada = account(&app, "ada").await;
    let bob = account(&app, "bob").await;
    let url = format!("{}/hook", receiver.base);
    let secret = register(&app, &ada, &url, json!(["game_started"])).await;
    started_game(&app, &ada, &bob).await;
    let cut = receiver.wait_for(1).await.remove(0);
    server.kill();
    let restarted = ServerProcess::start(&database.url, &settings);
    let received = receiver.wait_for(2).await;
    assert_eq!(received[1].header("webhook-id"), cut.header("webhook-id"));
    assert_eq!(received[1].body, cut.body);
    assert!(signed_by(&received[1], &secret));
    let app = restarted.app(&database);
    let log = eventually("the delivery is logged", || async {
        let log = deliveries(&app, &ada).await;
        (!log.is_empty()).then_some(log)
    })
    .await;
    assert_eq!(log[0]["status"], 200, "{log:?}");
}

on_both_backends!(
    an_event_whose_delivery_a_sigkill_cut_is_delivered_after_restart,
    a_game_of_two_accounts_is_delivered_signed,
    failed_deliveries_are_retried_with_the_same_id,
    a_410_disables_the_webhook_until_it_is_registered_again,
    a_redirect_is_a_failed_attempt_and_is_not_followed,
    the_address_guard_refuses_private_addresses,
    the_webhook_endpoints_answer_their_refusals,
    every_put_rotates_the_secret_and_delete_removes_the_webhook,
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_on_one_postgres_database_send_each_event_once() {
    // Both instances deliver (each woken by the other's appends): every event arrives once,
    // and each has a single, acknowledged attempt.
    let first = spawn_app(Backend::Postgres).await;
    let second = spawn_app_on(first.database.shared()).await;
    let receiver = Receiver::start(Vec::new());
    let ada = account(&first, "ada").await;
    let bob = account(&second, "bob").await;
    register(&first, &ada, &format!("{}/ada", receiver.base), Value::Null).await;
    register(
        &second,
        &bob,
        &format!("{}/bob", receiver.base),
        Value::Null,
    )
    .await;
    let (id, seats) = started_game(&first, &ada, &bob).await;
    play_to_the_end(&second, &id, &seats).await;
    let expected = events(&first, &ada).await.len() + events(&first, &bob).await.len();
    let received = receiver.wait_for(expected).await;
    for token in [&ada, &bob] {
        let count = events(&first, token).await.len();
        let log = eventually("every attempt is logged", || async {
            let log = deliveries(&second, token).await;
            (log.len() >= count).then_some(log)
        })
        .await;
        assert_eq!(log.len(), count, "one attempt per event: {log:?}");
        assert!(log.iter().all(|a| a["status"] == 200));
    }
    let mut per_id: HashMap<String, usize> = HashMap::new();
    for delivery in receiver.received() {
        *per_id
            .entry(delivery.header("webhook-id").to_owned())
            .or_default() += 1;
    }
    assert_eq!(received.len(), expected);
    assert!(per_id.values().all(|&n| n == 1), "{per_id:?}");
    assert_eq!(per_id.len(), expected);
}
