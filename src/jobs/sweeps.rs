//! The periodic jobs that find what is due in the database and act on it, each on its own: turn
//! timeouts, expired waiting games, rated games' ends, expired challenges, seeks due for bots
//! and expired seeks. Every instance runs them: the conditional writes settle which instance
//! acts on a row (see `service::games::timeouts`), and a row one did not get to is found by the
//! next pass of any.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use uuid::Uuid;

use crate::engine::Timestamp;
use crate::jobs::{JobSettings, Jobs};
use crate::service::retry::Backoff;
use crate::service::{Games, ServiceError, Services};

/// Rows one pass handles of each kind, at most: the next pass takes the rest.
const SWEEP_BATCH: i64 = 100;

/// The waits of a game whose takeover keeps failing.
const FAILING_GAME: Backoff = Backoff {
    first: Duration::from_secs(10),
    max: Duration::from_secs(3600),
};

/// Games whose failures one instance counts at most; a game past them waits the first wait.
const FAILING_GAMES_KEPT: usize = 10_000;

/// Starts the sweeps of `services` as `settings` time them.
pub fn start(jobs: &mut Jobs, services: &Services, settings: &JobSettings) {
    let period = settings.sweep_interval;
    let timeouts = Arc::new(Timeouts {
        games: services.games.clone(),
        failures: Mutex::default(),
    });
    jobs.every("turn timeouts", period, None, move || {
        let timeouts = Arc::clone(&timeouts);
        async move { timeouts.pass().await }
    });
    let games = services.games.clone();
    let waiting_expiry = settings.waiting_expiry;
    jobs.every("waiting games", period, None, move || {
        let games = games.clone();
        async move {
            games
                .expire_waiting_games(waiting_expiry, SWEEP_BATCH)
                .await
        }
    });
    let ratings = services.ratings.clone();
    let rated = Some(Arc::clone(&services.ends.ratings));
    jobs.every("ratings", period, rated, move || {
        let ratings = ratings.clone();
        async move { ratings.apply_due_ratings().await }
    });
    let challenges = services.challenges.clone();
    jobs.every("challenges", period, None, move || {
        let challenges = challenges.clone();
        async move { challenges.expire_challenges().await }
    });
    let seeks = services.seeks.clone();
    jobs.every("seek bots", period, None, move || {
        let seeks = seeks.clone();
        async move { seeks.fill_due_seeks().await }
    });
    let seeks = services.seeks.clone();
    jobs.every("seek expiry", period, None, move || {
        let seeks = seeks.clone();
        async move { seeks.expire_seeks().await }
    });
}

/// The turn timeouts due, and the games whose takeover keeps failing.
struct Timeouts {
    games: Games,
    /// Failures in a row of each game's takeover: only a hint kept by this instance (another
    /// instance starts from the first wait, and the database decides what is due).
    failures: Mutex<HashMap<Uuid, u32>>,
}

impl Timeouts {
    /// Hands the overdue seats of the games due to the bot; answers how many seats it took.
    async fn pass(&self) -> Result<u64, ServiceError> {
        let now = self.games.now();
        let store = self.games.store();
        let mut taken = 0;
        for id in store.overdue_games(now, SWEEP_BATCH).await? {
            match self.games.take_overdue_seats(id).await {
                Ok(seats) => {
                    self.lock().remove(&id);
                    taken += seats as u64;
                }
                Err(error) => self.back_off(id, now, &error).await,
            }
        }
        Ok(taken)
    }

    /// Moves the deadline of a game whose takeover failed past the next passes, so that the
    /// games due after it get their turn.
    async fn back_off(&self, id: Uuid, now: Timestamp, error: &ServiceError) {
        let wait = FAILING_GAME.after(self.failed(id));
        tracing::warn!(game = %id, %error, ?wait, "could not take overdue seats: tried again later");
        let micros = i64::try_from(wait.as_micros()).unwrap_or(i64::MAX);
        let until = Timestamp(now.0.saturating_add(micros));
        let store = self.games.store();
        if let Err(error) = store.postpone_deadline(id, now, until).await {
            tracing::warn!(game = %id, %error, "could not postpone a failing game's deadline");
        }
    }

    /// One more failure of game `id`: how many in a row.
    fn failed(&self, id: Uuid) -> u32 {
        let mut failures = self.lock();
        if failures.len() >= FAILING_GAMES_KEPT && !failures.contains_key(&id) {
            return 1;
        }
        let count = failures.entry(id).or_default();
        *count = count.saturating_add(1);
        *count
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Uuid, u32>> {
        self.failures
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
