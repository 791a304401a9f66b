//! Seeks through real HTTP on both backends: two seeks of one shape make a game with both
//! accounts seated, other shapes and rating ranges keep them apart, bots after the wait, cancel
//! and expiry, refusals, and 200 accounts seeking at once through two instances.

mod common;

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use common::openapi::{assert_valid, spec};
use common::{Backend, TestApp, TestDatabase, open_store, spawn_app, spawn_app_with};
use golf_server::ratings::Rating;
use golf_server::service::Clock;
use reqwest::Method;
use serde_json::{Value, json};

/// `token`'s account seeks `body`; answers the seek, checked against the spec.
async fn seek(app: &TestApp, token: &str, body: Value) -> Value {
    let (status, seek) = app
        .send_json(Method::POST, "/v1/seeks", Some(&body), Some(token))
        .await;
    assert_eq!(status, 201, "{seek}");
    assert_valid(&spec(), "Seek", &seek);
    seek
}

async fn read_seek(app: &TestApp, token: &str, seek: &Value) -> Value {
    let path = format!("/v1/seeks/{}", seek["id"].as_str().unwrap());
    let (status, read) = app.send_json(Method::GET, &path, None, Some(token)).await;
    assert_eq!(status, 200, "{read}");
    read
}

/// The account events of `token` of type `kind`.
async fn events_of(app: &TestApp, token: &str, kind: &str) -> Vec<Value> {
    let (status, page) = app
        .send_json(Method::GET, "/v1/account/events", None, Some(token))
        .await;
    assert_eq!(status, 200);
    assert_valid(&spec(), "AccountEventsPage", &page);
    let events = page["events"].as_array().unwrap();
    events
        .iter()
        .filter(|e| e["type"] == kind)
        .cloned()
        .collect()
}

async fn two_seeks_of_one_shape_make_a_game(backend: Backend) {
    // Ada waits; Bob's seek of the same shape completes the table: the game exists with Ada
    // (the older seek) at seat 0 and Bob at seat 1, and each hears of it.
    let app = spawn_app(backend).await;
    let (ada, bob) = (app.sign_up("ada").await, app.sign_up("bob").await);
    let shape = json!({"seats": 2, "holes": 1, "rated": true});
    let waiting = seek(&app, &ada, shape.clone()).await;
    assert_eq!(waiting["status"], "waiting");
    assert_eq!(
        (&waiting["game_id"], &waiting["seat"]),
        (&json!(null), &json!(null))
    );
    let matched = seek(&app, &bob, shape).await;
    assert_eq!(
        (&matched["status"], &matched["seat"]),
        (&json!("matched"), &json!(1))
    );
    let game = matched["game_id"].as_str().unwrap();
    let ada_read = read_seek(&app, &ada, &waiting).await;
    assert_eq!(ada_read["status"], "matched");
    assert_eq!(
        (&ada_read["game_id"], &ada_read["seat"]),
        (&json!(game), &json!(0))
    );
    for (token, seat) in [(&ada, 0), (&bob, 1)] {
        assert_eq!(app.view(game, Some(token)).await["you"], seat);
        let matched = events_of(&app, token, "seek_matched").await;
        assert_eq!(matched.len(), 1, "{matched:?}");
        assert_eq!(matched[0]["game_id"], game);
        assert_eq!(matched[0]["seat"], seat);
        assert_eq!(events_of(&app, token, "game_started").await.len(), 1);
    }
    let view = app.view(game, Some(&ada)).await;
    assert_eq!(view["status"], "playing", "{view}");
    // Bob's seek is his alone.
    let path = format!("/v1/seeks/{}", waiting["id"].as_str().unwrap());
    let (status, _) = app.send_json(Method::GET, &path, None, Some(&bob)).await;
    assert_eq!(status, 404);
}

async fn other_shapes_and_ranges_keep_seeks_apart(backend: Backend) {
    // Every account starts at 1500 but Bob, at 1300. Ada accepts 1400 to 1600; Bob's range
    // leaves out Ada, so they wait side by side; Cleo, without a range, is matched with the
    // oldest seek that admits her (Ada's); Dan's seek of other holes, and Eve's unrated one,
    // match nothing.
    let app = spawn_app(backend).await;
    let ada = app.sign_up("ada").await;
    let bob = app.sign_up("bob").await;
    let store = open_store(&app.database.url).await;
    let bob_rating = Rating::new(1300.0, 100.0, 20);
    assert!(store.ratings().set_rating("bob", bob_rating).await.unwrap());
    let cleo = app.sign_up("cleo").await;
    let dan = app.sign_up("dan").await;
    let eve = app.sign_up("eve").await;
    let ranged = |range: [f64; 2]| json!({"holes": 1, "rated": true, "rating_range": range});
    let ada_seek = seek(&app, &ada, ranged([1400.0, 1600.0])).await;
    let bob_seek = seek(&app, &bob, ranged([1000.0, 1400.0])).await;
    assert_eq!(bob_seek["status"], "waiting");
    assert_eq!(bob_seek["rating_range"], json!([1000.0, 1400.0]));
    let dan_seek = seek(&app, &dan, json!({"holes": 2, "rated": true})).await;
    let eve_seek = seek(&app, &eve, json!({"holes": 1})).await;
    assert_eq!(
        (&dan_seek["status"], &eve_seek["status"]),
        (&json!("waiting"), &json!("waiting"))
    );
    let cleo_seek = seek(&app, &cleo, json!({"holes": 1, "rated": true})).await;
    assert_eq!(cleo_seek["status"], "matched");
    assert_eq!(
        read_seek(&app, &ada, &ada_seek).await["game_id"],
        cleo_seek["game_id"]
    );
    for (token, seek) in [(&bob, &bob_seek), (&dan, &dan_seek), (&eve, &eve_seek)] {
        assert_eq!(read_seek(&app, token, seek).await["status"], "waiting");
    }
}

