//! The use cases of the API, over one event store: load a game, authenticate, decide, run the
//! bots, append, answer with typed replies.
//!
//! # Layout
//! - [`writes`]: create, join, move, cancel;
//! - [`account_games`]: an account's games and events as its holder reads them;
//! - [`account_stream`]: the live stream of an account's events;
//! - [`webhooks`]: an account's webhook as its holder registers, reads and removes it, and
//!   the log of its deliveries;
//! - [`webhook_worker`]: the task of every instance that delivers webhooks, retries them, and
//!   records each attempt;
//! - [`webhook_client`]: the address guard (SSRF), the Standard Webhooks signature, and one
//!   attempt's `POST`;
//! - [`accounts`]: usernames, account creation, account tokens, the account's and profile's
//!   replies;
//! - [`attempts`]: the write path they share: decide, append through the group commit, and the
//!   retry that settles races in the store;
//! - [`challenges`]: challenges and rematches: their answers, and the game the last acceptance
//!   creates with every seat taken;
//! - [`cache`]: this instance's decoded game states, checked against the store before use, and
//!   how a use case gets a game (from them, or from the store);
//! - [`batches`]: the one batching primitive: requests that arrive together, answered by one call;
//! - [`commits`]: group commit of the appends of concurrent writes (a batch job);
//! - [`versions`]: the reads of games' versions that check them, shared by concurrent views (a
//!   batch job);
//! - [`ratings`]: rating histories, the leaderboard, and the application of rated games' ends;
//! - [`reads`]: views, the lobby, pages of the log, replays, the export;
//! - [`seeks`]: seeks ("find me a game") and their matching;
//! - [`timeouts`]: seats handed to the bot (a leave, a turn timeout) and the sweeper that finds
//!   turn timeouts and expired waiting games;
//! - [`clock`]: the service's time;
//! - [`audit_status`]: the audit of a game as `GET .../audit` shows it;
//! - [`audit_worker`]: the thread and runtime of its own that audits finished games;
//! - [`analysis`]: the analysis of a game as `GET .../analysis` answers it;
//! - [`analysis_worker`]: the threads of their own that analyse finished games;
//! - [`background`]: the store as those threads reach it (the instance's pool, on the service's
//!   runtime);
//! - [`live`]: the live log that streams follow, woken by the store's hub;
//! - [`notices`]: what a write tells the accounts bound to the game's seats (their games'
//!   rows and their events);
//! - [`credentials`]: seat and host tokens, and who presents one;
//! - [`idempotency`]: `Idempotency-Key`s and replayed answers;
//! - [`paging`]: page sizes and the lobby's cursor;
//! - [`error`]: why a use case failed;
//! - [`precedence`]: which of a request's faults is reported first.

pub mod account_games;
pub mod account_stream;
pub mod accounts;
pub mod analysis;
pub mod analysis_worker;
pub mod attempts;
pub mod audit_status;
pub mod audit_worker;
pub mod background;
pub mod batches;
pub mod cache;
pub mod challenges;
pub mod clock;
pub mod commits;
pub mod credentials;
pub mod error;
pub mod idempotency;
pub mod live;
pub mod notices;
pub mod paging;
pub mod precedence;
pub mod ratings;
pub mod reads;
pub mod seeks;
pub mod timeouts;
pub mod versions;
pub mod webhook_client;
pub mod webhook_worker;
pub mod webhooks;
pub mod writes;

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::engine::{Seat, Timestamp, View};
use crate::metrics::GameMetrics;
use crate::store::EventStore;
use analysis_worker::AnalysisWorker;
use audit_worker::AuditWorker;
use background::BackgroundStore;
use batches::Batches;
use cache::StateCache;
use commits::GroupCommit;
use live::SharedReads;
use timeouts::Backoff;
use versions::VersionRead;
use webhooks::Webhooks;

pub use audit_status::Audit;
pub use clock::Clock;
pub use error::ServiceError;
pub use idempotency::{Answer, IdempotencyKey, MIN_CREATION_KEY_LEN};
pub use precedence::ParsedLater;
pub use timeouts::Swept;
pub use writes::{JoinRequest, MoveCommand, NewGameRequest};

/// Games whose decoded state an instance keeps by default (a few kilobytes each): more than the
/// games in play on a busy instance. At 4,096, 5,000 games in play missed the cache on most
/// moves and views, and moves waited 300 ms for the loads (docs/SCALING.md).
pub const DEFAULT_CACHED_GAMES: usize = 16_384;

/// The use cases, over one store.
#[derive(Clone)]
pub struct GameService {
    store: Arc<dyn EventStore>,
    metrics: GameMetrics,
    clock: Clock,
    default_turn_timeout_s: Option<u32>,
    challenge_expiry: std::time::Duration,
    seek_expiry: std::time::Duration,
    cache: Arc<StateCache>,
    versions: Arc<Batches<VersionRead>>,
    commits: Arc<Batches<GroupCommit>>,
    audits: Arc<AuditWorker>,
    analyses: Arc<AnalysisWorker>,
    shared_reads: Arc<SharedReads>,
    backoff: Arc<Backoff>,
    webhooks: Arc<Webhooks>,
}

