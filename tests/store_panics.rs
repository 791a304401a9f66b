//! A store that panics (a bug) inside the batched calls: the group commit's append and the
//! shared read of versions. The request whose batch panicked gets a 500 `internal_error`
//! problem, and the moves and views after it are served: no batch runner is left marked running,
//! no game held, so nothing waits for ever. Run: `cargo test --test store_panics`.

mod common;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use common::contract::{problem, started};
use common::probe::Probe;
use common::{Backend, TestApp, TestDatabase, spawn_app_over, test_config};
use golf_server::store;
use serde_json::{Value, json};

/// A server over a [`Probe`] store on a fresh SQLite database (one batch of each kind runs at
/// a time there: a runner left marked running would stop every later batch).
async fn panicky_app() -> (TestApp, Arc<Probe>) {
    let database = TestDatabase::new(Backend::Sqlite).await;
    let options = test_config(&database).pool_options();
    let store = store::connect(&database.url, &options)
        .await
        .expect("open the test database");
    let probe = Probe::over(store);
    (spawn_app_over(database, probe.clone()), probe)
}

/// `request`'s response, unless the server keeps it waiting (a batch that never comes).
async fn answered(request: impl Future<Output = reqwest::Response>) -> reqwest::Response {
    tokio::time::timeout(Duration::from_secs(10), request)
        .await
        .expect("answered within 10 s, not left waiting")
}

/// The public view of game `id`, which checks its version first.
async fn view(app: &TestApp, id: &str) -> reqwest::Response {
    answered(app.get(&format!("/v1/games/{id}"))).await
}

/// The version of game `id`, from a view that succeeds.
async fn version(app: &TestApp, id: &str) -> u64 {
    let response = view(app, id).await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.expect("a view");
    body["version"].as_u64().expect("a version")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_in_the_read_of_versions_fails_its_views_only() {
    // Views whose shared version read panics get a 500 problem; once the store is sound again,
    // views and moves of the instance are served.
    let (app, panicky) = panicky_app().await;
    let (id, _, seats) = started(&app, json!({"seats": 2, "holes": 1})).await;
    let before = version(&app, &id).await;

    panicky.in_game_versions.store(true, Ordering::SeqCst);
    // Twice: a runner left marked running by the first panic would hold back the second.
    for _ in 0..2 {
        problem(view(&app, &id).await, 500, "internal_error").await;
    }
    panicky.in_game_versions.store(false, Ordering::SeqCst);

    assert_eq!(version(&app, &id).await, before);
    let reveal = json!({"type": "reveal", "positions": [0, 1]});
    let moved = answered(app.play(&id, &seats[0].token, &reveal)).await;
    assert_eq!(moved.status(), 200);
    assert_eq!(version(&app, &id).await, before + 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_in_the_group_commit_fails_its_move_only() {
    // Moves whose group commit panics get a 500 problem and write nothing; once the store is
    // sound again, the same move and the next ones of that game are written, once each.
    let (app, panicky) = panicky_app().await;
    let (id, _, seats) = started(&app, json!({"seats": 2, "holes": 1})).await;
    let before = version(&app, &id).await;
    let reveal = json!({"type": "reveal", "positions": [0, 1]});

    panicky.in_append.store(true, Ordering::SeqCst);
    // Twice, and of the same game: a runner or a game left held by the first panic would hold
    // back the second.
    for _ in 0..2 {
        let refused = answered(app.play(&id, &seats[0].token, &reveal)).await;
        problem(refused, 500, "internal_error").await;
    }
    panicky.in_append.store(false, Ordering::SeqCst);

    assert_eq!(version(&app, &id).await, before, "nothing written");
    for seat in &seats {
        let moved = answered(app.play(&id, &seat.token, &reveal)).await;
        assert_eq!(moved.status(), 200);
    }
    assert_eq!(version(&app, &id).await, before + 2);
    let log = app.events(&id, None, 0).await;
    assert_eq!(log.len() as u64, before + 2, "each move logged once");
}
