//! The write path every use case that changes a game shares: an attempt decides on the game as
//! it is (its events, bot turns included, and the game row after them), the group commit appends
//! them at the version the attempt read, and a lost race runs the attempt again on the fresh
//! game. Concurrency is settled by the database, never by this process's memory.

use std::sync::Arc;
use std::time::Duration;

use uuid::Uuid;

use crate::engine::{self, Command, Event, RuleError, Secrets, State, Status, Timestamp};
use crate::service::cache::CachedGame;
use crate::service::credentials::{Credential, random_bytes};
use crate::service::notices::notices;
use crate::service::{GameService, ServiceError};
use crate::store::{
    Append, Entry, GameIdempotency, GameRecord, GameUpdate, NewSeat, Snapshot, StoreError,
};

/// How many times a write is attempted before a lost race is reported (409 `write_conflict`).
const MAX_ATTEMPTS: usize = 12;

/// What one attempt of a write decided.
pub(super) enum Attempt<T> {
    /// Answer without writing anything: a stored answer replayed, or nothing left to do.
    Done(T),
    /// Append these events, then answer.
    Write(Box<Write<T>>),
}

/// Events to append with the game's new state, and the answer once they are stored.
pub(super) struct Write<T> {
    events: Vec<Event>,
    at: Timestamp,
    update: GameUpdate,
    idempotency: Option<GameIdempotency>,
    /// The game's state after the events, kept in the cache once they are stored.
    after: State,
    answer: T,
}

impl<T> Attempt<T> {
    /// The append of what `advanced` did at `at`, which brought the game to `state`, answered
    /// with `answer` once stored.
    pub(super) fn write(state: State, advanced: Advanced, at: Timestamp, answer: T) -> Self {
        Attempt::Write(Box::new(Write {
            update: GameUpdate::after(&state, advanced.snapshots),
            events: advanced.events,
            at,
            idempotency: None,
            after: state,
            answer,
        }))
    }

    /// This write, which also takes a seat.
    pub(super) fn seating(mut self, seat: NewSeat) -> Self {
        if let Attempt::Write(write) = &mut self {
            write.update.new_seats.push(seat);
        }
        self
    }

    /// This write, which also stores its answer for retries of the same request.
    pub(super) fn storing(mut self, response: Option<GameIdempotency>) -> Self {
        if let Attempt::Write(write) = &mut self {
            write.idempotency = response;
        }
        self
    }
}

/// What a command and the bot turns it hands over did: their events, and the states to keep as
/// snapshots after those that deal a hole, so that a replay never re-decides more than about a
/// hole.
#[derive(Default)]
pub(super) struct Advanced {
    events: Vec<Event>,
    snapshots: Vec<Snapshot>,
}

impl Advanced {
    /// The events and snapshots recorded.
    pub(super) fn into_parts(self) -> (Vec<Event>, Vec<Snapshot>) {
        (self.events, self.snapshots)
    }

    fn record(&mut self, state: &State, events: Vec<Event>) {
        if events
            .iter()
            .any(|event| matches!(event, Event::HoleDealt { .. }))
        {
            self.snapshots.push(Snapshot::of(state));
        }
        self.events.extend(events);
    }

    /// Decides `command` on `state` with the game's `secrets`, and plays every bot turn it hands
    /// over, adding their events to these.
    pub(super) fn advance(
        &mut self,
        state: &mut State,
        secrets: &Secrets,
        command: &Command,
        at: Timestamp,
    ) -> Result<(), ServiceError> {
        let events = engine::execute(state, command, secrets, at)?;
        self.record(state, events);
        // A bot only plays legal moves: a refusal is our bug, not the caller's mistake. Its code
        // only: the sentence may name the card the bot holds.
        let bot_refused = |error: RuleError| {
            ServiceError::Internal(format!("a bot's move was refused: {}", error.code()))
        };
        while let Some(events) = engine::play_bot_move(state, secrets, at).map_err(bot_refused)? {
            self.record(state, events);
        }
        Ok(())
    }
}

/// Decides `command` on `state` and plays every bot turn it hands over.
pub(super) fn advance(
    state: &mut State,
    record: &GameRecord,
    command: &Command,
    at: Timestamp,
) -> Result<Advanced, ServiceError> {
    let secrets = record.secrets()?;
    let mut advanced = Advanced::default();
    advanced.advance(state, &secrets, command, at)?;
    Ok(advanced)
}

