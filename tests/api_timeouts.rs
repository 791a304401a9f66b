//! Abandoned games through HTTP: turn timeouts (the sweeper hands the seat to the greedy bot),
//! `POST /v1/games/{id}/leave`, the views and the log of a seat a bot took, several instances
//! sweeping one database, and waiting games that expire. The server's clock is moved forward
//! instead of waiting for a deadline.

mod common;

use std::time::Duration;

use common::{Backend, Seat, TestApp, TestDatabase, open_store, play_to_the_end, spawn_app_with};
use golf_server::audit::ndjson::audit_text;
use golf_server::commands::check_db::check_database;
use golf_server::engine::Timestamp;
use golf_server::service::Clock;
use reqwest::Method;
use serde_json::{Value, json};
use sqlx::Connection;

/// How often the test servers sweep: often, so that a test waits little once a deadline passed.
const SWEEP: Duration = Duration::from_millis(25);

/// The longest a test waits for a sweep to act.
const PATIENCE: Duration = Duration::from_secs(15);

async fn spawn(backend: Backend, clock: &Clock) -> TestApp {
    spawn_app_with(TestDatabase::new(backend).await, clock.clone(), |config| {
        config.sweep_interval = SWEEP;
    })
    .await
}

/// A started two-seat game of Ada (seat 0) and Bob (seat 1) with `rules`.
async fn start(app: &TestApp, rules: Value, holes: u8) -> (String, String, Vec<Seat>) {
    let (id, created) = app
        .create_game(json!({"seats": 2, "holes": holes, "rules": rules}))
        .await;
    let seats = vec![app.join(&id, "Ada").await, app.join(&id, "Bob").await];
    let host = created["host_token"].as_str().unwrap().to_owned();
    (id, host, seats)
}

fn time(value: &Value) -> Timestamp {
    Timestamp::parse(value.as_str().expect("a time")).expect("an RFC 3339 time")
}

/// The public view once `done` holds for it, polled until [`PATIENCE`] runs out.
async fn view_once(app: &TestApp, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    let started = tokio::time::Instant::now();
    loop {
        let view = app.view(id, None).await;
        if done(&view) {
            return view;
        }
        assert!(started.elapsed() < PATIENCE, "still {view}");
        tokio::time::sleep(SWEEP).await;
    }
}

/// The value of the counter `name` (with its labels, as `/metrics` writes them), 0 when absent.
async fn counter(app: &TestApp, name: &str) -> u64 {
    let text = app.get("/metrics").await.text().await.unwrap();
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .map_or(0, |value| value.parse().unwrap())
}

fn bot_of(view: &Value, seat: usize) -> &Value {
    &view["players"][seat]["bot"]
}

/// The `bot_took_seat` entries of a game's log.
async fn takeovers(app: &TestApp, id: &str) -> Vec<Value> {
    app.events(id, None, 0)
        .await
        .into_iter()
        .filter(|entry| entry["type"] == "bot_took_seat")
        .collect()
}

async fn code_of(response: reqwest::Response) -> (u16, String) {
    let status = response.status().as_u16();
    let body: Value = response.json().await.unwrap();
    (status, body["code"].as_str().unwrap_or_default().to_owned())
}

async fn leave(app: &TestApp, id: &str, token: Option<&str>) -> reqwest::Response {
    app.send(Method::POST, &format!("/v1/games/{id}/leave"), None, token)
        .await
}

/// The finished game's export, audited as `golf-server verify` audits it.
async fn assert_export_verifies(app: &TestApp, id: &str) -> String {
    let export = app.get(&format!("/v1/games/{id}/export")).await;
    assert_eq!(export.status(), 200);
    let text = export.text().await.unwrap();
    let report = audit_text(&text);
    assert!(report.verified, "{}", report.render_text());
    let audit = app.audit(id).await;
    assert_eq!(audit["verified"], true, "{audit}");
    text
}

