//! The event store: the only module that talks to the database.
//!
//! It owns each game's append-only, hash-chained log (`events`), the game row that caches the
//! current version, head hash, projection and the time of the last entry (`games`), the seats
//! and their token hashes (`seats`), and the stored responses that make the writes to a game
//! (moves, leaves, joins) and game creation idempotent (`move_idempotency`,
//! `create_idempotency`). It decides nothing: its [`codec`] turns the engine's types into rows and
//! back, and the rules stay in the engine.
//!
//! # Layout
//! - `mod.rs`: the [`EventStore`] trait, its data types and [`connect`].
//! - [`accounts`]: the [`AccountStore`] trait (accounts and their token hashes), reached from an
//!   [`EventStore`] by [`EventStore::accounts`].
//! - [`webhooks`]: the [`WebhookStore`] trait (accounts' webhooks, their pending deliveries
//!   and the log of attempts), reached by [`EventStore::webhooks`]; `sql/webhooks.rs` its
//!   statements.
//! - [`ratings`]: the [`RatingStore`] trait (rated games' ends to apply, rating histories, the
//!   leaderboard), reached by [`EventStore::ratings`].
//! - [`challenges`]: the [`ChallengeStore`] trait (challenges, their answers, and the game the
//!   last acceptance creates), reached by [`EventStore::challenges`].
//! - [`seeks`]: the [`SeekStore`] trait (seeks, and the game that matches them, written under a
//!   lock on their pool), reached by [`EventStore::seeks`].
//! - [`distribute`]: the schema's distribution over a Citus cluster (`golf-server distribute`).
//! - [`chain`]: salts, canonical JSON and the hash chain ([`chain::verify_chain`]).
//! - [`error`]: [`StoreError`] and the mapping of database errors.
//! - [`notify`]: the per-instance hub that wakes streams of the live log when a game changes.
//! - `rows.rs`: the rows both backends read, and their conversion to the types above.
//! - `sql.rs`: the one `EventStore` implementation, `SqlStore`, generic over a `Backend`: every
//!   call's logic, and the statements that read the same in both dialects; `sql/accounts.rs`:
//!   the accounts' statements; `sql/ratings.rs`, `sql/challenges.rs`, `sql/seeks.rs` and
//!   `sql/webhooks.rs`: theirs; `sql/creations.rs`: the game row a creation starts with, and the
//!   record that answers a creation's retries; `sql/batch.rs`: the rows an append writes (the
//!   game rows, and the entries, seats, stored responses and snapshots beside them), built once
//!   as one document of named parts that both backends read.
//! - `postgres.rs`, `sqlite.rs`: the two backends, with the same behavior (one test suite runs on
//!   both): how each connects and starts a write, and its statements where the dialects differ,
//!   each written whole.
//!
//! # Concurrency
//! Every append to a game is atomic and moves the game row's head only if its `version` is still
//! the caller's expected version (`UPDATE ... WHERE version = $expected`: on PostgreSQL one
//! statement whose row lock makes a concurrent append wait and then see the new version, on
//! SQLite a `BEGIN IMMEDIATE` transaction), and the primary key `(game_id, seq)` makes a duplicate
//! seq impossible even so. A lost race is a [`StoreError::Conflict`], never a gap or a lost
//! update. No state lives in the store, so any number of server instances can share one database
//! (docs/SCALING.md).

pub mod accounts;
pub mod chain;
pub mod challenges;
pub mod codec;
pub mod distribute;
pub mod error;
pub mod notify;
mod postgres;
pub mod ratings;
mod rows;
pub mod seeks;
mod sql;
mod sqlite;
pub mod webhooks;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::engine::{Rules, Status, Timestamp};

pub use accounts::{
    AccountEventRecord, AccountGame, AccountRecord, AccountStore, GamesCursor, ListedGame,
    NewAccount, NewAccountEvent,
};
pub use chain::{ChainError, verify_chain};
pub use challenges::{ChallengeAnswer, ChallengeCaps, ChallengeRecord, ChallengeStore, SeatedGame};
pub use error::StoreError;
pub use notify::{Changes, OwnAppend, Subscription, Wake};
pub use ratings::{
    AccountRating, DueRating, LeaderboardCursor, Ranked, RatedGame, RatingChange, RatingStore,
};
pub use seeks::{SeekMatch, SeekRecord, SeekStore};
pub use webhooks::WebhookStore;

/// JSON text as the store keeps it (a projection, a snapshot's state): written and read as text,
/// without a tree of it built on the way, since only the engine's types give it a meaning.
pub type RawJson = Box<serde_json::value::RawValue>;

