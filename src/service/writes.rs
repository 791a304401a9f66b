//! The use cases that change a game: create, join, move, cancel; and the retry loop they share.
//!
//! Each write is load → decide → append with the loaded version; when another writer got there
//! first the store reports a conflict and the whole use case runs again on the fresh state, so
//! concurrency is settled by the database and never by this process's memory.

use std::sync::Arc;
use std::time::Duration;

use uuid::Uuid;

use crate::engine::{
    self, BotKind, Card, ClientSeed, Command, Event, MoveRequest, PlayerName, RuleError,
    RulesInput, Secrets, State, Timestamp, View, Viewer,
};
use crate::service::cache::CachedGame;
use crate::service::credentials::{Credential, Token, authenticate, random_bytes};
use crate::service::timeouts::deadline_of;
use crate::service::{
    Answer, CreatedGame, GameService, IdempotencyKey, Joined, ServiceError, VersionPrecondition,
};
use crate::store::codec::{self, to_json};
use crate::store::{
    Append, CreateIdempotency, Entry, GameRecord, GameUpdate, MoveIdempotency, NewGame, NewSeat,
    Snapshot, StoreError,
};

/// How many times a write is attempted before a lost race is reported (409 `write_conflict`).
const MAX_ATTEMPTS: usize = 12;

/// A new game as the client asks for it, before validation.
#[derive(Debug, Clone)]
pub struct NewGameRequest {
    /// 2 to 4.
    pub seats: i64,
    /// 1 to 18.
    pub holes: i64,
    /// The options; missing ones take their defaults.
    pub rules: RulesInput,
    /// Kept out of the lobby.
    pub private: bool,
    /// Explicit deal orders for holes 1, 2, ...
    pub decks: Option<Vec<Vec<String>>>,
}

/// A seat as the client asks for it, before validation.
#[derive(Debug, Clone)]
pub struct JoinRequest {
    /// The player's name.
    pub name: String,
    /// The player's entropy.
    pub client_seed: Option<String>,
    /// A bot strategy (host only).
    pub bot: Option<BotKind>,
}

/// What one attempt of a write decided.
pub(super) enum Attempt<T> {
    /// Answer without writing: a stored answer replayed.
    Replay(T),
    /// Append these events, then answer.
    Write(Box<Write<T>>),
}

/// Events to append with the game's new state, and the answer once they are stored.
pub(super) struct Write<T> {
    pub(super) events: Vec<Event>,
    pub(super) at: Timestamp,
    pub(super) update: GameUpdate,
    pub(super) idempotency: Option<MoveIdempotency>,
    /// The game's state after the events, kept in the cache once they are stored.
    pub(super) after: State,
    pub(super) answer: T,
}

impl GameService {
    /// Creates a game: a fresh server seed and its commitment, a host token, `game_created`.
    pub async fn create(
        &self,
        request: NewGameRequest,
        idempotency: Option<IdempotencyKey>,
    ) -> Result<Answer<CreatedGame>, ServiceError> {
        if let Some(key) = &idempotency
            && let Some(stored) = self.store.find_create_response(&key.storage_key()).await?
        {
            return replay_created(stored, key);
        }
        let (seats, holes) = engine::check_game_size(request.seats, request.holes)?;
        let rules = request
            .rules
            .resolve_with(seats, self.default_turn_timeout_s)?;
        let decks = request
            .decks
            .as_deref()
            .map(parse_decks)
            .transpose()?
            .unwrap_or_default();
        if decks.len() > usize::from(holes) {
            return Err(RuleError::InvalidGameOptions(format!(
                "decks has {} decks for {holes} holes",
                decks.len()
            ))
            .into());
        }

        let server_seed: [u8; 32] = random_bytes();
        let host_token = Token::generate();
        let id = Uuid::new_v4();
        let at = self.now();
        let secrets = Secrets {
            server_seed,
            decks: decks.clone(),
        };
        let command = Command::Create {
            game_id: id,
            seats,
            holes,
            rules,
            commitment: engine::shuffle::commitment(&server_seed),
            stacked: !decks.is_empty(),
        };
        let mut state = State::default();
        let events = engine::execute(&mut state, &command, &secrets, at)?;
        let created = CreatedGame {
            view: engine::view(&state, Viewer::Spectator),
            host_token: host_token.0.clone(),
        };
        let stored_answer = idempotency.as_ref().map(|key| CreateIdempotency {
            key: key.storage_key(),
            fingerprint: key.fingerprint().to_owned(),
            response_status: 201,
            response_body: key.mask_host_token(&to_json(&created)),
        });
        let game = NewGame {
            id,
            created_at: at,
            seats: i32::from(seats),
            holes: i32::from(holes),
            rules,
            commitment: state.commitment.clone(),
            server_seed,
            host_token_hash: host_token.hash(),
            private: request.private,
            stacked: state.stacked,
            decks: request.decks.as_ref().map(to_json),
            status: state.status,
            projection: codec::projection(&state),
        };
        match self
            .store
            .create_game(game, codec::new_events(&events, at), stored_answer)
            .await
        {
            Ok(_) => {
                self.metrics.games_created.inc();
                Ok(Answer::Fresh(created))
            }
            // A concurrent retry with the same key created the game first: answer as it did.
            Err(StoreError::Conflict) => match &idempotency {
                Some(key) => match self.store.find_create_response(&key.storage_key()).await? {
                    Some(stored) => replay_created(stored, key),
                    None => Err(StoreError::Conflict.into()),
                },
                None => Err(StoreError::Conflict.into()),
            },
            Err(error) => Err(error.into()),
        }
    }