impl GameService {
    /// Runs `attempt` on the game as it is now and appends what it decided with the version it
    /// read. When another writer got there first, the attempt runs again on the fresh state (the
    /// one a write of this instance left, if it is newer, else a load), where the stored answer
    /// of a concurrent retry, or the new turn, decides.
    ///
    /// The first attempt starts from this instance's cached state, if any, without reading the
    /// game: the append is written only if the game is still at that state's version. What an
    /// attempt on a cached state refuses (a move out of turn, a failed `If-Match`, a token the
    /// state does not know) may be the staleness of the state speaking, so it is decided again on
    /// a fresh load before the caller hears of it.
    pub(super) async fn write<T>(
        &self,
        id: Uuid,
        token: Option<&str>,
        mut attempt: impl AsyncFnMut(&GameRecord, State, Credential) -> Result<Attempt<T>, ServiceError>,
    ) -> Result<T, ServiceError> {
        let mut cached = self.cache.latest(id);
        for round in 0..MAX_ATTEMPTS {
            let unchecked = cached.is_some();
            let game = match cached.take() {
                Some(game) => game,
                None => self.load_cached(id).await?,
            };
            let decided = match self.credential(&game.record, token).await {
                Ok(credential) => attempt(&game.record, game.state.clone(), credential).await,
                Err(error) => Err(error),
            };
            let write = match decided {
                Ok(Attempt::Done(answer)) => return Ok(answer),
                Ok(Attempt::Write(write)) => write,
                Err(_) if unchecked => continue,
                Err(error) => return Err(error),
            };
            match self.commit(&game, *write).await {
                Ok(answer) => return Ok(answer),
                // The cached state was stale: the state another write of this instance left,
                // if it is newer (both seats reveal at once), else a fresh load, decides at once.
                Err(StoreError::Conflict) if unchecked => {
                    self.metrics.conflicts.inc();
                    cached = self
                        .cache
                        .latest(id)
                        .filter(|newer| newer.record.version > game.record.version);
                }
                Err(StoreError::Conflict) => {
                    self.metrics.conflicts.inc();
                    // Spread the retries of racing writers so that they do not collide again.
                    let jitter = u64::from(random_bytes::<1>()[0] % 8);
                    tokio::time::sleep(Duration::from_millis(2 * round as u64 + jitter)).await;
                }
                Err(error) => return Err(error.into()),
            }
        }
        Err(StoreError::Conflict.into())
    }

    /// Appends `write` to `game` through the group commit, with what it tells the accounts bound
    /// to the game's seats; once it is stored, hands its entries to this instance's streams of
    /// the game, keeps the game as it left it, counts its events,
    /// queues the audit of a game it finished, applies its end to the ratings if it is rated, and
    /// answers.
    async fn commit<T>(&self, game: &CachedGame, mut write: Write<T>) -> Result<T, StoreError> {
        let mut record = game.record.clone();
        record.status.clone_from(&write.update.status);
        for seat in &write.update.new_seats {
            record.players += 1;
            record.seat_tokens.push((seat.seat, seat.token_hash));
            record.seat_tokens.sort_by_key(|(seat, _)| *seat);
            if let Some(account) = &seat.account {
                record.accounts.seats.push((seat.seat, account.clone()));
            }
        }
        (write.update.account_games, write.update.account_events) = notices(
            &record.accounts.seats,
            &game.state,
            &write.events,
            write.at,
            &write.after,
        );
        let append = Append::new(
            record.id,
            game.record.head(),
            &write.events,
            write.at,
            write.update,
            write.idempotency,
        );
        let version = game.record.version + write.events.len() as i64;
        let own = self.store.changes().expect_own(record.id, version);
        let entries = self.commits.submit(append).await?;
        self.hand_over(record.id, &entries, &write.events, write.after.status);
        own.handed_over();
        self.count(&write.events);
        if write
            .events
            .iter()
            .any(|event| matches!(event, Event::GameEnded { .. }))
        {
            self.audits.finished(record.id);
            self.analyses.queue(record.id);
            if write.after.rated {
                self.rate_ended_game(record.id).await;
            }
        }
        self.remember(record, &entries, write.after);
        Ok(write.answer)
    }

    /// Gives the entries just committed to game `id` (with `events`, the engine's events they
    /// record, so that no stream decodes them again) to this instance's streams of it, and wakes
    /// them: they need not wait for the append's notification, nor read what it announces.
    fn hand_over(&self, id: Uuid, entries: &[Entry], events: &[Event], status: Status) {
        let Some(last) = entries.last() else {
            return;
        };
        let changes = self.store.changes();
        self.shared_reads
            .publish(id, entries, events, status, changes.current(id));
        changes.wake_at(id, last.seq);
    }

    /// Keeps the game as a write left it: `record` (already with its new status and seat), moved
    /// on past `entries`, and its state `after` them.
    fn remember(&self, mut record: GameRecord, entries: &[Entry], after: State) {
        if let Some(last) = entries.last() {
            let Ok(Ok(hash)) = hex::decode(&last.hash).map(<[u8; 32]>::try_from) else {
                self.cache.forget(record.id);
                return;
            };
            record.version = last.seq;
            record.head_hash = hash;
        }
        self.cache.put(Arc::new(CachedGame {
            record,
            state: after,
        }));
    }

    fn count(&self, events: &[Event]) {
        let moves = |kind: &str| self.metrics.moves.with_label_values(&[kind]).inc();
        for event in events {
            match event {
                Event::HoleDealt { hole: 1, .. } => self.metrics.games_started.inc(),
                Event::GameEnded { .. } => self.metrics.games_finished.inc(),
                Event::CardsRevealed { .. } => moves("reveal"),
                Event::CardDrawn { .. } => moves("draw"),
                Event::CardSwapped { .. } => moves("swap"),
                Event::CardDiscarded { .. } => moves("discard"),
                Event::CardFlipped { .. } => moves("flip"),
                Event::FlipDeclined { .. } => moves("pass"),
                Event::Knocked { .. } => moves("knock"),
                Event::BotTookSeat { reason, .. } => self
                    .metrics
                    .seats_taken_by_bots
                    .with_label_values(&[reason.name()])
                    .inc(),
                _ => {}
            }
        }
    }
}