async fn a_seat_that_runs_out_of_time_is_played_by_the_greedy_bot(backend: Backend) {
    // Bob never reveals: 60 s after the deal the bot takes his seat and reveals; Ada's turns
    // then run out too, and the bots play the game out; the log audits.
    let clock = Clock::system();
    let app = spawn(backend, &clock).await;
    let (id, _, seats) = start(&app, json!({"turn_timeout_s": 60}), 1).await;
    let dealt = app.events(&id, None, 0).await;
    let dealt_at = time(&dealt.last().unwrap()["at"]);
    let view = app.view(&id, Some(&seats[0].token)).await;
    assert_eq!(view["rules"]["turn_timeout_s"], 60);
    assert_eq!(
        time(&view["turn_deadline"]),
        Timestamp(dealt_at.0 + 60_000_000)
    );
    let played = app
        .play(
            &id,
            &seats[0].token,
            &json!({"type": "reveal", "positions": [0, 4]}),
        )
        .await;
    assert_eq!(played.status(), 200);
    // Before the deadline, sweeps leave the game alone.
    tokio::time::sleep(SWEEP * 8).await;
    assert!(takeovers(&app, &id).await.is_empty());

    clock.advance(Duration::from_secs(61));
    let view = view_once(&app, &id, |view| view["current_seat"] == 0).await;
    assert_eq!(bot_of(&view, 1), "greedy");
    // The bot revealed, then played the first turn (seat 1's, the dealer's left).
    assert!(
        view["players"][1]["revealed_count"].as_u64() >= Some(2),
        "{view}"
    );
    assert_eq!(bot_of(&view, 0), &Value::Null);
    let turn_started = time(&view["turn_started_at"]);
    assert_eq!(
        time(&view["turn_deadline"]),
        Timestamp(turn_started.0 + 60_000_000)
    );
    let taken = takeovers(&app, &id).await;
    assert_eq!(taken.len(), 1, "{taken:?}");
    assert_eq!(
        taken[0]["data"],
        json!({"seat": 1, "bot": "greedy", "reason": "turn_timeout"})
    );
    assert!(time(&taken[0]["at"]).0 >= dealt_at.0 + 60_000_000);

    // Bob's token still reads his seat's view, but may not play.
    let bob = app.view(&id, Some(&seats[1].token)).await;
    assert_eq!((&bob["you"], &bob["legal_moves"]), (&json!(1), &json!([])));
    let refused = app
        .play(
            &id,
            &seats[1].token,
            &json!({"type": "draw", "source": "stock"}),
        )
        .await;
    assert_eq!(
        code_of(refused).await,
        (409, "seat_taken_by_bot".to_owned())
    );

    clock.advance(Duration::from_secs(61));
    let view = view_once(&app, &id, |view| view["status"] == "finished").await;
    assert_eq!(view["turn_deadline"], Value::Null);
    assert_eq!(takeovers(&app, &id).await.len(), 2);
    assert_export_verifies(&app, &id).await;
}