/// Games whose versions one call of [`EventStore::game_versions`] may ask for.
pub const VERSIONS_PER_READ: usize = 500;

/// Expired idempotency records deleted by one statement of the purge.
const PURGE_BATCH: i64 = 1000;

/// How long a stored idempotent response is honored; older records are ignored and may be replaced.
pub const IDEMPOTENCY_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// An event to append: its log `type`, its data, and the time the caller chose for it (RFC 3339,
/// stored and hashed verbatim).
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    pub kind: String,
    pub data: Value,
    pub at: String,
}

/// A stored log entry. `salt` and `hash` are lowercase hex.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub seq: i64,
    pub at: String,
    pub kind: String,
    pub data: Value,
    pub salt: String,
    pub hash: String,
}

impl Entry {
    /// The public JSON form: `{"seq", "at", "type", "data", "salt", "hash"}`.
    pub fn to_json(&self) -> Value {
        json!({
            "seq": self.seq,
            "at": self.at,
            "type": self.kind,
            "data": self.data,
            "salt": self.salt,
            "hash": self.hash,
        })
    }
}

/// A game to create, with everything its row holds.
#[derive(Debug, Clone)]
pub struct NewGame {
    pub id: Uuid,
    /// When the game was created: the lobby orders games by it.
    pub created_at: Timestamp,
    pub seats: i32,
    pub holes: i32,
    pub rules: Rules,
    pub commitment: String,
    pub server_seed: [u8; 32],
    pub host_token_hash: [u8; 32],
    pub private: bool,
    pub stacked: bool,
    /// The explicit decks of a stacked game: secret until the game ends.
    pub decks: Option<Value>,
    pub status: Status,
    pub projection: RawJson,
    /// The account whose token created it, if any: its host.
    pub host_account: Option<String>,
    /// Whether its end updates its seats' ratings.
    pub rated: bool,
}

/// Where a game's log ends: what an append needs to continue its hash chain. A caller that read
/// the game at `version` knows it (entries up to `version` never change), so its append needs no
/// read first: it is written only if the game is still at `version`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// The seq of the last entry.
    pub version: i64,
    /// The game's secret server seed, from which every entry's salt derives.
    pub server_seed: [u8; 32],
    /// The hash of the last entry.
    pub hash: [u8; 32],
}

impl GameRecord {
    /// Where this game's log ended when it was loaded.
    pub fn head(&self) -> Head {
        Head {
            version: self.version,
            server_seed: self.server_seed,
            hash: self.head_hash,
        }
    }
}

/// One append of [`EventStore::append`]: its events, written after `head`.
#[derive(Debug, Clone)]
pub struct Append {
    pub game_id: Uuid,
    pub head: Head,
    pub events: Vec<NewEvent>,
    pub update: GameUpdate,
    pub idem: Option<GameIdempotency>,
}

/// A game as loaded: its row, including the version (the seq of its last entry), the head hash
/// and the number of seats taken.
#[derive(Debug, Clone)]
pub struct GameRecord {
    pub id: Uuid,
    pub created_at: Timestamp,
    /// Never cancelled: a cancelled game does not load.
    pub status: Status,
    pub version: i64,
    pub seats: i32,
    pub holes: i32,
    pub players: i32,
    pub rules: Rules,
    pub commitment: String,
    pub server_seed: [u8; 32],
    pub host_token_hash: [u8; 32],
    pub private: bool,
    pub stacked: bool,
    pub decks: Option<Value>,
    pub projection: RawJson,
    pub head_hash: [u8; 32],
    /// The audit of a finished game, once computed (see [`EventStore::record_audit`]).
    pub audit: Option<AuditResult>,
    /// The token hash of every seat taken (`None` for a bot), by seat: read with the row, so
    /// that authenticating a request costs no second query.
    pub seat_tokens: Vec<(i32, Option<[u8; 32]>)>,
    /// The accounts of its host and seats, read with the row.
    pub accounts: GameAccounts,
}

/// The accounts bound to a game: its host's, and its seats'.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GameAccounts {
    /// The account that created the game, if one did.
    pub host: Option<String>,
    /// `(seat, username)` of every seat bound to an account, by seat.
    pub seats: Vec<(i32, String)>,
}

/// What the full check of a finished game's log found, stored once the game ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuditResult {
    /// Every check passed.
    pub verified: bool,
    /// The first entry at fault, if any.
    pub first_bad_seq: Option<i64>,
}

