//! The write path every use case that changes a game shares: an attempt decides on the game as
//! it is (its events, bot turns included, and the game row after them), the group commit appends
//! them at the version the attempt read, and a lost race runs the attempt again on the fresh
//! game. Concurrency is settled by the database, never by this process's memory.

use std::sync::Arc;

use uuid::Uuid;

use tokio::sync::Semaphore;

use crate::engine::{self, BotKind, Command, Event, RuleError, Secrets, State, Status, Timestamp};
use crate::service::games::cache::CachedGame;
use crate::service::games::credentials::Credential;
use crate::service::games::notices::notices;
use crate::service::retry::{self, MAX_ATTEMPTS};
use crate::service::{Games, ServiceError};
use crate::store::codec::projection;
use crate::store::{
    Append, Entry, GameIdempotency, GameRecord, GameUpdate, NewSeat, Snapshot, StoreError,
};

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
            update: update_after(&state, advanced.snapshots),
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

/// The game row once the game is at `state`, keeping `snapshots` beside it.
pub(crate) fn update_after(state: &State, snapshots: Vec<Snapshot>) -> GameUpdate {
    GameUpdate {
        status: state.status,
        projection: projection(state),
        new_seats: Vec::new(),
        snapshots,
        deadline_at: engine::turn_deadline(state),
        account_games: Vec::new(),
        account_events: Vec::new(),
    }
}

/// What a command and the bot turns it hands over did: their events, and the states to keep as
/// snapshots after those that deal a hole, so that a replay never re-decides more than about a
/// hole.
#[derive(Default)]
pub(crate) struct Advanced {
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

/// Tables with an expert bot whose turns are computed at once, on the blocking pool: more wait.
const EXPERT_TABLES_AT_ONCE: usize = 2;

static EXPERT_TABLES: Semaphore = Semaphore::const_new(EXPERT_TABLES_AT_ONCE);

/// Decides `command` on `state` and plays every bot turn it hands over (see
/// [`off_the_workers`]).
pub(crate) async fn advance(
    state: &mut State,
    record: &GameRecord,
    command: &Command,
    at: Timestamp,
) -> Result<Advanced, ServiceError> {
    let secrets = record.secrets()?;
    let command = command.clone();
    // An expert that takes a seat plays in the same write as the join that seats it.
    let expert_joins = matches!(
        command,
        Command::Join {
            bot: Some(BotKind::Expert),
            ..
        }
    );
    off_the_workers(state, expert_joins, move |state| {
        let mut advanced = Advanced::default();
        advanced.advance(state, &secrets, &command, at)?;
        Ok(advanced)
    })
    .await
}

/// Runs `compute` on `state`: at once where only quick bots sit at the table (a random or
/// greedy decision takes microseconds), but where an expert sits or `expert_joins` (milliseconds
/// a decision, and a whole game of them when every seat is a bot) on the blocking pool, a few
/// tables at a time, so that no request worker waits for it and `/healthz` answers meanwhile.
pub(crate) async fn off_the_workers<T: Send + 'static>(
    state: &mut State,
    expert_joins: bool,
    compute: impl FnOnce(&mut State) -> Result<T, ServiceError> + Send + 'static,
) -> Result<T, ServiceError> {
    let expert = expert_joins
        || state
            .players
            .iter()
            .any(|player| player.bot == Some(BotKind::Expert));
    if !expert {
        return compute(state);
    }
    let gone = |what: &str| ServiceError::Internal(format!("the expert's turns {what}"));
    let _turn = EXPERT_TABLES
        .acquire()
        .await
        .map_err(|_| gone("have no pool"))?;
    let mut owned = std::mem::take(state);
    let computed = tokio::task::spawn_blocking(move || {
        let result = compute(&mut owned);
        (owned, result)
    });
    let (owned, result) = computed.await.map_err(|_| gone("failed to run"))?;
    *state = owned;
    result
}

impl Games {
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
            let decided = match self.accounts.credential(&game.record, token).await {
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
                    retry::pause(round).await;
                }
                Err(error) => return Err(error.into()),
            }
        }
        Err(StoreError::Conflict.into())
    }

    /// Appends `write` to `game` through the group commit, with what it tells the accounts bound
    /// to the game's seats; once it is stored, hands its entries to this instance's streams of
    /// the game, keeps the game as it left it, counts its events,
    /// wakes the jobs that audit, analyse and rate a game it finished, and answers.
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
            self.ends.finished(write.after.rated);
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
