//! Abandoned seats: a seat handed to the greedy bot by its player ([`Games::leave`]) or for a
//! turn timeout ([`Games::take_overdue_seats`], which the sweep job of every instance calls for
//! the games whose deadline passed).
//!
//! Each takeover goes through the same conditional write as a move ([`super::attempts`]: decide,
//! append at the version read), so when several instances sweep at once, one appends and the
//! others' appends fail on the version, re-read the game and find nothing left to do: no seat is
//! taken twice. The deadlines are stored with each game (`deadline_at`), so a timeout that an
//! instance did not get to before it died is found by the next sweep of any instance.

use std::time::Duration;

use uuid::Uuid;

use crate::engine::{self, Command, Secrets, State, Timestamp, View, Viewer};
use crate::service::games::attempts::{Advanced, Attempt, advance, off_the_workers};
use crate::service::games::credentials::Credential;
use crate::service::{Answer, Games, IdempotencyKey, ParsedLater, ServiceError};
use crate::store::StoreError;

impl Games {
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
            let advanced = advance(&mut state, record, &Command::Leave { seat }, at).await?;
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
        // The clock is moved in, not borrowed through `self`: the turn timeouts job's task must
        // be `Send`, which an async closure borrowing `self` is not.
        let clock = self.clock.clone();
        // A kept state that is stale could find nothing overdue (a game this instance last saw
        // waiting) and never be corrected, since finding nothing writes nothing: the job
        // decides on the game as the database has it.
        self.cache.forget(id);
        self.write(id, None, async move |record, mut state, _| {
            let at = clock.now();
            let secrets = record.secrets()?;
            let (taken, advanced) = off_the_workers(&mut state, false, move |state| {
                take_overdue(&secrets, state, at)
            })
            .await?;
            if taken == 0 {
                return Ok(Attempt::Done(0));
            }
            Ok(Attempt::write(state, advanced, at, taken))
        })
        .await
    }
}

impl Games {
    /// Cancels, as their host would (404 from then on, out of the lobby, their streams closed),
    /// up to `limit` waiting games created more than `expiry` ago; answers how many.
    pub async fn expire_waiting_games(
        &self,
        expiry: Duration,
        limit: i64,
    ) -> Result<u64, ServiceError> {
        let expiry = i64::try_from(expiry.as_micros()).unwrap_or(i64::MAX);
        let created_before = Timestamp(self.now().0.saturating_sub(expiry));
        let mut cancelled = 0;
        for id in self
            .store
            .expired_waiting_games(created_before, limit)
            .await?
        {
            match self.store.cancel_game(id).await {
                Ok(()) => {
                    self.metrics.waiting_games_expired.inc();
                    cancelled += 1;
                }
                // The last seat was taken, or the host cancelled, since the query.
                Err(StoreError::NotWaiting | StoreError::NotFound) => {}
                Err(error) => {
                    tracing::warn!(game = %id, %error, "could not cancel an expired waiting game")
                }
            }
        }
        Ok(cancelled)
    }
}

/// Takes every seat of `state` overdue at `at`, one after the other, each followed by the bot
/// turns it hands over (during the initial reveal several seats may be overdue at once).
fn take_overdue(
    secrets: &Secrets,
    state: &mut State,
    at: Timestamp,
) -> Result<(usize, Advanced), ServiceError> {
    let mut advanced = Advanced::default();
    let mut taken = 0;
    while let Some(&seat) = engine::overdue_seats(state, at).first() {
        advanced.advance(state, secrets, &Command::TimeOut { seat, now: at }, at)?;
        taken += 1;
    }
    Ok((taken, advanced))
}
