//! This instance's cache of decoded game states, keyed by game id and version: a speed-up that
//! is never trusted; and how a use case gets a game, through it or from the store.
//!
//! A view uses a cached state only after the database said that the game is at exactly that
//! version (see [`Games::current`](super::Games)); a write may start from one
//! unchecked, because the store appends only if the game is still at the version the state was
//! decided on, and a state found stale is reloaded. So another instance's writes cost this one a
//! reload or a retry, never a wrong answer. What is cached is the game as a whole: each viewer's
//! redaction is applied to it after the check, never stored.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use uuid::Uuid;

use crate::engine::State;
use crate::service::{Games, ServiceError};
use crate::store::GameRecord;

/// A game at one version: its row (without the projection, decoded into `state`) and its state.
#[derive(Debug)]
pub struct CachedGame {
    pub record: GameRecord,
    pub state: State,
}

/// Decoded states of up to `capacity` games, the least recently used ones evicted first.
pub struct StateCache {
    capacity: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Counts uses, so that each entry knows when it was last used.
    tick: u64,
    games: HashMap<Uuid, (u64, Arc<CachedGame>)>,
}

impl StateCache {
    /// A cache of up to `capacity` games (0 keeps none).
    pub fn new(capacity: usize) -> Self {
        StateCache {
            capacity,
            inner: Mutex::default(),
        }
    }

    /// The cached state of game `id`, whatever its version (a write checks it as it appends).
    pub fn latest(&self, id: Uuid) -> Option<Arc<CachedGame>> {
        let mut inner = self.lock();
        inner.tick += 1;
        let tick = inner.tick;
        let (used, game) = inner.games.get_mut(&id)?;
        *used = tick;
        Some(Arc::clone(game))
    }

    /// The cached state of game `id` if it is at `version`.
    pub fn at(&self, id: Uuid, version: i64) -> Option<Arc<CachedGame>> {
        self.latest(id)
            .filter(|game| game.record.version == version)
    }

    /// Keeps `game`, unless a later version of it is kept already (a slower request of another
    /// task must not bring back an older state).
    pub fn put(&self, game: Arc<CachedGame>) {
        if self.capacity == 0 {
            return;
        }
        let mut inner = self.lock();
        inner.tick += 1;
        let tick = inner.tick;
        let id = game.record.id;
        match inner.games.get_mut(&id) {
            Some((_, kept)) if kept.record.version > game.record.version => {}
            Some(entry) => *entry = (tick, game),
            None => {
                inner.games.insert(id, (tick, game));
                if inner.games.len() > self.capacity {
                    inner.evict(self.capacity / 2);
                }
            }
        }
    }

    /// Forgets game `id`: it is gone, or what is kept was found stale.
    pub fn forget(&self, id: Uuid) {
        self.lock().games.remove(&id);
    }

    /// How many games are kept.
    pub fn len(&self) -> usize {
        self.lock().games.len()
    }

    /// Whether no game is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // The map stays consistent even if a holder panicked: every change is one call.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Inner {
    /// Keeps the `keep` most recently used games. Evicting half at once makes the scan's cost
    /// one step per insertion on average.
    fn evict(&mut self, keep: usize) {
        let mut ticks: Vec<u64> = self.games.values().map(|(used, _)| *used).collect();
        let drop = ticks.len().saturating_sub(keep);
        if drop == 0 {
            return;
        }
        let (_, newest_dropped, _) = ticks.select_nth_unstable(drop - 1);
        let threshold = *newest_dropped;
        self.games.retain(|_, (used, _)| *used > threshold);
    }
}

/// How the use cases get a game: from this instance's cache when it is current, else from the
/// store.
impl Games {
    /// Loads a game or reports `not_found`.
    pub(crate) async fn load(&self, id: Uuid) -> Result<(GameRecord, State), ServiceError> {
        let mut record = self
            .store
            .load_game(id)
            .await?
            .ok_or(ServiceError::NotFound("There is no such game."))?;
        let state = record.take_state()?;
        Ok((record, state))
    }

    /// Loads a game and keeps it in this instance's cache.
    pub(super) async fn load_cached(&self, id: Uuid) -> Result<Arc<CachedGame>, ServiceError> {
        match self.load(id).await {
            Ok((record, state)) => {
                let game = Arc::new(CachedGame { record, state });
                self.cache.put(Arc::clone(&game));
                Ok(game)
            }
            Err(error) => {
                self.cache.forget(id);
                Err(error)
            }
        }
    }

    /// The game as the database has it now: a read of its version (shared with the concurrent
    /// requests', see [`super::versions`]), then the cached state if it is at that version, else
    /// a load.
    pub(super) async fn current(&self, id: Uuid) -> Result<Arc<CachedGame>, ServiceError> {
        let Some(version) = self.versions.submit(id).await? else {
            self.cache.forget(id);
            return Err(ServiceError::NotFound("There is no such game."));
        };
        match self.cache.at(id, version) {
            Some(game) => Ok(game),
            None => self.load_cached(id).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Rules, Status, Timestamp};

    fn game(n: u128, version: i64) -> Arc<CachedGame> {
        Arc::new(CachedGame {
            record: GameRecord {
                id: Uuid::from_u128(n),
                created_at: Timestamp::default(),
                status: Status::Playing,
                version,
                seats: 2,
                holes: 1,
                players: 2,
                rules: Rules::default(),
                commitment: String::new(),
                server_seed: [0; 32],
                host_token_hash: [0; 32],
                private: false,
                stacked: false,
                decks: None,
                accounts: Default::default(),
                projection: Default::default(),
                head_hash: [0; 32],
                audit: None,
                seat_tokens: Vec::new(),
            },
            state: State::default(),
        })
    }

    #[test]
    fn a_state_is_used_only_at_its_version_and_never_replaced_by_an_older_one() {
        let cache = StateCache::new(8);
        cache.put(game(1, 5));
        assert!(cache.at(Uuid::from_u128(1), 5).is_some());
        assert!(cache.at(Uuid::from_u128(1), 6).is_none());
        cache.put(game(1, 7));
        cache.put(game(1, 6));
        assert_eq!(cache.latest(Uuid::from_u128(1)).unwrap().record.version, 7);
        cache.forget(Uuid::from_u128(1));
        assert!(cache.latest(Uuid::from_u128(1)).is_none());
    }

    #[test]
    fn the_cache_stays_within_its_capacity_and_keeps_the_games_in_use() {
        let cache = StateCache::new(10);
        for n in 0..10 {
            cache.put(game(n, 1));
        }
        // Game 0 is in use: it survives the eviction that the eleventh game causes.
        assert!(cache.latest(Uuid::from_u128(0)).is_some());
        cache.put(game(10, 1));
        assert!(cache.len() <= 10);
        assert!(cache.latest(Uuid::from_u128(0)).is_some());
        assert!(cache.latest(Uuid::from_u128(10)).is_some());
        assert!(cache.latest(Uuid::from_u128(1)).is_none());
        for n in 11..1000 {
            cache.put(game(n, 1));
        }
        assert!(cache.len() <= 10);
        assert!(StateCache::new(0).is_empty());
    }
}
