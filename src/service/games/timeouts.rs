//! Abandoned games: a seat handed to the greedy bot by its player ([`GameService::leave`]) or
//! for a turn timeout, and the sweep every instance runs ([`GameService::sweep`]) that finds the
//! turn timeouts due and the waiting games that expired.
//!
//! Each takeover goes through the same conditional write as a move ([`super::attempts`]: decide,
//! append at the version read), so when several instances sweep at once, one appends and the
//! others' appends fail on the version, re-read the game and find nothing left to do: no seat is
//! taken twice. The deadlines are stored with each game (`deadline_at`), so a timeout that an
//! instance did not get to before it died is found by the next sweep of any instance.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use uuid::Uuid;

use crate::engine::{self, Command, State, Timestamp, View, Viewer};
use crate::service::attempts::{Advanced, Attempt, advance};
use crate::service::credentials::Credential;
use crate::service::{Answer, GameService, IdempotencyKey, ParsedLater, ServiceError};
use crate::store::{GameRecord, StoreError};

/// Games one sweep handles of each kind, at most: the next sweep takes the rest.
const SWEEP_BATCH: i64 = 100;

/// What one sweep did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Swept {
    /// Seats the greedy bot took for a turn timeout.
    pub seats_taken: usize,
    /// Waiting games cancelled for want of players.
    pub games_cancelled: usize,
    /// Rated games' ends applied that no write had applied (after a crash or a failure).
    pub ratings_applied: usize,
    /// Open challenges marked expired.
    pub challenges_expired: u64,
    /// Seeks whose wait for bots ended, matched with them.
    pub seeks_filled: u64,
    /// Seeks past their expiry, marked expired.
    pub seeks_expired: u64,
}

impl GameService {
    /// The player of `token`'s seat leaves a running game: the greedy bot takes the seat
    /// (`bot_took_seat`, reason `left`) and plays every turn it owes at once. Answers the
    /// seat's view, which the token still reads. A retried request with the same idempotency
    /// key gets the stored answer.
    pub async fn leave(
        &self,
        id: Uuid,
        token: Option<&str>,
        idempotency: ParsedLater<Option<IdempotencyKey>>,
    ) -> Result<Answer<View>, ServiceError> {
        self.write(id, token, async |record, mut state, credential| {
            let Credential::Seat(seat) = credential else {
                return Err(ServiceError::Unauthorized(
                    "Leaving needs the seat's token: Authorization: Bearer <token>.",
                ));
            };
            let idempotency = idempotency.open()?;
            let key = idempotency.as_ref();
            if let Some(stored) = self.stored_answer(id, i32::from(seat), key).await? {
                return Ok(Attempt::Done(Answer::Replayed(stored)));
            }
            let at = self.now();
            let advanced = advance(&mut state, record, &Command::Leave { seat }, at)?;
            let view = engine::view(&state, Viewer::Seat(seat));
            let stored = key.map(|key| key.record(i32::from(seat), 200, &view));
            Ok(Attempt::write(state, advanced, at, Answer::Fresh(view)).storing(stored))
        })
        .await
    }

    /// Hands every seat of game `id` whose turn timeout has passed to the greedy bot, which
    /// plays the turns it owes; returns how many seats it took (0 when the game moved on, or
    /// another instance took them first).
    pub async fn take_overdue_seats(&self, id: Uuid) -> Result<usize, ServiceError> {
        // The clock is moved in, not borrowed through `self`: the sweeper's task must be `Send`,
        // which an async closure borrowing `self` is not.
        let clock = self.clock.clone();
        // A kept state that is stale could find nothing overdue (a game this instance last saw
        // waiting) and never be corrected, since finding nothing writes nothing: the sweeper
        // decides on the game as the database has it.
        self.cache.forget(id);
        self.write(id, None, async move |record, mut state, _| {
            let at = clock.now();
            let (taken, advanced) = take_overdue(record, &mut state, at)?;
            if taken == 0 {
                return Ok(Attempt::Done(0));
            }
            Ok(Attempt::write(state, advanced, at, taken))
        })
        .await
    }