async fn a_player_who_leaves_hands_the_seat_to_the_bot(backend: Backend) {
    // Leaving: only the seat's own token, only while the game runs, only once; the bot plays
    // the seat's reveal at once and its turns from then on.
    let clock = Clock::system();
    let app = spawn(backend, &clock).await;
    let (waiting, created) = app.create_game(json!({"seats": 2, "holes": 1})).await;
    let early = app.join(&waiting, "Ada").await;
    let refused = leave(&app, &waiting, Some(&early.token)).await;
    assert_eq!(code_of(refused).await, (409, "game_not_started".to_owned()));
    let host = created["host_token"].as_str().unwrap();
    assert_eq!(leave(&app, &waiting, Some(host)).await.status(), 401);

    let (id, host, seats) = start(&app, json!({}), 1).await;
    assert_eq!(leave(&app, &id, None).await.status(), 401);
    assert_eq!(leave(&app, &id, Some(&host)).await.status(), 401);
    assert_eq!(leave(&app, &id, Some("not-a-token")).await.status(), 401);
    let missing = "/v1/games/00000000-0000-4000-8000-000000000000/leave";
    let unknown = app.send(Method::POST, missing, None, Some(&seats[1].token));
    assert_eq!(unknown.await.status(), 404);

    let left = leave(&app, &id, Some(&seats[1].token)).await;
    assert_eq!(left.status(), 200);
    assert_eq!(left.headers()["cache-control"], "private, no-store");
    let etag = left.headers()["etag"].to_str().unwrap().to_owned();
    let view: Value = left.json().await.unwrap();
    assert_eq!(etag, format!("\"{}\"", view["version"]));
    assert_eq!(
        (&view["you"], &view["legal_moves"]),
        (&json!(1), &json!([]))
    );
    assert_eq!(bot_of(&view, 1), "greedy");
    assert_eq!(view["players"][1]["revealed_count"], 2);
    assert_eq!(
        view["turn_deadline"],
        Value::Null,
        "no timeout in this game"
    );

    let again = leave(&app, &id, Some(&seats[1].token)).await;
    assert_eq!(code_of(again).await, (409, "seat_taken_by_bot".to_owned()));
    let moved = app
        .play(
            &id,
            &seats[1].token,
            &json!({"type": "reveal", "positions": [0, 1]}),
        )
        .await;
    assert_eq!(code_of(moved).await, (409, "seat_taken_by_bot".to_owned()));

    play_to_the_end(&app, &id, &seats[..1]).await;
    let after = leave(&app, &id, Some(&seats[0].token)).await;
    assert_eq!(code_of(after).await, (409, "game_finished".to_owned()));
    let taken = takeovers(&app, &id).await;
    assert_eq!(taken.len(), 1, "{taken:?}");
    assert_eq!(
        taken[0]["data"],
        json!({"seat": 1, "bot": "greedy", "reason": "left"})
    );
    let export = assert_export_verifies(&app, &id).await;
    assert!(export.contains("\"bot_took_seat\""));
    // `golf-server verify` re-decides the leave like any command.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("game.ndjson");
    std::fs::write(&file, &export).unwrap();
    let verified = std::process::Command::new(env!("CARGO_BIN_EXE_golf-server"))
        .arg("verify")
        .arg(&file)
        .arg("--json")
        .output()
        .expect("golf-server verify runs");
    let report: Value = serde_json::from_slice(&verified.stdout).unwrap();
    assert!(verified.status.success(), "{report}");
    assert_eq!(report["verified"], true, "{report}");
    let report = check_database(open_store(&app.database.url).await.as_ref())
        .await
        .expect("the check runs");
    assert!(report.problems.is_empty(), "{report:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_s_default_timeout_applies_unless_the_creator_sets_one() {
    // GOLF_TURN_TIMEOUT_S is the default; a creator may set another or none (null); the rule's
    // range is 10 to 604800 seconds.
    let database = TestDatabase::new(Backend::Sqlite).await;
    let app = spawn_app_with(database, Clock::system(), |config| {
        config.turn_timeout_s = Some(45);
    })
    .await;
    for (rules, expected) in [
        (json!({}), json!(45)),
        (json!({"turn_timeout_s": 10}), json!(10)),
        (json!({"turn_timeout_s": 604800}), json!(604800)),
        (json!({"turn_timeout_s": null}), Value::Null),
    ] {
        let (_, created) = app.create_game(json!({"seats": 2, "rules": rules})).await;
        assert_eq!(created["rules"]["turn_timeout_s"], expected, "{rules}");
        assert_eq!(
            created["turn_deadline"],
            Value::Null,
            "waiting: nobody to play"
        );
    }
    for (rules, status, code) in [
        (json!({"turn_timeout_s": 9}), 422, "invalid_game_options"),
        (
            json!({"turn_timeout_s": 604801}),
            422,
            "invalid_game_options",
        ),
        (json!({"turn_timeout_s": -1}), 422, "invalid_game_options"),
        (json!({"turn_timeout_s": "60"}), 400, "malformed_request"),
    ] {
        let body = json!({"seats": 2, "rules": rules});
        let response = app.send(Method::POST, "/v1/games", Some(&body), None).await;
        assert_eq!(
            code_of(response).await,
            (status, code.to_owned()),
            "{rules}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_sweeping_one_database_take_each_overdue_seat_once() {
    // The games are served by an instance that never sweeps (as one that died would); once
    // their deadlines pass, two other instances sweep the same PostgreSQL database at once:
    // every overdue seat is taken exactly once, and every game still checks out.
    let clock = Clock::system();
    let database = TestDatabase::new(Backend::Postgres).await;
    let shared = database.shared();
    let idle = spawn_app_with(database, clock.clone(), |config| {
        config.sweep_interval = Duration::from_secs(3600);
    })
    .await;
    let mut games = Vec::new();
    for _ in 0..6 {
        let (id, _, seats) = start(&idle, json!({"turn_timeout_s": 10}), 1).await;
        let reveal = json!({"type": "reveal", "positions": [2, 5]});
        assert_eq!(idle.play(&id, &seats[0].token, &reveal).await.status(), 200);
        games.push(id);
    }
    clock.advance(Duration::from_secs(11));
    tokio::time::sleep(SWEEP * 4).await;
    for id in &games {
        assert!(takeovers(&idle, id).await.is_empty(), "nobody swept yet");
    }
    let mut sweepers = Vec::new();
    for _ in 0..2 {
        let app = spawn_app_with(shared.shared(), clock.clone(), |config| {
            config.sweep_interval = Duration::from_millis(5);
        })
        .await;
        sweepers.push(app);
    }
    for id in &games {
        let view = view_once(&idle, id, |view| view["current_seat"] == 0).await;
        assert_eq!(bot_of(&view, 1), "greedy");
    }
    // Once more for seat 0: the bots then play every game out.
    clock.advance(Duration::from_secs(11));
    for id in &games {
        view_once(&sweepers[0], id, |view| view["status"] == "finished").await;
        let taken: Vec<Value> = takeovers(&idle, id)
            .await
            .iter()
            .map(|entry| entry["data"].clone())
            .collect();
        assert_eq!(
            taken,
            vec![
                json!({"seat": 1, "bot": "greedy", "reason": "turn_timeout"}),
                json!({"seat": 0, "bot": "greedy", "reason": "turn_timeout"}),
            ],
            "{id}"
        );
        assert_export_verifies(&idle, id).await;
    }
    let timeouts = r#"golf_seats_taken_by_bots_total{reason="turn_timeout"}"#;
    let mut taken = 0;
    let mut conflicts = 0;
    for app in &sweepers {
        taken += counter(app, timeouts).await;
        conflicts += counter(app, "golf_write_conflicts_total").await;
    }
    assert_eq!(taken, 2 * games.len() as u64, "each seat counted once");
    println!("takeovers appended: {taken}, writes that lost the race and re-read: {conflicts}");
    let report = check_database(open_store(&idle.database.url).await.as_ref())
        .await
        .expect("the check runs");
    assert_eq!(report.games, games.len() as u64, "{report:?}");
    assert!(report.problems.is_empty(), "{report:?}");
}

async fn a_waiting_game_not_full_in_time_is_cancelled(backend: Backend) {
    // After GOLF_WAITING_EXPIRY_S a game still waiting for players is cancelled as its host
    // would: 404 from then on, out of the lobby, its streams ended; a started game stays.
    let clock = Clock::system();
    let database = TestDatabase::new(backend).await;
    let app = spawn_app_with(database, clock.clone(), |config| {
        config.sweep_interval = SWEEP;
        config.waiting_expiry = Duration::from_secs(600);
    })
    .await;
    let (public, _) = app.create_game(json!({"seats": 3})).await;
    let ada = app.join(&public, "Ada").await;
    let (private, _) = app.create_game(json!({"seats": 2, "private": true})).await;
    let (running, _, _) = start(&app, json!({}), 1).await;
    let lobby: Value = app.get("/v1/games").await.json().await.unwrap();
    assert_eq!(lobby["games"][0]["id"], public.as_str());
    let stream = app
        .client
        .get(app.url(&format!("/v1/games/{public}/stream")))
        .bearer_auth(&ada.token)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    tokio::time::sleep(SWEEP * 8).await;
    assert_eq!(app.get(&format!("/v1/games/{public}")).await.status(), 200);

    clock.advance(Duration::from_secs(601));
    let ended = tokio::time::timeout(PATIENCE, stream.bytes()).await;
    assert!(ended.is_ok(), "the stream of an expired game ends");
    for id in [&public, &private] {
        // One sweep cancels both, one after the other: the stream may end before the second.
        let started = tokio::time::Instant::now();
        while app.get(&format!("/v1/games/{id}")).await.status() != 404 {
            assert!(started.elapsed() < PATIENCE, "{id} is still there");
            tokio::time::sleep(SWEEP).await;
        }
        let join = json!({"name": "Late"});
        let path = format!("/v1/games/{id}/players");
        let joined = app.send(Method::POST, &path, Some(&join), None).await;
        assert_eq!(joined.status(), 404);
    }
    let lobby: Value = app.get("/v1/games").await.json().await.unwrap();
    assert_eq!(lobby["games"], json!([]));
    assert_eq!(counter(&app, "golf_waiting_games_expired_total").await, 2);
    assert_eq!(app.get(&format!("/v1/games/{running}")).await.status(), 200);
}

async fn failing_takeovers_do_not_hold_up_the_games_due_after_them(backend: Backend) {
    // More games than one sweep takes (100) whose takeover always fails (their stored decks are
    // corrupt) fall due before a sound game: each pass backs the failing ones off instead of
    // taking them first again, so the sound game's seats are taken within a few passes.
    let clock = Clock::system();
    let app = spawn(backend, &clock).await;
    for _ in 0..101 {
        start(&app, json!({"turn_timeout_s": 60}), 1).await;
    }
    let (sound, _, _) = start(&app, json!({"turn_timeout_s": 60}), 1).await;
    let statement = "UPDATE games SET decks = '\"corrupt\"' WHERE id <> $1";
    let sound_id: uuid::Uuid = sound.parse().unwrap();
    let corrupted = match app.database.backend {
        Backend::Postgres => {
            let mut conn = sqlx::PgConnection::connect(&app.database.url)
                .await
                .unwrap();
            let query = sqlx::query(statement).bind(sound_id);
            query.execute(&mut conn).await.unwrap().rows_affected()
        }
        Backend::Sqlite => {
            let mut conn = sqlx::SqliteConnection::connect(&app.database.url)
                .await
                .unwrap();
            let query = sqlx::query(statement).bind(sound_id);
            query.execute(&mut conn).await.unwrap().rows_affected()
        }
    };
    assert_eq!(corrupted, 101);

    clock.advance(Duration::from_secs(61));
    let view = view_once(&app, &sound, |view| {
        bot_of(view, 0) == "greedy" && bot_of(view, 1) == "greedy"
    })
    .await;
    assert_eq!(takeovers(&app, &sound).await.len(), 2, "{view}");
}

on_both_backends!(
    a_seat_that_runs_out_of_time_is_played_by_the_greedy_bot,
    a_player_who_leaves_hands_the_seat_to_the_bot,
    a_waiting_game_not_full_in_time_is_cancelled,
    failing_takeovers_do_not_hold_up_the_games_due_after_them,
);
