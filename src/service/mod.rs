//! The use cases of the API, each capability in a room of its own over one event store; the
//! hub ([`Services`]) wires them. The work nobody waits for (sweeps, audits, analyses, webhook
//! deliveries, ratings) is `crate::jobs`'s: a use case only wakes it ([`post_game::GameEnds`]).
//!
//! # Layout
//! - [`games`]: a game's life: create (the one creation path, also for challenges, seeks and
//!   rematches), join, move, leave, cancel, timeouts, views, the log, replays, live streams, and
//!   the write path they share (decide, group commit, retry on a lost race, the state cache);
//! - [`accounts`]: accounts and their tokens, who presents a token, an account's games and
//!   events (typed: [`accounts::events`]), its stream, its webhook;
//! - [`opponents`]: finding opponents: challenges and rematches, seeks, ratings and the
//!   leaderboard;
//! - [`post_game`]: a finished game's audit and analysis as the API answers them, and the queues
//!   that wake the jobs computing them;
//! - shared primitives: [`batches`] (requests answered together by one call), [`clock`] (the
//!   service's time), [`error`] (why a use case failed), [`paging`] (limits and cursors),
//!   [`precedence`] (which of a request's faults is reported first), [`retry`] (the one retry of
//!   a lost write race).

pub mod accounts;
pub mod batches;
pub mod clock;
pub mod error;
pub mod games;
pub mod opponents;
pub mod paging;
pub mod post_game;
pub mod precedence;
pub mod retry;

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::engine::{Seat, View};
use crate::metrics::GameMetrics;
use crate::store::EventStore;

pub use accounts::Accounts;
pub use accounts::webhooks::Webhooks;
pub use clock::Clock;
pub use error::ServiceError;
pub use games::creation::NewGameRequest;
pub use games::idempotency::{Answer, IdempotencyKey, MIN_CREATION_KEY_LEN};
pub use games::writes::{JoinRequest, MoveCommand};
pub use games::{Games, Views};
pub use opponents::challenges::Challenges;
pub use opponents::ratings::Ratings;
pub use opponents::seeks::Seeks;
pub use post_game::{Audit, GameEnds, PostGame};
pub use precedence::ParsedLater;

/// Games whose decoded state an instance keeps by default (a few kilobytes each): more than the
/// games in play on a busy instance. At 4,096, 5,000 games in play missed the cache on most
/// moves and views, and moves waited 300 ms for the loads (docs/SCALING.md).
pub const DEFAULT_CACHED_GAMES: usize = 16_384;

/// The turn timeout of rated, seek and challenge games, unless `GOLF_MATCH_TURN_TIMEOUT_S` or
/// `GOLF_TURN_TIMEOUT_S` says otherwise: ten minutes.
pub const DEFAULT_MATCH_TURN_TIMEOUT_S: u32 = 600;

/// How an instance's use cases behave where the operator has a say.
pub struct Settings {
    /// The service's time.
    pub clock: Clock,
    /// Games whose decoded state this instance keeps.
    pub cached_games: usize,
    /// The turn timeout of new games whose creator sets none.
    pub default_turn_timeout_s: Option<u32>,
    /// The turn timeout of rated, seek and challenge games when `default_turn_timeout_s` is
    /// unset and their creator sets none.
    pub match_turn_timeout_s: u32,
    /// How webhooks are registered and delivered.
    pub webhooks: Arc<Webhooks>,
    /// How long a challenge stays open for its answers.
    pub challenge_expiry: Duration,
    /// How long a seek waits for its match.
    pub seek_expiry: Duration,
    /// Whether this instance computes analyses (`GOLF_ANALYSIS_THREADS` above 0).
    pub analyses: bool,
}

impl Default for Settings {
    /// The system clock, [`DEFAULT_CACHED_GAMES`], no turn timeout but for rated, seek and
    /// challenge games (ten minutes), public webhooks without
    /// retries, a day for challenges, ten minutes for seeks, no analyses.
    fn default() -> Self {
        Settings {
            clock: Clock::system(),
            cached_games: DEFAULT_CACHED_GAMES,
            default_turn_timeout_s: None,
            match_turn_timeout_s: DEFAULT_MATCH_TURN_TIMEOUT_S,
            webhooks: Arc::default(),
            challenge_expiry: Duration::from_secs(24 * 60 * 60),
            seek_expiry: Duration::from_secs(600),
            analyses: false,
        }
    }
}

/// The hub: every capability, wired over one store. Cheap to clone.
#[derive(Clone)]
pub struct Services {
    pub games: Games,
    pub views: Views,
    pub accounts: Accounts,
    pub challenges: Challenges,
    pub seeks: Seeks,
    pub ratings: Ratings,
    pub post_game: PostGame,
    /// What the use cases tell the jobs.
    pub ends: Arc<GameEnds>,
    store: Arc<dyn EventStore>,
    clock: Clock,
}

impl Services {
    /// The capabilities over `store`, counting in `metrics`, as `settings` say.
    pub fn new(store: Arc<dyn EventStore>, metrics: GameMetrics, settings: Settings) -> Self {
        let ends = Arc::new(GameEnds::default());
        let accounts = Accounts::new(
            Arc::clone(&store),
            settings.clock.clone(),
            Arc::clone(&settings.webhooks),
        );
        let games = Games::new(
            Arc::clone(&store),
            metrics,
            accounts.clone(),
            Arc::clone(&ends),
            &settings,
        );
        Services {
            challenges: Challenges::new(games.clone(), settings.challenge_expiry),
            seeks: Seeks::new(games.clone(), settings.seek_expiry),
            ratings: Ratings::new(Arc::clone(&store), settings.clock.clone()),
            post_game: PostGame::new(games.clone(), Arc::clone(&ends), settings.analyses),
            views: Views::new(games.clone()),
            games,
            accounts,
            ends,
            store,
            clock: settings.clock,
        }
    }

    /// The service's time.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The store, for readiness checks and the jobs.
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