    /// Takes a seat. The last seat deals hole 1; bots then reveal at once.
    pub async fn join(
        &self,
        id: Uuid,
        token: Option<&str>,
        body: Result<JoinRequest, String>,
    ) -> Result<Joined, ServiceError> {
        self.write(id, token, async |record, mut state, credential| {
            let request = body.clone().map_err(ServiceError::Malformed)?;
            if request.bot.is_some() && credential != Credential::Host {
                return Err(ServiceError::Unauthorized(
                    "Only the host may seat a bot: send the host token.",
                ));
            }
            let seat = engine::check_join(&state)?;
            let name = PlayerName::parse(&request.name)?;
            let client_seed = match (&request.bot, &request.client_seed) {
                (Some(_), _) | (None, None) => ClientSeed::default(),
                (None, Some(seed)) => ClientSeed::parse(seed)?,
            };
            let token = request.bot.is_none().then(Token::generate);
            let new_seat = NewSeat {
                seat: i32::from(seat),
                name: name.as_str().to_owned(),
                bot: request.bot.map(|bot| bot.name().to_owned()),
                client_seed: client_seed.as_str().to_owned(),
                token_hash: token.as_ref().map(Token::hash),
            };
            let command = Command::Join {
                name,
                bot: request.bot,
                client_seed,
            };
            let at = self.now();
            let Advanced { events, snapshots } = advance(&mut state, record, &command, at)?;
            Ok(Attempt::Write(Box::new(Write {
                events,
                at,
                update: GameUpdate {
                    status: state.status,
                    projection: codec::projection(&state),
                    new_seat: Some(new_seat),
                    snapshots,
                    deadline_at: deadline_of(&state),
                },
                idempotency: None,
                after: state,
                answer: Joined {
                    seat,
                    token: token.map(|t| t.0),
                },
            })))
        })
        .await
    }

    /// Plays a move for the seat of `token`, then every bot turn it hands over; answers with the
    /// caller's view. A retried request with the same idempotency key gets the stored answer.
    pub async fn play(
        &self,
        id: Uuid,
        token: Option<&str>,
        body: Result<MoveRequest, String>,
        if_match: Option<&VersionPrecondition>,
        idempotency: Option<IdempotencyKey>,
    ) -> Result<Answer<View>, ServiceError> {
        self.write(id, token, async |record, mut state, credential| {
            let Credential::Seat(seat) = credential else {
                return Err(ServiceError::Unauthorized(
                    "A move needs the seat's token: Authorization: Bearer <token>.",
                ));
            };
            let request = body.clone().map_err(ServiceError::Malformed)?;
            if let Some(key) = &idempotency
                && let Some(stored) = self
                    .store
                    .find_move_response(id, i32::from(seat), &key.storage_key())
                    .await?
            {
                return Ok(Attempt::Replay(Answer::Replayed(key.replay(stored)?)));
            }
            if let Some(precondition) = if_match {
                precondition.check(record.version)?;
            }
            let mv = engine::parse_move(&state, seat, &request)?;
            let at = self.now();
            let Advanced { events, snapshots } =
                advance(&mut state, record, &Command::Play { seat, mv }, at)?;
            let view = engine::view(&state, Viewer::Seat(seat));
            Ok(Attempt::Write(Box::new(Write {
                events,
                at,
                update: GameUpdate {
                    status: state.status,
                    projection: codec::projection(&state),
                    new_seat: None,
                    snapshots,
                    deadline_at: deadline_of(&state),
                },
                idempotency: idempotency.as_ref().map(|key| MoveIdempotency {
                    seat: i32::from(seat),
                    key: key.storage_key(),
                    fingerprint: key.fingerprint().to_owned(),
                    response_status: 200,
                    response_body: to_json(&view),
                }),
                after: state,
                answer: Answer::Fresh(view),
            })))
        })
        .await
    }

    /// The host cancels a game that is still waiting for players.
    pub async fn cancel(&self, id: Uuid, token: Option<&str>) -> Result<(), ServiceError> {
        let (record, _) = self.load(id).await?;
        if authenticate(&record, token)? != Credential::Host {
            return Err(ServiceError::Unauthorized(
                "Only the host may cancel a game: send the host token.",
            ));
        }
        self.store.cancel_game(id).await?;
        self.cache.forget(id);
        Ok(())
    }