/// A seat taken in the same transaction as the events that record it.
#[derive(Debug, Clone)]
pub struct NewSeat {
    pub seat: i32,
    pub name: String,
    pub bot: Option<String>,
    pub client_seed: String,
    /// `None` for a bot, which has no token.
    pub token_hash: Option<[u8; 32]>,
    /// The account the seat is bound to, if any.
    pub account: Option<String>,
}

/// The game row after an append.
#[derive(Debug, Clone)]
pub struct GameUpdate {
    pub status: Status,
    pub projection: RawJson,
    /// The seats taken (one by a join; every seat of a game created full, as a challenge's).
    pub new_seats: Vec<NewSeat>,
    /// States of the game to keep, after some of the new entries: a replay may start from them.
    pub snapshots: Vec<Snapshot>,
    /// When a bot may take the seats the game now waits for, or `None`: what
    /// [`EventStore::overdue_games`] looks for.
    pub deadline_at: Option<Timestamp>,
    /// Where the game stands for each account bound to one of its seats (none for a game
    /// without accounts).
    pub account_games: Vec<AccountGame>,
    /// The events the append gives those accounts, stored with it.
    pub account_events: Vec<NewAccountEvent>,
}

/// The state of a game after entry `seq`, where a command's events end.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub seq: i64,
    pub state: RawJson,
}

/// The response to store for a write to a game sent with an `Idempotency-Key`, in one
/// transaction with the write (table `move_idempotency`, whose name predates leaves and joins).
#[derive(Debug, Clone)]
pub struct GameIdempotency {
    /// The scope of the key in its game: the seat whose token came with a move or a leave, or
    /// [`JOIN_SCOPE`] for a join.
    pub seat: i32,
    pub key: String,
    pub fingerprint: String,
    pub response_status: u16,
    pub response_body: Value,
}

/// The `seat` under which the answers to a game's joins are stored: a join has no seat until it
/// is answered, so all of them share this scope (a join's key is scoped to its client by its
/// hash), and the primary key `(game_id, seat, key)` lets one key seat at most one player.
pub const JOIN_SCOPE: i32 = -1;

/// The response to store for a game creation sent with an `Idempotency-Key`.
#[derive(Debug, Clone)]
pub struct CreateIdempotency {
    pub key: String,
    pub fingerprint: String,
    pub response_status: u16,
    pub response_body: Value,
}

/// A stored response, returned as it was when the same key comes again.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredResponse {
    /// The fingerprint of the request that produced it: another body with the same key is a
    /// reused key, not a replay.
    pub fingerprint: String,
    pub status: u16,
    pub body: Value,
}

/// One game of the lobby: what a public view needs.
#[derive(Debug, Clone)]
pub struct LobbyGame {
    pub id: Uuid,
    pub created_at: Timestamp,
    pub version: i64,
    pub seats: i32,
    pub players: i32,
    pub projection: RawJson,
}

/// Where the next lobby page starts: after this game in (created_at, id) descending order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LobbyCursor {
    pub created_at: Timestamp,
    pub id: Uuid,
}

impl From<&LobbyGame> for LobbyCursor {
    fn from(game: &LobbyGame) -> Self {
        LobbyCursor {
            created_at: game.created_at,
            id: game.id,
        }
    }
}

/// The event store. Every write to one game is one transaction; no method panics on a database
/// error. Used as `Arc<dyn EventStore>`.
#[async_trait]
pub trait EventStore: Send + Sync {
    /// Inserts the game row, its first `events` (seq 1, 2, ...) and, if given, the creation's
    /// idempotency record, in one transaction. Returns the stored entries.
    ///
    /// Fails with `Conflict` if the game id exists or the key is recorded (and not expired).
    async fn create_game(
        &self,
        game: NewGame,
        events: Vec<NewEvent>,
        idem: Option<CreateIdempotency>,
    ) -> Result<Vec<Entry>, StoreError>;

    /// Loads a game in one query. A cancelled or unknown game is `None`.
    async fn load_game(&self, id: Uuid) -> Result<Option<GameRecord>, StoreError>;

    /// Appends to distinct games, answered in order: each append's events after its `head`,
    /// which the caller read with the game, with its `update` and `idem`. On PostgreSQL one
    /// statement and one commit for all of them, with no read of the games first.
    ///
    /// Each game's version is checked on its own row: an append whose game is no longer at
    /// `head.version` (or was cancelled since, or is unknown) fails alone with `Conflict`,
    /// writing nothing, and the others are written. When one game makes the database refuse the
    /// batch (a taken seat or recorded idempotency key, `Conflict` too; another writer holding
    /// its row, `Busy`), it is then written one append at a time, so that only that game's
    /// append fails; any other failure (the database `Unavailable`, a lost connection after which
    /// the batch may have committed) fails every append of the batch. Game rows are
    /// locked in id order, so that concurrent batches never deadlock. An append of no events
    /// only updates the row, still under the version check.
    async fn append(&self, appends: Vec<Append>) -> Vec<Result<Vec<Entry>, StoreError>>;