async fn bots_fill_the_table_after_the_wait(backend: Backend) {
    // A three-seat seek nobody answers gets two greedy bots once bots_after_s has passed (the
    // sweep runs every second), and the game is on with Ada at seat 0.
    let clock = Clock::system();
    let app = spawn_app_with(TestDatabase::new(backend).await, clock.clone(), |_| {}).await;
    let ada = app.sign_up("ada").await;
    let body = json!({"seats": 3, "holes": 1, "rated": true, "bots_after_s": 5});
    let waiting = seek(&app, &ada, body).await;
    assert_eq!(waiting["status"], "waiting");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(read_seek(&app, &ada, &waiting).await["status"], "waiting");
    clock.advance(Duration::from_secs(5));
    let deadline = Instant::now() + Duration::from_secs(20);
    let matched = loop {
        let read = read_seek(&app, &ada, &waiting).await;
        if read["status"] == "matched" {
            break read;
        }
        assert!(Instant::now() < deadline, "no bots after the wait: {read}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(matched["seat"], 0);
    let game = matched["game_id"].as_str().unwrap();
    let view = app.view(game, Some(&ada)).await;
    let players = view["players"].as_array().unwrap();
    let bots: Vec<&Value> = players.iter().map(|p| &p["bot"]).collect();
    assert_eq!(
        bots,
        [&json!(null), &json!("greedy"), &json!("greedy")],
        "{view}"
    );
    let matched_events = events_of(&app, &ada, "seek_matched").await;
    assert_eq!(matched_events.len(), 1);
    assert_eq!(matched_events[0]["game_id"], game);
}

async fn cancel_expiry_and_refusals(backend: Backend) {
    let clock = Clock::system();
    let app = spawn_app_with(TestDatabase::new(backend).await, clock.clone(), |config| {
        config.seek_expiry = Duration::from_secs(60);
    })
    .await;
    let (ada, bob) = (app.sign_up("ada").await, app.sign_up("bob").await);
    let shape = json!({"holes": 1});
    // One waiting seek per account.
    let first = seek(&app, &ada, shape.clone()).await;
    let (status, problem) = app
        .send_json(Method::POST, "/v1/seeks", Some(&shape), Some(&ada))
        .await;
    assert_eq!((status, &problem["code"]), (409, &json!("already_seeking")));
    // Cancelled, it matches nothing, and its account may seek again.
    let path = format!("/v1/seeks/{}", first["id"].as_str().unwrap());
    let (status, _) = app.send_json(Method::DELETE, &path, None, Some(&bob)).await;
    assert_eq!(status, 404, "someone else's seek");
    for _ in 0..2 {
        let (status, _) = app.send_json(Method::DELETE, &path, None, Some(&ada)).await;
        assert_eq!(status, 204);
    }
    assert_eq!(read_seek(&app, &ada, &first).await["status"], "cancelled");
    let bob_seek = seek(&app, &bob, shape.clone()).await;
    assert_eq!(
        bob_seek["status"], "waiting",
        "a cancelled seek matches nothing"
    );
    // Past GOLF_SEEK_EXPIRY_S a seek reads expired, cannot be cancelled, matches nothing, and
    // its account may seek again.
    clock.advance(Duration::from_secs(61));
    assert_eq!(read_seek(&app, &bob, &bob_seek).await["status"], "expired");
    let path = format!("/v1/seeks/{}", bob_seek["id"].as_str().unwrap());
    let (status, problem) = app.send_json(Method::DELETE, &path, None, Some(&bob)).await;
    assert_eq!((status, &problem["code"]), (409, &json!("seek_closed")));
    let again = seek(&app, &ada, shape.clone()).await;
    assert_eq!(
        again["status"], "waiting",
        "an expired seek matches nothing"
    );
    assert_eq!(seek(&app, &bob, shape).await["status"], "matched");
    // Refusals change nothing.
    let refused = [
        (json!({"bots_after_s": 4}), "invalid_seek"),
        (json!({"bots_after_s": 601}), "invalid_seek"),
        (json!({"rating_range": [1600, 1400]}), "invalid_seek"),
        (json!({"seats": 5}), "invalid_game_options"),
    ];
    for (i, (body, code)) in refused.into_iter().enumerate() {
        let cleo = app.sign_up(&format!("cleo{i}")).await;
        let (status, problem) = app
            .send_json(Method::POST, "/v1/seeks", Some(&body), Some(&cleo))
            .await;
        assert_eq!((status, &problem["code"]), (422, &json!(code)), "{body}");
        let ok = seek(&app, &cleo, json!({"holes": 10 + i})).await;
        assert_eq!(ok["status"], "waiting", "the refusal left no seek behind");
    }
    let (status, _) = app
        .send_json(Method::POST, "/v1/seeks", Some(&json!({})), None)
        .await;
    assert_eq!(status, 401);
}

async fn two_hundred_accounts_seeking_at_once_on_two_instances(backend: Backend) {
    // 200 accounts seek two-seat games at once, half through each instance: every seek ends
    // matched, into 100 games of two distinct accounts, each account matched exactly once.
    let database = TestDatabase::new(backend).await;
    // 200 requests at once on two cores: heads and connections wait longer than a client's
    // would be let wait.
    let slow = |config: &mut golf_server::config::Config| {
        config.db_acquire_timeout = Duration::from_secs(10);
        config.http.client_timeout = Duration::from_secs(10);
    };
    let second_database = database.shared();
    let first = spawn_app_with(database, Clock::system(), slow).await;
    let second = spawn_app_with(second_database, Clock::system(), slow).await;
    let names: Vec<String> = (0..200).map(|i| format!("p{i:03}")).collect();
    let mut tokens = Vec::new();
    for chunk in names.chunks(20) {
        let created = futures_util::future::join_all(chunk.iter().map(|n| first.sign_up(n)));
        tokens.extend(created.await);
    }
    // Each seek on a connection of its own, as 200 players' clients would be: none reuses a
    // connection the server may be closing as idle.
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let body = json!({"seats": 2, "holes": 1});
    let started = Instant::now();
    let seeks = futures_util::future::join_all(tokens.iter().enumerate().map(|(i, token)| {
        let app = if i % 2 == 0 { &first } else { &second };
        let request = client
            .post(app.url("/v1/seeks"))
            .bearer_auth(token)
            .json(&body);
        async move {
            let sent = Instant::now();
            let response = request.send().await.expect("the seek reaches the server");
            let status = response.status().as_u16();
            let placed: Value = response.json().await.unwrap();
            assert_eq!(status, 201, "{placed}");
            (placed, sent.elapsed())
        }
    }))
    .await;
    // Checked once all are answered: building the spec takes long enough in a debug build that
    // 200 of them in the requests' task kept the others' heads unsent past the server's timeout
    // (a 408, which the client took for an unexpected message).
    let spec = spec();
    for (placed, _) in &seeks {
        assert_valid(&spec, "Seek", placed);
    }
    let mut games: HashMap<String, Vec<(usize, i64)>> = HashMap::new();
    let mut completing = Vec::new();
    for (i, (placed, took)) in seeks.iter().enumerate() {
        let read = read_seek(&first, &tokens[i], placed).await;
        assert_eq!(read["status"], "matched", "{read}");
        let game = read["game_id"].as_str().unwrap().to_owned();
        games
            .entry(game)
            .or_default()
            .push((i, read["seat"].as_i64().unwrap()));
        if placed["status"] == "matched" {
            completing.push(*took);
        }
        let matched = events_of(&first, &tokens[i], "seek_matched").await;
        assert_eq!(matched.len(), 1, "{}: {matched:?}", names[i]);
    }
    assert_eq!(games.len(), 100);
    for (game, seated) in &games {
        let accounts: HashSet<usize> = seated.iter().map(|(i, _)| *i).collect();
        let seats: HashSet<i64> = seated.iter().map(|(_, seat)| *seat).collect();
        assert_eq!((accounts.len(), seats.len()), (2, 2), "{game}: {seated:?}");
    }
    completing.sort();
    let at = |q: f64| completing[((completing.len() - 1) as f64 * q) as usize];
    eprintln!(
        "{backend:?}: 200 seeks in {:?}; the completing seek's answer (its seek_matched \
         committed): p50 {:?}, p99 {:?}",
        started.elapsed(),
        at(0.5),
        at(0.99)
    );
}

on_both_backends!(
    two_seeks_of_one_shape_make_a_game,
    other_shapes_and_ranges_keep_seeks_apart,
    bots_fill_the_table_after_the_wait,
    cancel_expiry_and_refusals,
    two_hundred_accounts_seeking_at_once_on_two_instances,
);
