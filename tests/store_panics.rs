//! A store that panics (a bug) inside the batched calls: the group commit's append and the
//! shared read of versions. The request whose batch panicked gets a 500 `internal_error`
//! problem, and the moves and views after it are served: no batch runner is left marked running,
//! no game held, so nothing waits for ever. Run: `cargo test --test store_panics`.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use common::contract::{problem, started};
use common::{Backend, TestApp, TestDatabase, spawn_app_over, test_config};
use golf_server::engine::Timestamp;
use golf_server::store::{
    self, Append, AuditResult, Changes, CreateIdempotency, Entry, EventStore, GameRecord,
    LobbyCursor, LobbyGame, NewEvent, NewGame, Snapshot, StoreError, StoredResponse,
};
use serde_json::{Value, json};
use uuid::Uuid;

/// A real store that panics in [`EventStore::append`] or [`EventStore::game_versions`] while
/// told to.
struct Panicky {
    store: Arc<dyn EventStore>,
    in_append: AtomicBool,
    in_game_versions: AtomicBool,
}

#[async_trait]
impl EventStore for Panicky {
    async fn create_game(
        &self,
        game: NewGame,
        events: Vec<NewEvent>,
        idem: Option<CreateIdempotency>,
    ) -> Result<Vec<Entry>, StoreError> {
        self.store.create_game(game, events, idem).await
    }

    async fn load_game(&self, id: Uuid) -> Result<Option<GameRecord>, StoreError> {
        self.store.load_game(id).await
    }

    async fn append(&self, appends: Vec<Append>) -> Vec<Result<Vec<Entry>, StoreError>> {
        assert!(!self.in_append.load(Ordering::SeqCst), "a bug in append");
        self.store.append(appends).await
    }

    async fn load_analysis(&self, id: Uuid) -> Result<Option<String>, StoreError> {
        self.store.load_analysis(id).await
    }

    async fn record_analysis(&self, id: Uuid, analysis: &str) -> Result<(), StoreError> {
        self.store.record_analysis(id, analysis).await
    }

    async fn unanalysed_games(&self, limit: i64) -> Result<Vec<Uuid>, StoreError> {
        self.store.unanalysed_games(limit).await
    }

    fn concurrent_batches(&self) -> usize {
        self.store.concurrent_batches()
    }

    async fn game_versions(&self, ids: &[Uuid]) -> Result<Vec<(Uuid, i64)>, StoreError> {
        let panics = self.in_game_versions.load(Ordering::SeqCst);
        assert!(!panics, "a bug in game_versions");
        self.store.game_versions(ids).await
    }

    async fn record_audit(&self, id: Uuid, audit: AuditResult) -> Result<(), StoreError> {
        self.store.record_audit(id, audit).await
    }

    async fn load_snapshot(&self, id: Uuid, seq: i64) -> Result<Option<Snapshot>, StoreError> {
        self.store.load_snapshot(id, seq).await
    }

    async fn find_game_response(
        &self,
        game_id: Uuid,
        seat: i32,
        key: &str,
    ) -> Result<Option<StoredResponse>, StoreError> {
        self.store.find_game_response(game_id, seat, key).await
    }

    async fn find_create_response(&self, key: &str) -> Result<Option<StoredResponse>, StoreError> {
        self.store.find_create_response(key).await
    }

    async fn purge_expired_idempotency(&self) -> Result<u64, StoreError> {
        self.store.purge_expired_idempotency().await
    }

    async fn load_events(
        &self,
        game_id: Uuid,
        after: i64,
        limit: i64,
    ) -> Result<Vec<Entry>, StoreError> {
        self.store.load_events(game_id, after, limit).await
    }

    async fn list_waiting(
        &self,
        limit: i64,
        cursor: Option<LobbyCursor>,
    ) -> Result<Vec<LobbyGame>, StoreError> {
        self.store.list_waiting(limit, cursor).await
    }

    async fn cancel_game(&self, id: Uuid) -> Result<(), StoreError> {
        self.store.cancel_game(id).await
    }

    async fn overdue_games(&self, now: Timestamp, limit: i64) -> Result<Vec<Uuid>, StoreError> {
        self.store.overdue_games(now, limit).await
    }

    async fn postpone_deadline(
        &self,
        id: Uuid,
        now: Timestamp,
        until: Timestamp,
    ) -> Result<(), StoreError> {
        self.store.postpone_deadline(id, now, until).await
    }

    async fn expired_waiting_games(
        &self,
        created_before: Timestamp,
        limit: i64,
    ) -> Result<Vec<Uuid>, StoreError> {
        self.store
            .expired_waiting_games(created_before, limit)
            .await
    }

    async fn game_ids(&self, after: Option<Uuid>, limit: i64) -> Result<Vec<Uuid>, StoreError> {
        self.store.game_ids(after, limit).await
    }

    fn changes(&self) -> &Arc<Changes> {
        self.store.changes()
    }

    fn accounts(&self) -> &dyn golf_server::store::AccountStore {
        self.store.accounts()
    }

    fn webhooks(&self) -> &dyn golf_server::store::WebhookStore {
        self.store.webhooks()
    }

    fn ratings(&self) -> &dyn golf_server::store::RatingStore {
        self.store.ratings()
    }

    fn challenges(&self) -> &dyn golf_server::store::ChallengeStore {
        self.store.challenges()
    }

    fn seeks(&self) -> &dyn golf_server::store::SeekStore {
        self.store.seeks()
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.store.ping().await
    }
}

/// A server over a [`Panicky`] store on a fresh SQLite database (one batch of each kind runs at
/// a time there: a runner left marked running would stop every later batch).
async fn panicky_app() -> (TestApp, Arc<Panicky>) {
    let database = TestDatabase::new(Backend::Sqlite).await;
    let options = test_config(&database).pool_options();
    let store = store::connect(&database.url, &options)
        .await
        .expect("open the test database");
    let panicky = Arc::new(Panicky {
        store,
        in_append: AtomicBool::new(false),
        in_game_versions: AtomicBool::new(false),
    });
    (spawn_app_over(database, panicky.clone()), panicky)
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