impl GameService {
    /// A service over `store`, counting games and moves in `metrics`, on the system clock, whose
    /// games have no turn timeout unless their creator sets one, keeping the states of up to
    /// [`DEFAULT_CACHED_GAMES`] games; finished games are audited on a thread of their own
    /// (see [`audit_worker`]).
    ///
    /// # Panics
    /// Outside a Tokio runtime: the audits' store calls run on this one ([`background`]).
    pub fn new(store: Arc<dyn EventStore>, metrics: GameMetrics) -> Self {
        let audits = Arc::new(AuditWorker::start(
            BackgroundStore::new(Arc::clone(&store)),
            metrics.audits_replayed.clone(),
        ));
        GameService {
            metrics,
            clock: Clock::system(),
            default_turn_timeout_s: None,
            challenge_expiry: std::time::Duration::from_secs(24 * 60 * 60),
            seek_expiry: std::time::Duration::from_secs(600),
            cache: Arc::new(StateCache::new(DEFAULT_CACHED_GAMES)),
            versions: Arc::new(Batches::new(VersionRead(Arc::clone(&store)))),
            commits: Arc::new(Batches::new(GroupCommit(Arc::clone(&store)))),
            audits,
            analyses: Arc::new(AnalysisWorker::off()),
            shared_reads: Arc::default(),
            backoff: Arc::default(),
            webhooks: Arc::default(),
            store,
        }
    }

    /// This service, whose finished games are analysed by `threads` threads (0: analyses are
    /// off, as they are by default).
    ///
    /// # Panics
    /// Outside a Tokio runtime: the analyses' store calls run on this one ([`background`]).
    pub fn with_analyses(self, threads: usize) -> Self {
        GameService {
            analyses: Arc::new(AnalysisWorker::start(
                threads,
                BackgroundStore::new(Arc::clone(&self.store)),
                self.metrics.activity.clone(),
            )),
            ..self
        }
    }

    /// This service, keeping the states of up to `games` games.
    pub fn with_cached_games(self, games: usize) -> Self {
        GameService {
            cache: Arc::new(StateCache::new(games)),
            ..self
        }
    }

    /// This service on `clock`.
    pub fn with_clock(self, clock: Clock) -> Self {
        GameService { clock, ..self }
    }

    /// This service, whose new games get `turn_timeout_s` when their creator gives none.
    pub fn with_default_turn_timeout(self, turn_timeout_s: Option<u32>) -> Self {
        GameService {
            default_turn_timeout_s: turn_timeout_s,
            ..self
        }
    }

    /// This service, delivering webhooks as `webhooks` says.
    pub fn with_webhooks(self, webhooks: Webhooks) -> Self {
        GameService {
            webhooks: Arc::new(webhooks),
            ..self
        }
    }

    /// This service, whose challenges stay open for their answers for `expiry`.
    pub fn with_challenge_expiry(self, expiry: std::time::Duration) -> Self {
        GameService {
            challenge_expiry: expiry,
            ..self
        }
    }

    /// This service, whose seeks wait for their match for `expiry`.
    pub fn with_seek_expiry(self, expiry: std::time::Duration) -> Self {
        GameService {
            seek_expiry: expiry,
            ..self
        }
    }

    /// The store, for readiness checks.
    pub fn store(&self) -> &Arc<dyn EventStore> {
        &self.store
    }
}

/// A seat taken.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Joined {
    /// The seat taken.
    pub seat: Seat,
    /// The seat's secret token, shown once (absent for a bot).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

/// The public view of a new game and its secret host token.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct CreatedGame {
    /// The public view.
    #[serde(flatten)]
    pub view: View,
    /// The host's secret token, shown once: it seats bots, and cancels the game while it waits.
    pub host_token: String,
}

/// One page of a game's log as a caller may see it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct EventsPage {
    /// Entries with `seq > after`, in order.
    #[schema(value_type = Vec<Object>)]
    pub events: Vec<Value>,
    /// The `after` of the next page, or null when this page reached the end.
    pub next_after: Option<i64>,
}

/// One page of the lobby.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct LobbyPage {
    /// Public views of waiting games with free seats, neither private nor stacked, newest first.
    pub games: Vec<View>,
    /// Pass as `cursor` for the next page; null at the end.
    pub next_cursor: Option<String>,
}

/// What a write's `If-Match` asks: that the game be at one of the versions it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionPrecondition {
    /// The precondition as the client sent it, quoted back when it fails.
    pub sent: String,
    /// Any version matches (`*`).
    pub any: bool,
    /// The versions named, as the text of their tags.
    pub versions: Vec<String>,
}

impl VersionPrecondition {
    /// Fails with `stale_version` unless the game's `version` is one the precondition names.
    pub fn check(&self, version: i64) -> Result<(), ServiceError> {
        let current = version.to_string();
        if self.any || self.versions.contains(&current) {
            Ok(())
        } else {
            Err(ServiceError::StaleVersion {
                expected: self.sent.clone(),
                current: version,
            })
        }
    }
}

impl GameService {
    /// The time of an entry written now.
    fn now(&self) -> Timestamp {
        self.clock.now()
    }
}