    /// One pass of the sweeper: the turn timeouts due now, then the waiting games created more
    /// than `waiting_expiry` ago, cancelled as their host would (404 from then on, out of the
    /// lobby, their streams closed), then the rated games' ends still to apply, the
    /// challenges past their expiry, the seeks whose wait for bots is over and the seeks past
    /// their expiry. A game that
    /// fails is logged and left to the next pass.
    pub async fn sweep(&self, waiting_expiry: Duration) -> Result<Swept, ServiceError> {
        let now = self.now();
        let mut swept = Swept::default();
        for id in self.store.overdue_games(now, SWEEP_BATCH).await? {
            match self.take_overdue_seats(id).await {
                Ok(taken) => {
                    self.backoff.succeeded(id);
                    swept.seats_taken += taken;
                }
                Err(error) => self.back_off(id, now, &error).await,
            }
        }
        let expiry = i64::try_from(waiting_expiry.as_micros()).unwrap_or(i64::MAX);
        let created_before = Timestamp(now.0.saturating_sub(expiry));
        for id in self
            .store
            .expired_waiting_games(created_before, SWEEP_BATCH)
            .await?
        {
            match self.store.cancel_game(id).await {
                Ok(()) => {
                    self.metrics.waiting_games_expired.inc();
                    swept.games_cancelled += 1;
                }
                // The last seat was taken, or the host cancelled, since the query.
                Err(StoreError::NotWaiting | StoreError::NotFound) => {}
                Err(error) => {
                    tracing::warn!(game = %id, %error, "could not cancel an expired waiting game")
                }
            }
        }
        swept.ratings_applied = self.apply_due_ratings().await?;
        swept.challenges_expired = self.expire_challenges().await?;
        swept.seeks_filled = self.fill_due_seeks().await?;
        swept.seeks_expired = self.expire_seeks().await?;
        Ok(swept)
    }
}

impl GameService {
    /// Moves the deadline of a game whose takeover failed past the next passes (see [`Backoff`]),
    /// so that the games due after it get their turn.
    async fn back_off(&self, id: Uuid, now: Timestamp, error: &ServiceError) {
        let wait = self.backoff.failed(id);
        tracing::warn!(game = %id, %error, ?wait, "could not take overdue seats: tried again later");
        let micros = i64::try_from(wait.as_micros()).unwrap_or(i64::MAX);
        let until = Timestamp(now.0.saturating_add(micros));
        if let Err(error) = self.store.postpone_deadline(id, now, until).await {
            tracing::warn!(game = %id, %error, "could not postpone a failing game's deadline");
        }
    }
}

/// The waits of games whose takeover keeps failing: the first [`BACKOFF_FIRST`], doubled at each
/// failure in a row, at most [`BACKOFF_MAX`]. Only a hint kept by this instance: another instance
/// starts from the first wait, and the database decides what is due.
#[derive(Default)]
pub struct Backoff {
    failures: Mutex<HashMap<Uuid, u32>>,
}

/// The wait after a game's first failed takeover.
const BACKOFF_FIRST: Duration = Duration::from_secs(10);
/// The longest wait.
const BACKOFF_MAX: Duration = Duration::from_secs(3600);
/// Games whose failures one instance counts at most; a game past them waits the first wait.
const BACKOFF_GAMES: usize = 10_000;

impl Backoff {
    /// The wait after one more failure of game `id`.
    fn failed(&self, id: Uuid) -> Duration {
        let mut failures = self.lock();
        let count = if failures.len() < BACKOFF_GAMES || failures.contains_key(&id) {
            let count = failures.entry(id).or_default();
            *count = count.saturating_add(1);
            *count
        } else {
            1
        };
        BACKOFF_FIRST
            .saturating_mul(1 << (count - 1).min(16))
            .min(BACKOFF_MAX)
    }

    /// Game `id`'s takeover went through (or found nothing due): its next failure starts over.
    fn succeeded(&self, id: Uuid) {
        self.lock().remove(&id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Uuid, u32>> {
        self.failures
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Takes every seat of `state` overdue at `at`, one after the other, each followed by the bot
/// turns it hands over (during the initial reveal several seats may be overdue at once).
fn take_overdue(
    record: &GameRecord,
    state: &mut State,
    at: Timestamp,
) -> Result<(usize, Advanced), ServiceError> {
    let secrets = record.secrets()?;
    let mut advanced = Advanced::default();
    let mut taken = 0;
    while let Some(&seat) = engine::overdue_seats(state, at).first() {
        advanced.advance(state, &secrets, &Command::TimeOut { seat, now: at }, at)?;
        taken += 1;
    }
    Ok((taken, advanced))
}
