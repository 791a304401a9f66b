//! A store for tests that look inside: a real store that panics on demand (a bug in the batched
//! calls) and counts what it reads.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use async_trait::async_trait;
use golf_server::engine::Timestamp;
use golf_server::store::{
    Append, AuditResult, Changes, CreateIdempotency, Entry, EventStore, GameRecord, LobbyCursor,
    LobbyGame, NewEvent, NewGame, Snapshot, StoreError, StoredResponse,
};
use uuid::Uuid;

/// A real store that panics in [`EventStore::append`] or [`EventStore::game_versions`] while
/// told to, and counts the reads of game rows and of log entries.
pub struct Probe {
    store: Arc<dyn EventStore>,
    pub in_append: AtomicBool,
    pub in_game_versions: AtomicBool,
    /// Calls of [`EventStore::load_game`].
    pub game_reads: AtomicUsize,
    /// Calls of [`EventStore::load_events`].
    pub log_reads: AtomicUsize,
}

impl Probe {
    /// A probe over `store`, sound and with no read counted.
    pub fn over(store: Arc<dyn EventStore>) -> Arc<Probe> {
        Arc::new(Probe {
            store,
            in_append: AtomicBool::new(false),
            in_game_versions: AtomicBool::new(false),
            game_reads: AtomicUsize::new(0),
            log_reads: AtomicUsize::new(0),
        })
    }

    /// Reads counted so far: `(game rows, log pages)`.
    pub fn reads(&self) -> (usize, usize) {
        (
            self.game_reads.load(Ordering::SeqCst),
            self.log_reads.load(Ordering::SeqCst),
        )
    }
}

#[async_trait]
impl EventStore for Probe {
    async fn create_game(
        &self,
        game: NewGame,
        events: Vec<NewEvent>,
        idem: Option<CreateIdempotency>,
    ) -> Result<Vec<Entry>, StoreError> {
        self.store.create_game(game, events, idem).await
    }

    async fn load_game(&self, id: Uuid) -> Result<Option<GameRecord>, StoreError> {
        self.game_reads.fetch_add(1, Ordering::SeqCst);
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

    async fn unaudited_games(&self, limit: i64) -> Result<Vec<Uuid>, StoreError> {
        self.store.unaudited_games(limit).await
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
        self.log_reads.fetch_add(1, Ordering::SeqCst);
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

    async fn close(&self) {
        self.store.close().await
    }
}
