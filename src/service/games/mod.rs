//! A game's life, from its creation to its last entry: the use cases that change a game
//! ([`Games`]: [`creation`], [`writes`]: join, move, cancel; [`timeouts`]: a seat handed to the
//! bot), those that read it ([`Views`]: [`reads`]: views, the lobby, the log, replays, the
//! export; [`live`]: streams), and
//! the write path they share ([`attempts`]: decide, append through the group commit
//! ([`commits`]), retry on a lost race; [`cache`] and [`versions`]: this instance's decoded
//! states, checked against the store). [`notices`] says what a write tells the accounts bound to
//! the game's seats; [`credentials`] who presents a game's token; [`idempotency`] how a retried
//! request gets its first answer.

pub mod attempts;
pub mod cache;
pub mod commits;
pub mod creation;
pub mod credentials;
pub mod idempotency;
pub mod live;
pub mod notices;
pub mod reads;
pub mod timeouts;
pub mod versions;
pub mod writes;

use std::sync::Arc;

use uuid::Uuid;

use crate::engine::{RuleError, Rules, RulesInput, State, Timestamp};
use crate::metrics::GameMetrics;
use crate::service::batches::Batches;
use crate::service::{Accounts, Clock, GameEnds, ServiceError, Settings};
use crate::store::{EventStore, GameRecord};
use cache::StateCache;
use commits::GroupCommit;
use live::SharedReads;
use versions::VersionRead;

/// The games: every use case of one game, over the store.
#[derive(Clone)]
pub struct Games {
    store: Arc<dyn EventStore>,
    metrics: GameMetrics,
    clock: Clock,
    accounts: Accounts,
    ends: Arc<GameEnds>,
    default_turn_timeout_s: Option<u32>,
    match_turn_timeout_s: u32,
    cache: Arc<StateCache>,
    versions: Arc<Batches<VersionRead>>,
    commits: Arc<Batches<GroupCommit>>,
    shared_reads: Arc<SharedReads>,
}

/// The reads of games: views, the lobby, pages of the log, replays, the export, live streams.
#[derive(Clone)]
pub struct Views {
    games: Games,
}

impl Views {
    /// The reads of `games`.
    pub fn new(games: Games) -> Self {
        Views { games }
    }
}

impl Games {
    /// The games over `store`, counted in `metrics`, their players' accounts found by
    /// `accounts`, their ends told to `ends`.
    pub fn new(
        store: Arc<dyn EventStore>,
        metrics: GameMetrics,
        accounts: Accounts,
        ends: Arc<GameEnds>,
        settings: &Settings,
    ) -> Self {
        Games {
            versions: Arc::new(Batches::new(VersionRead(Arc::clone(&store)))),
            commits: Arc::new(Batches::new(GroupCommit(Arc::clone(&store)))),
            store,
            metrics,
            clock: settings.clock.clone(),
            accounts,
            ends,
            default_turn_timeout_s: settings.default_turn_timeout_s,
            match_turn_timeout_s: settings.match_turn_timeout_s,
            cache: Arc::new(StateCache::new(settings.cached_games)),
            shared_reads: Arc::default(),
        }
    }

    /// The counters of games and moves.
    pub fn metrics(&self) -> &GameMetrics {
        &self.metrics
    }

    /// The accounts, as the games find their players.
    pub fn accounts(&self) -> &Accounts {
        &self.accounts
    }

    /// The store, for the reads of the other capabilities.
    pub fn store(&self) -> &Arc<dyn EventStore> {
        &self.store
    }

    /// Game `id`, if `token` (when given) is one this game knows: a seat's, the host's or a
    /// seated account's.
    pub async fn load_readable(
        &self,
        id: Uuid,
        token: Option<&str>,
    ) -> Result<(GameRecord, State), ServiceError> {
        let (record, state) = self.load(id).await?;
        self.accounts.credential(&record, token).await?;
        Ok((record, state))
    }

    /// The turn timeout of a rated, seek or challenge game whose creator sets none.
    fn match_turn_timeout_s(&self) -> u32 {
        self.default_turn_timeout_s
            .unwrap_or(self.match_turn_timeout_s)
    }

    /// The rules of a rated, seek or challenge game of `seats` asked as `rules`: such a game
    /// always has a clock, or the losing side could stall it forever and dodge the loss, so a
    /// `turn_timeout_s` of null is refused (422 `invalid_game_options`).
    pub fn match_rules(&self, rules: &RulesInput, seats: u8) -> Result<Rules, ServiceError> {
        let rules = rules.resolve_with(seats, Some(self.match_turn_timeout_s()))?;
        if rules.turn_timeout_s.is_none() {
            return Err(RuleError::InvalidGameOptions(
                "a rated game, and the game of a seek or a challenge, has a turn timeout: leave \
                 out rules.turn_timeout_s, or give a number of seconds"
                    .to_owned(),
            )
            .into());
        }
        Ok(rules)
    }

    /// `rules` with a clock: the match turn timeout where they had none (a rematch of a game
    /// created before every rated game had one).
    pub fn clocked(&self, rules: Rules) -> Rules {
        Rules {
            turn_timeout_s: rules.turn_timeout_s.or(Some(self.match_turn_timeout_s())),
            ..rules
        }
    }

    /// The time of an entry written now.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }
}