    /// Runs `attempt` on the game as it is now and appends what it decided with the version it
    /// read. When another writer got there first, the attempt runs again on the fresh state, where
    /// the stored answer of a concurrent retry, or the new turn, decides.
    ///
    /// The first attempt starts from this instance's cached state, if any, without reading the
    /// game: the append is written only if the game is still at that state's version. Appends
    /// of concurrent writes are written together ([`super::commits`]), each answered after its
    /// commit. What an
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
            let decided = match authenticate(&game.record, token) {
                Ok(credential) => attempt(&game.record, game.state.clone(), credential).await,
                Err(error) => Err(error),
            };
            let write = match decided {
                Ok(Attempt::Replay(answer)) => return Ok(answer),
                Ok(Attempt::Write(write)) => write,
                Err(_) if unchecked => continue,
                Err(error) => return Err(error),
            };
            let Write {
                events,
                at,
                update,
                idempotency,
                after,
                answer,
            } = *write;
            let mut record = game.record.clone();
            record.status = update.status;
            if let Some(seat) = &update.new_seat {
                record.players += 1;
                record.seat_tokens.push((seat.seat, seat.token_hash));
                record.seat_tokens.sort_by_key(|(seat, _)| *seat);
            }
            let append = Append {
                game_id: id,
                head: game.record.head(),
                events: codec::new_events(&events, at),
                update,
                idem: idempotency,
            };
            let appended = self.commits.append(&self.store, append).await;
            match appended {
                Ok(entries) => {
                    self.remember(record, &entries, after);
                    self.count(&events);
                    if events
                        .iter()
                        .any(|event| matches!(event, Event::GameEnded { .. }))
                    {
                        self.audit_finished_game(id);
                    }
                    return Ok(answer);
                }
                // The cached state was stale: the fresh load decides, at once.
                Err(StoreError::Conflict) if unchecked => self.metrics.conflicts.inc(),
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
        for event in events {
            match event {
                Event::HoleDealt { hole: 1, .. } => self.metrics.games_started.inc(),
                Event::GameEnded { .. } => self.metrics.games_finished.inc(),
                Event::CardsRevealed { .. } => {
                    self.metrics.moves.with_label_values(&["reveal"]).inc()
                }
                Event::CardDrawn { .. } => self.metrics.moves.with_label_values(&["draw"]).inc(),
                Event::CardSwapped { .. } => self.metrics.moves.with_label_values(&["swap"]).inc(),
                Event::CardDiscarded { .. } => {
                    self.metrics.moves.with_label_values(&["discard"]).inc()
                }
                Event::CardFlipped { .. } => self.metrics.moves.with_label_values(&["flip"]).inc(),
                Event::FlipDeclined { .. } => self.metrics.moves.with_label_values(&["pass"]).inc(),
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

/// The stored answer to the first creation with `key`, its host token unmasked.
fn replay_created(
    stored: crate::store::StoredResponse,
    key: &IdempotencyKey,
) -> Result<Answer<CreatedGame>, ServiceError> {
    let mut stored = key.replay(stored)?;
    stored.body = key.mask_host_token(&stored.body);
    Ok(Answer::Replayed(stored))
}

fn parse_decks(decks: &[Vec<String>]) -> Result<Vec<[Card; 52]>, RuleError> {
    decks
        .iter()
        .enumerate()
        .map(|(index, deck)| {
            engine::parse_deck(deck).map_err(|error| match error {
                RuleError::InvalidDeck(why) => {
                    RuleError::InvalidDeck(format!("decks[{index}]: {why}"))
                }
                other => other,
            })
        })
        .collect()
}

/// What a command and the bot turns it hands over did: their events, and the states to keep as
/// snapshots after those that deal a hole, so that a replay never re-decides more than about a
/// hole.
#[derive(Default)]
pub(super) struct Advanced {
    pub(super) events: Vec<Event>,
    pub(super) snapshots: Vec<Snapshot>,
}

impl Advanced {
    fn record(&mut self, state: &State, events: Vec<Event>) {
        if events
            .iter()
            .any(|event| matches!(event, Event::HoleDealt { .. }))
        {
            self.snapshots.push(Snapshot {
                seq: state.version as i64,
                state: codec::projection(state),
            });
        }
        self.events.extend(events);
    }
}

/// Decides `command` on `state` and plays every bot turn it hands over.
pub(super) fn advance(
    state: &mut State,
    record: &GameRecord,
    command: &Command,
    at: Timestamp,
) -> Result<Advanced, ServiceError> {
    let secrets = codec::secrets_of(record)?;
    let mut advanced = Advanced::default();
    let events = engine::execute(state, command, &secrets, at)?;
    advanced.record(state, events);
    // A bot only plays legal moves: a refusal is our bug, not the caller's mistake. Its code
    // only: the sentence may name the card the bot holds.
    let bot_refused = |error: RuleError| {
        ServiceError::Internal(format!("a bot's move was refused: {}", error.code()))
    };
    while let Some(events) = engine::play_bot_move(state, &secrets, at).map_err(bot_refused)? {
        advanced.record(state, events);
    }
    Ok(advanced)
}
