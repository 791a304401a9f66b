//! `GET /v1/games/{id}/analysis`: 409 before the game is finished, 202 while the analysis is
//! computed, then the analysis, the same as `golf-server analyze` gives from the export; 503 on
//! a server whose analyses are off.

mod common;

use common::{Backend, TestApp, TestDatabase, spawn_app, spawn_app_with};
use golf_server::service::Clock;
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;

async fn analysis_of(app: &TestApp, id: &str) -> (u16, Value) {
    let response = app
        .send(Method::GET, &format!("/v1/games/{id}/analysis"), None, None)
        .await;
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

/// A finished one-hole game of an expert bot and a greedy bot: seating the second plays it out.
async fn finished_bot_game(app: &TestApp) -> String {
    let (id, created) = app.create_game(json!({"seats": 2, "holes": 1})).await;
    let host = created["host_token"].as_str().unwrap();
    for (name, bot) in [("Ann", "expert"), ("Bea", "greedy")] {
        let body = json!({"name": name, "bot": bot});
        let path = format!("/v1/games/{id}/players");
        let response = app.send(Method::POST, &path, Some(&body), Some(host)).await;
        assert_eq!(response.status(), 201);
    }
    id
}

async fn a_game_is_analysed_once_finished_as_analyze_does_offline(backend: Backend) {
    let app = spawn_app(backend).await;
    let (waiting, _) = app.create_game(json!({"seats": 2})).await;
    let (status, problem) = analysis_of(&app, &waiting).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (409, Some("not_finished"))
    );

    let id = finished_bot_game(&app).await;
    let (status, pending) = analysis_of(&app, &id).await;
    assert_eq!((status, pending), (202, json!({"status": "pending"})));
    let analysis = analysed(&app, &id).await;
    assert_eq!(analysis["status"], "done", "{analysis}");
    let decisions = analysis["decisions"].as_array().expect("decisions");
    assert!(decisions.len() > 4, "{analysis}");
    let seats = analysis["seats"].as_array().expect("seats");
    let counted: u64 = seats.iter().map(|s| s["decisions"].as_u64().unwrap()).sum();
    assert_eq!(counted, decisions.len() as u64);

    let export = app
        .get(&format!("/v1/games/{id}/export"))
        .await
        .text()
        .await
        .unwrap();
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), export).unwrap();
    let offline = std::process::Command::new(env!("CARGO_BIN_EXE_golf-server"))
        .args(["analyze", "--json"])
        .arg(file.path())
        .output()
        .expect("golf-server analyze runs");
    assert!(offline.status.success(), "{offline:?}");
    let offline: Value = serde_json::from_slice(&offline.stdout).expect("JSON");
    assert_eq!(offline, analysis);
}

async fn a_server_without_analysis_threads_says_so(backend: Backend) {
    let database = TestDatabase::new(backend).await;
    let app = spawn_app_with(database, Clock::system(), |config| {
        config.analysis_threads = 0
    })
    .await;
    let id = finished_bot_game(&app).await;
    let (status, problem) = analysis_of(&app, &id).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (503, Some("analysis_disabled"))
    );
}

/// The analysis of game `id`, waited for: seconds in a debug build, 5 min at most.
async fn analysed(app: &TestApp, id: &str) -> Value {
    for _ in 0..1500 {
        let (status, body) = analysis_of(app, id).await;
        if status == 200 {
            return body;
        }
        assert_eq!(status, 202);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("game {id} was not analysed within 5 min");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_holds_its_pool_and_one_listening_connection_audits_and_analyses_included() {
    // A pool of 2, both opened by concurrent views; a finished game then audited and analysed,
    // each on a thread of its own: the database counts the pool's 2 and the listener's 1.
    let database = TestDatabase::new(Backend::Postgres).await;
    let app = spawn_app_with(database, Clock::system(), |config| {
        config.db_max_connections = 2
    })
    .await;
    let id = finished_bot_game(&app).await;
    let path = format!("/v1/games/{id}");
    let views = (0..20).map(|_| app.get(&path));
    for view in futures_util::future::join_all(views).await {
        assert_eq!(view.status(), 200);
    }
    let audit = app.audit(&id).await;
    assert_eq!(audit["verified"], true, "{audit}");
    assert_eq!(analysed(&app, &id).await["status"], "done");
    let sessions = app.database.sessions().await;
    assert!(sessions <= 3, "{sessions} sessions for a pool of 2");
}

on_both_backends!(
    a_game_is_analysed_once_finished_as_analyze_does_offline,
    a_server_without_analysis_threads_says_so,
);