    /// How many [`EventStore::append`] calls are worth running at once: while one waits
    /// for its commit, the next one is on its way where the database writes concurrently.
    fn concurrent_batches(&self) -> usize;

    /// The versions of those of games `ids` that exist and are not cancelled, in one query (at
    /// most [`VERSIONS_PER_READ`] ids), in no particular order.
    async fn game_versions(&self, ids: &[Uuid]) -> Result<Vec<(Uuid, i64)>, StoreError>;

    /// Stores the audit of game `id` unless one is stored already: the first result stands.
    async fn record_audit(&self, id: Uuid, audit: AuditResult) -> Result<(), StoreError>;

    /// The stored analysis of game `id` (its JSON), if computed.
    async fn load_analysis(&self, id: Uuid) -> Result<Option<String>, StoreError>;

    /// Stores the analysis of game `id` (its JSON) unless one is stored: the first stands (the
    /// same log always gives the same analysis).
    async fn record_analysis(&self, id: Uuid, analysis: &str) -> Result<(), StoreError>;

    /// Up to `limit` finished games with no stored analysis, fair between their hosts: each
    /// host's newest first, then each host's second newest, and so on.
    async fn unanalysed_games(&self, limit: i64) -> Result<Vec<Uuid>, StoreError>;

    /// Up to `limit` finished games with no stored audit, in id order.
    async fn unaudited_games(&self, limit: i64) -> Result<Vec<Uuid>, StoreError>;

    /// The latest snapshot of game `id` at or before entry `seq`.
    async fn load_snapshot(&self, id: Uuid, seq: i64) -> Result<Option<Snapshot>, StoreError>;

    /// The stored response for a key of this game in the scope of `seat` (see
    /// [`GameIdempotency::seat`]), unless older than [`IDEMPOTENCY_TTL`].
    async fn find_game_response(
        &self,
        game_id: Uuid,
        seat: i32,
        key: &str,
    ) -> Result<Option<StoredResponse>, StoreError>;

    /// The stored response for a creation key, unless older than [`IDEMPOTENCY_TTL`].
    async fn find_create_response(&self, key: &str) -> Result<Option<StoredResponse>, StoreError>;

    /// Deletes idempotency records older than [`IDEMPOTENCY_TTL`], and account events older
    /// than [`accounts::ACCOUNT_EVENTS_TTL`]; returns how many.
    async fn purge_expired_idempotency(&self) -> Result<u64, StoreError>;

    /// Up to `limit` entries with seq > `after`, in order (empty for an unknown game).
    async fn load_events(
        &self,
        game_id: Uuid,
        after: i64,
        limit: i64,
    ) -> Result<Vec<Entry>, StoreError>;

    /// The lobby: non-private waiting games with a free seat, newest first, up to `limit`, after
    /// `cursor` if given.
    async fn list_waiting(
        &self,
        limit: i64,
        cursor: Option<LobbyCursor>,
    ) -> Result<Vec<LobbyGame>, StoreError>;

    /// Cancels a waiting game: it then loads as `None` and appends to it fail with `Conflict`.
    ///
    /// Fails with `NotWaiting` once the game started, `NotFound` if unknown or already cancelled.
    async fn cancel_game(&self, id: Uuid) -> Result<(), StoreError>;

    /// Up to `limit` games whose `deadline_at` (see [`GameUpdate`]) is at or before `now`,
    /// earliest deadline first: the turn timeouts due.
    async fn overdue_games(&self, now: Timestamp, limit: i64) -> Result<Vec<Uuid>, StoreError>;

    /// Moves the deadline of game `id` to `until`, if it is still due at `now` (an append since
    /// set a deadline of its own, which stands): the turn timeouts job backs off a game whose takeover
    /// failed, so that it does not take a place among the earliest deadlines at every pass.
    async fn postpone_deadline(
        &self,
        id: Uuid,
        now: Timestamp,
        until: Timestamp,
    ) -> Result<(), StoreError>;

    /// Up to `limit` waiting games (private ones included) created at or before `created_before`,
    /// oldest first: those to cancel for want of players.
    async fn expired_waiting_games(
        &self,
        created_before: Timestamp,
        limit: i64,
    ) -> Result<Vec<Uuid>, StoreError>;

    /// Ids of the games that are not cancelled, in id order, after `after`, up to `limit`: for a
    /// pass over the whole database (checking every chain).
    async fn game_ids(&self, after: Option<Uuid>, limit: i64) -> Result<Vec<Uuid>, StoreError>;

    /// This instance's wake-up hub: a subscriber of a game is woken after entries are appended
    /// to it or it is cancelled, by any instance (see [`notify`]).
    fn changes(&self) -> &Arc<Changes>;

    /// The accounts, in the same database.
    fn accounts(&self) -> &dyn AccountStore;

    /// The accounts' webhooks and their deliveries, in the same database.
    fn webhooks(&self) -> &dyn WebhookStore;

    /// The ratings, in the same database.
    fn ratings(&self) -> &dyn RatingStore;

    /// The challenges, in the same database.
    fn challenges(&self) -> &dyn ChallengeStore;

    /// Seeks.
    fn seeks(&self) -> &dyn SeekStore;

    /// Succeeds when the database answers (readiness).
    async fn ping(&self) -> Result<(), StoreError>;

    /// Closes the pool once its connections are back: the last step of a stopping instance
    /// (SQLite then folds its write-ahead log into the database file).
    async fn close(&self);
}

/// Pool settings for [`connect`].
#[derive(Debug, Clone)]
pub struct PoolOptions {
    /// Connections this instance may open. Across instances, keep the sum under the server's
    /// `max_connections`.
    pub max_connections: u32,
    /// How long a call waits for a connection before failing with `Unavailable`, and SQLite for
    /// its write lock before failing with `Busy`.
    pub acquire_timeout: Duration,
    /// PostgreSQL only: how long one statement may run before the server cancels it
    /// (`statement_timeout`, then `Unavailable`), and half of it how long a statement may wait
    /// for a lock (`lock_timeout`, then `Busy`: another writer holds the game). SQLite's lock
    /// waits are bounded by `acquire_timeout` instead.
    pub statement_timeout: Duration,
    /// PostgreSQL only: whether this pool's hub listens for the changes of other instances
    /// ([`Changes::listening`]); a pool that serves no stream (a command's) need not.
    pub listen: bool,
}

impl Default for PoolOptions {
    fn default() -> Self {
        PoolOptions {
            max_connections: 10,
            acquire_timeout: Duration::from_secs(3),
            statement_timeout: Duration::from_secs(5),
            listen: true,
        }
    }
}

/// Opens the database named by `url` and runs the embedded migrations.
///
/// `postgres://` or `postgresql://` selects PostgreSQL, `sqlite:` SQLite (the file is created if
/// missing). Fails with `Unavailable` within about `acquire_timeout` if the database does not
/// answer, and with `Internal` for any other URL or a failed migration.
pub async fn connect(url: &str, options: &PoolOptions) -> Result<Arc<dyn EventStore>, StoreError> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Arc::new(postgres::PgStore::connect(url, options).await?))
    } else if url.starts_with("sqlite:") {
        Ok(Arc::new(sqlite::SqliteStore::connect(url, options).await?))
    } else {
        Err(StoreError::Internal(format!(
            "unsupported database URL {:?}: expected postgres://, postgresql:// or sqlite:",
            url.split(':').next().unwrap_or_default()
        )))
    }
}

/// Every entry of a game's log up to seq `last` (inclusive), read a page at a time.
pub async fn load_log(
    store: &dyn EventStore,
    game_id: Uuid,
    last: i64,
) -> Result<Vec<Entry>, StoreError> {
    load_log_between(store, game_id, 0, last).await
}

/// The entries of a game's log after seq `first_after` up to seq `last` (inclusive), read a
/// page at a time.
pub async fn load_log_between(
    store: &dyn EventStore,
    game_id: Uuid,
    first_after: i64,
    last: i64,
) -> Result<Vec<Entry>, StoreError> {
    const PAGE: i64 = 1000;
    let mut entries: Vec<Entry> = Vec::new();
    loop {
        let after = entries.last().map_or(first_after, |entry| entry.seq);
        if after >= last {
            return Ok(entries);
        }
        let page = store
            .load_events(game_id, after, PAGE.min(last - after))
            .await?;
        if page.is_empty() {
            return Ok(entries);
        }
        entries.extend(page);
    }
}

/// The seal of new events after `head`, as the store needs it.
fn seal(
    server_seed: &[u8; 32],
    head: [u8; 32],
    first_seq: i64,
    events: Vec<NewEvent>,
) -> Result<(Vec<Entry>, [u8; 32]), StoreError> {
    chain::seal(server_seed, head, first_seq, events)
        .map_err(|e| StoreError::Internal(e.to_string()))
}
