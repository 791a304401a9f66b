//! The use cases of the API: load a game, authenticate, decide, run the bots, append, answer.
//!
//! Each write is load → decide → append with the loaded version; when another writer got there
//! first the store reports a conflict and the whole use case runs again on the fresh state, so
//! concurrency is settled by the database and never by this process's memory.

use std::sync::Arc;
use std::time::Duration;

use rand::SeedableRng;
use rand::rngs::StdRng;
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use uuid::Uuid;

use crate::check;
use crate::engine::{
    self, BotKind, Card, ClientSeed, Command, Event, MoveRequest, PlayerName, RuleError,
    RulesInput, Seat, Secrets, State, Status, Timestamp, View, Viewer,
};
use crate::metrics::GameMetrics;
use crate::store::{
    self, CreateIdempotency, Entry, EventStore, GameRecord, GameUpdate, LobbyCursor,
    MoveIdempotency, NewEvent, NewGame, NewSeat, StoreError, find_seat,
};

/// How many times a write is attempted before a lost race is reported (409 `write_conflict`).
const MAX_ATTEMPTS: usize = 12;

/// Why a use case failed; [`crate::api::problem`] maps each to one HTTP problem.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// No such game (or entry).
    #[error("{0}")]
    NotFound(&'static str),
    /// A missing or wrong token.
    #[error("{0}")]
    Unauthorized(&'static str),
    /// The request does not parse into its shape.
    #[error("{0}")]
    Malformed(String),
    /// `If-Match` names another version.
    #[error("The game is at version {current}, not {expected}: reload it and try again.")]
    StaleVersion {
        /// What the client expected.
        expected: String,
        /// What the game is at.
        current: i64,
    },
    /// An `Idempotency-Key` already used with another body.
    #[error("This Idempotency-Key was already used with a different request body.")]
    IdempotencyKeyReused,
    /// A value out of its range outside the rules (paging limits).
    #[error("{0}")]
    OutOfRange(String),
    /// A fault of the server (a bot's move refused by the rules): logged, answered with 500.
    #[error("internal error: {0}")]
    Internal(String),
    /// A rule of the game or of the contract.
    #[error(transparent)]
    Rule(#[from] RuleError),
    /// The database.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A response that may be replayed for a retried request: its status and JSON body.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The HTTP status.
    pub status: u16,
    /// The JSON body.
    pub body: Value,
}

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
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct CreatedGame {
    /// The public view.
    #[serde(flatten)]
    pub view: View,
    /// The host's secret token, shown once: it seats bots, and cancels the game while it waits.
    pub host_token: String,
}

/// Who is calling, once their token is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// No token.
    Anonymous,
    /// The host token.
    Host,
    /// A seat token.
    Seat(Seat),
}

impl Caller {
    fn viewer(self) -> Viewer {
        match self {
            Caller::Seat(seat) => Viewer::Seat(seat),
            Caller::Anonymous | Caller::Host => Viewer::Spectator,
        }
    }
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
    /// Public views of waiting, non-private games with free seats, newest first.
    pub games: Vec<View>,
    /// Pass as `cursor` for the next page; null at the end.
    pub next_cursor: Option<String>,
}

/// The use cases, over one store.
#[derive(Clone)]
pub struct GameService {
    store: Arc<dyn EventStore>,
    metrics: GameMetrics,
}

impl GameService {
    /// A service over `store`, counting games and moves in `metrics`.
    pub fn new(store: Arc<dyn EventStore>, metrics: GameMetrics) -> Self {
        GameService { store, metrics }
    }

    /// The store, for readiness checks.
    pub fn store(&self) -> &Arc<dyn EventStore> {
        &self.store
    }

    /// Creates a game: a fresh server seed and its commitment, a host token, `game_created`.
    pub async fn create(
        &self,
        request: NewGameRequest,
        idempotency: Option<IdempotencyKey>,
    ) -> Result<Reply, ServiceError> {
        if let Some(key) = &idempotency
            && let Some(stored) = self.store.find_create_response(&key.storage_key()).await?
        {
            return replay_created(stored, key);
        }
        let (seats, holes) = engine::check_game_size(request.seats, request.holes)?;
        let rules = request.rules.resolve(seats)?;
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
        let at = now();
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
        let events = decide_and_apply(&mut state, &command, &secrets, at)?;
        let public = engine::view(&state, Viewer::Spectator);
        let body = created_body(&public, &host_token.0);
        let stored_record = idempotency.as_ref().map(|key| CreateIdempotency {
            key: key.storage_key(),
            fingerprint: key.fingerprint.clone(),
            response_status: 201,
            response_body: seal_created(&body, key),
        });
        let game = NewGame {
            id,
            created_at: at.to_string(),
            seats: i32::from(seats),
            holes: i32::from(holes),
            rules: to_json(&rules),
            commitment: state.commitment.clone(),
            server_seed,
            host_token_hash: host_token.hash(),
            private: request.private,
            stacked: state.stacked,
            decks: request.decks.as_ref().map(to_json),
            status: status_name(state.status),
            projection: to_json(&state),
        };
        match self
            .store
            .create_game(game, to_new_events(&events, at), stored_record)
            .await
        {
            Ok(_) => {
                self.metrics.games_created.inc();
                Ok(Reply { status: 201, body })
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

    /// Loads a game or reports `not_found`.
    async fn load(&self, id: Uuid) -> Result<(GameRecord, State), ServiceError> {
        let mut record = self
            .store
            .load_game(id)
            .await?
            .ok_or(ServiceError::NotFound("There is no such game."))?;
        let state = check::projection_state(id, std::mem::take(&mut record.projection))?;
        Ok((record, state))
    }

    /// The public (spectator) view of a game. A token, if given, must still be one of this game's:
    /// a bad credential is refused, never ignored.
    pub async fn public_view(&self, id: Uuid, token: Option<&str>) -> Result<View, ServiceError> {
        let (record, state) = self.load(id).await?;
        authenticate(&record, token)?;
        Ok(engine::view(&state, Viewer::Spectator))
    }

    /// The caller's own view: requires a seat token.
    pub async fn own_view(&self, id: Uuid, token: Option<&str>) -> Result<View, ServiceError> {
        let (record, state) = self.load(id).await?;
        match authenticate(&record, token)? {
            Caller::Seat(seat) => Ok(engine::view(&state, Viewer::Seat(seat))),
            _ => Err(ServiceError::Unauthorized(
                "This endpoint needs a seat token: Authorization: Bearer <token>.",
            )),
        }
    }

    /// Takes a seat. The last seat deals hole 1; bots then reveal at once.
    pub async fn join(
        &self,
        id: Uuid,
        token: Option<&str>,
        body: Result<JoinRequest, String>,
    ) -> Result<Joined, ServiceError> {
        self.write(id, token, async |record, mut state, caller| {
            let request = body.clone().map_err(ServiceError::Malformed)?;
            if request.bot.is_some() && caller != Caller::Host {
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
            let new_seat = NewSeat {
                seat: i32::from(seat),
                name: name.as_str().to_owned(),
                bot: request.bot.map(|bot| bot.name().to_owned()),
                client_seed: client_seed.as_str().to_owned(),
                token_hash: None,
            };
            let command = Command::Join {
                name,
                bot: request.bot,
                client_seed,
            };
            let at = now();
            let events = advance(&mut state, record, &command, at)?;
            let token = request.bot.is_none().then(Token::generate);
            Ok(Attempt::Write(Box::new(Write {
                events,
                at,
                update: GameUpdate {
                    status: status_name(state.status),
                    projection: to_json(&state),
                    new_seat: Some(NewSeat {
                        token_hash: token.as_ref().map(Token::hash),
                        ..new_seat
                    }),
                },
                idempotency: None,
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
        if_match: Option<&str>,
        idempotency: Option<IdempotencyKey>,
    ) -> Result<Reply, ServiceError> {
        self.write(id, token, async |record, mut state, caller| {
            let Caller::Seat(seat) = caller else {
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
                return if stored.fingerprint == key.fingerprint {
                    Ok(Attempt::Answer(Reply {
                        status: stored.status,
                        body: stored.body,
                    }))
                } else {
                    Err(ServiceError::IdempotencyKeyReused)
                };
            }
            check_if_match(if_match, record.version)?;
            let mv = engine::parse_move(&state, seat, &request)?;
            let at = now();
            let events = advance(&mut state, record, &Command::Play { seat, mv }, at)?;
            let body = to_json(&engine::view(&state, Viewer::Seat(seat)));
            Ok(Attempt::Write(Box::new(Write {
                events,
                at,
                update: GameUpdate {
                    status: status_name(state.status),
                    projection: to_json(&state),
                    new_seat: None,
                },
                idempotency: idempotency.as_ref().map(|key| MoveIdempotency {
                    seat: i32::from(seat),
                    key: key.storage_key(),
                    fingerprint: key.fingerprint.clone(),
                    response_status: 200,
                    response_body: body.clone(),
                }),
                answer: Reply { status: 200, body },
            })))
        })
        .await
    }

    /// Runs `attempt` on the game as it is now and appends what it decided with the version it
    /// read. When another writer got there first, the attempt runs again on the fresh state, where
    /// the stored answer of a concurrent retry, or the new turn, decides.
    async fn write<T>(
        &self,
        id: Uuid,
        token: Option<&str>,
        mut attempt: impl AsyncFnMut(&GameRecord, State, Caller) -> Result<Attempt<T>, ServiceError>,
    ) -> Result<T, ServiceError> {
        for round in 0..MAX_ATTEMPTS {
            let (record, state) = self.load(id).await?;
            let caller = authenticate(&record, token)?;
            let write = match attempt(&record, state, caller).await? {
                Attempt::Answer(answer) => return Ok(answer),
                Attempt::Write(write) => write,
            };
            let events = to_new_events(&write.events, write.at);
            match self
                .store
                .append(id, record.version, events, write.update, write.idempotency)
                .await
            {
                Ok(_) => {
                    self.count(&write.events);
                    return Ok(write.answer);
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

    /// The host cancels a game that is still waiting for players.
    pub async fn cancel(&self, id: Uuid, token: Option<&str>) -> Result<(), ServiceError> {
        let (record, _) = self.load(id).await?;
        if authenticate(&record, token)? != Caller::Host {
            return Err(ServiceError::Unauthorized(
                "Only the host may cancel a game: send the host token.",
            ));
        }
        Ok(self.store.cancel_game(id).await?)
    }

    /// Waiting, public games with free seats, newest first; asking for another `status` is out
    /// of the lobby's range.
    pub async fn lobby(
        &self,
        status: Option<Status>,
        limit: Option<i64>,
        cursor: Option<&str>,
    ) -> Result<LobbyPage, ServiceError> {
        if let Some(status @ (Status::Playing | Status::Finished)) = status {
            return Err(ServiceError::OutOfRange(format!(
                "The lobby lists only waiting games, not {} ones.",
                status_name(status)
            )));
        }
        let limit = check_limit(limit, 20, 100)?;
        let cursor = cursor.map(decode_cursor).transpose()?;
        let mut games = self.store.list_waiting(limit + 1, cursor).await?;
        let more = games.len() as i64 > limit;
        games.truncate(limit as usize);
        let next_cursor = if more {
            games
                .last()
                .map(|game| encode_cursor(&LobbyCursor::from(game)))
        } else {
            None
        };
        let views = games
            .into_iter()
            .map(|game| {
                check::projection_state(game.id, game.projection)
                    .map(|state| engine::view(&state, Viewer::Spectator))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(LobbyPage {
            games: views,
            next_cursor,
        })
    }

    /// A page of the log, redacted for the caller while the game runs. `query` is the parsed
    /// `(after, limit)`, or why it does not parse (reported after the game and the token).
    pub async fn events(
        &self,
        id: Uuid,
        token: Option<&str>,
        query: Result<(Option<i64>, Option<i64>), String>,
    ) -> Result<EventsPage, ServiceError> {
        let (record, state) = self.load(id).await?;
        let caller = authenticate(&record, token)?;
        let (after, limit) = query.map_err(ServiceError::Malformed)?;
        let limit = check_limit(limit, 100, 1000)?;
        let after = after.unwrap_or(0);
        if after < 0 {
            return Err(ServiceError::OutOfRange(
                "after must be 0 or more.".to_owned(),
            ));
        }
        let entries = self.store.load_events(id, after, limit).await?;
        let finished = state.status == Status::Finished;
        let next_after = (entries.len() as i64 == limit && after + limit < record.version)
            .then(|| entries.last().map(|entry| entry.seq))
            .flatten();
        let events = entries
            .iter()
            .map(|entry| entry_for(entry, caller.viewer(), finished))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(EventsPage { events, next_after })
    }

    /// The view the caller would have had right after entry `seq`.
    pub async fn replay(
        &self,
        id: Uuid,
        seq: i64,
        token: Option<&str>,
    ) -> Result<View, ServiceError> {
        let (record, _) = self.load(id).await?;
        let caller = authenticate(&record, token)?;
        if seq < 1 || seq > record.version {
            return Err(ServiceError::NotFound(
                "This game has no entry with that seq.",
            ));
        }
        let state = self.state_at(&record, seq).await?;
        Ok(engine::view(&state, caller.viewer()))
    }

    /// Rebuilds the state of `record`'s game after entry `seq` by replaying its log through the
    /// engine, every command re-decided with the game's secrets.
    pub async fn state_at(&self, record: &GameRecord, seq: i64) -> Result<State, ServiceError> {
        let entries = store::load_log(self.store.as_ref(), record.id, seq).await?;
        let secrets = check::secrets_of(record)?;
        Ok(check::rebuild_prefix(&entries, &secrets).map_err(StoreError::Corrupt)?)
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
                _ => {}
            }
        }
    }
}

/// What one attempt of a write decided.
enum Attempt<T> {
    /// Answer without writing (an idempotent replay).
    Answer(T),
    /// Append these events, then answer.
    Write(Box<Write<T>>),
}

/// Events to append with the game's new state, and the answer once they are stored.
struct Write<T> {
    events: Vec<Event>,
    at: Timestamp,
    update: GameUpdate,
    idempotency: Option<MoveIdempotency>,
    answer: T,
}

/// The shortest `Idempotency-Key` accepted on game creation.
pub const MIN_CREATION_KEY_LEN: usize = 22;

/// A client's `Idempotency-Key` with the fingerprint of the request it came with.
#[derive(Debug, Clone)]
pub struct IdempotencyKey {
    key: String,
    fingerprint: String,
}

impl IdempotencyKey {
    /// Checks a move's key (1 to 255 visible ASCII characters) and fingerprints the body. A move
    /// key is scoped to the game and the seat whose token comes with it.
    pub fn for_move(key: &str, body: &[u8]) -> Result<Self, ServiceError> {
        Self::new(key, body, 1)
    }

    /// Checks a creation key and fingerprints the body. Creation keys share one scope across all
    /// clients and replay a host token, so they must be hard to guess: at least
    /// [`MIN_CREATION_KEY_LEN`] characters (a UUID fits).
    pub fn for_creation(key: &str, body: &[u8]) -> Result<Self, ServiceError> {
        Self::new(key, body, MIN_CREATION_KEY_LEN)
    }

    fn new(key: &str, body: &[u8], min_len: usize) -> Result<Self, ServiceError> {
        let valid =
            (min_len..=255).contains(&key.len()) && key.bytes().all(|byte| byte.is_ascii_graphic());
        if !valid {
            return Err(ServiceError::Malformed(format!(
                "Idempotency-Key must be {min_len} to 255 visible ASCII characters."
            )));
        }
        Ok(IdempotencyKey {
            key: key.to_owned(),
            fingerprint: hex::encode(Sha256::digest(body)),
        })
    }

    /// What the database keeps of the key: its hash, so that the key itself (which unseals a
    /// stored host token) never rests in the database.
    fn storage_key(&self) -> String {
        hex::encode(Sha256::digest(format!("golf-idempotency:{}", self.key)))
    }

    /// A one-time pad for the host token in a stored creation response.
    fn pad(&self) -> [u8; 32] {
        Sha256::digest(format!("golf-host-token:{}", self.key)).into()
    }
}

/// Who `token` belongs to in `record`'s game; a token that is neither a seat's nor the host's
/// is refused, never treated as anonymous.
fn authenticate(record: &GameRecord, token: Option<&str>) -> Result<Caller, ServiceError> {
    let Some(token) = token else {
        return Ok(Caller::Anonymous);
    };
    let hash = Token::hash_of(token);
    if bool::from(hash.ct_eq(&record.host_token_hash)) {
        return Ok(Caller::Host);
    }
    match find_seat(&record.seat_tokens, &hash) {
        Some(seat) => Ok(Caller::Seat(seat as Seat)),
        None => Err(ServiceError::Unauthorized(
            "This token is not a seat or host token of this game.",
        )),
    }
}

/// A 256-bit secret token, shown once, stored only as its SHA-256.
struct Token(String);

impl Token {
    fn generate() -> Token {
        Token(hex::encode(random_bytes::<32>()))
    }

    fn hash(&self) -> [u8; 32] {
        Token::hash_of(&self.0)
    }

    fn hash_of(token: &str) -> [u8; 32] {
        Sha256::digest(token.as_bytes()).into()
    }
}

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).expect("the operating system's random number generator works");
    bytes
}

fn created_body(public: &View, host_token: &str) -> Value {
    to_json(&CreatedGame {
        view: public.clone(),
        host_token: host_token.to_owned(),
    })
}

/// The creation response as stored: the host token XORed with a pad only the key's holder can
/// derive, so that the database keeps no usable token.
fn seal_created(body: &Value, key: &IdempotencyKey) -> Value {
    let mut sealed = body.clone();
    if let Some(token) = body["host_token"]
        .as_str()
        .and_then(|t| hex::decode(t).ok())
    {
        let pad = key.pad();
        let masked: Vec<u8> = token.iter().zip(pad.iter()).map(|(t, p)| t ^ p).collect();
        sealed["host_token"] = Value::String(hex::encode(masked));
    }
    sealed
}

fn replay_created(
    stored: crate::store::StoredResponse,
    key: &IdempotencyKey,
) -> Result<Reply, ServiceError> {
    if stored.fingerprint != key.fingerprint {
        return Err(ServiceError::IdempotencyKeyReused);
    }
    Ok(Reply {
        status: stored.status,
        // XOR with the same pad unseals.
        body: seal_created(&stored.body, key),
    })
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

fn decide_and_apply(
    state: &mut State,
    command: &Command,
    secrets: &Secrets,
    at: Timestamp,
) -> Result<Vec<Event>, RuleError> {
    let events = engine::decide(state, command, secrets)?;
    for event in &events {
        engine::apply(state, event, at);
    }
    Ok(events)
}

/// Decides `command` on `state` and plays every bot turn it hands over.
fn advance(
    state: &mut State,
    record: &GameRecord,
    command: &Command,
    at: Timestamp,
) -> Result<Vec<Event>, ServiceError> {
    let secrets = check::secrets_of(record)?;
    let mut events = decide_and_apply(state, command, &secrets, at)?;
    run_bots(state, &secrets, at, &mut events)
        // A bot only plays legal moves: a refusal is our bug, not the caller's mistake.
        // Its code only: the sentence may name the card the bot holds.
        .map_err(|error| {
            ServiceError::Internal(format!("a bot's move was refused: {}", error.code()))
        })?;
    Ok(events)
}

/// Plays every bot turn that is due, recording each as ordinary events. Each bot's randomness is
/// derived from the secret server seed and the log position, so it is reproducible by the server
/// and unpredictable to players.
fn run_bots(
    state: &mut State,
    secrets: &Secrets,
    at: Timestamp,
    events: &mut Vec<Event>,
) -> Result<(), RuleError> {
    while let Some((seat, bot)) = next_bot(state) {
        let observation = engine::observe(state, seat);
        let mut seed = Sha256::new();
        seed.update(secrets.server_seed);
        seed.update(b"golf-bot");
        seed.update(state.version.to_be_bytes());
        let mut rng = StdRng::from_seed(seed.finalize().into());
        let mv = engine::choose(bot, &observation, &mut rng);
        events.extend(decide_and_apply(
            state,
            &Command::Play { seat, mv },
            secrets,
            at,
        )?);
    }
    Ok(())
}

fn next_bot(state: &State) -> Option<(Seat, BotKind)> {
    state.players.iter().enumerate().find_map(|(seat, player)| {
        let seat = seat as Seat;
        let bot = player.bot?;
        (!engine::legal_move_list(state, seat).is_empty()).then_some((seat, bot))
    })
}

fn check_if_match(if_match: Option<&str>, version: i64) -> Result<(), ServiceError> {
    let Some(expected) = if_match else {
        return Ok(());
    };
    // If-Match compares strongly (RFC 9110): a weak tag never matches. A bare number is taken
    // as the quoted tag it stands for, for people typing it by hand.
    let current = version.to_string();
    let matches = expected.split(',').map(str::trim).any(|tag| {
        tag == "*"
            || tag.strip_prefix('"').and_then(|t| t.strip_suffix('"')) == Some(&current)
            || tag == current
    });
    if matches {
        Ok(())
    } else {
        Err(ServiceError::StaleVersion {
            expected: expected.to_owned(),
            current: version,
        })
    }
}

fn check_limit(limit: Option<i64>, default: i64, max: i64) -> Result<i64, ServiceError> {
    match limit {
        None => Ok(default),
        Some(limit) if (1..=max).contains(&limit) => Ok(limit),
        Some(limit) => Err(ServiceError::OutOfRange(format!(
            "limit must be 1 to {max}, not {limit}."
        ))),
    }
}

fn encode_cursor(cursor: &LobbyCursor) -> String {
    hex::encode(format!("{}|{}", cursor.created_at, cursor.id))
}

fn decode_cursor(text: &str) -> Result<LobbyCursor, ServiceError> {
    let malformed = || ServiceError::Malformed("cursor is not one this server gave.".to_owned());
    let bytes = hex::decode(text).map_err(|_| malformed())?;
    let text = String::from_utf8(bytes).map_err(|_| malformed())?;
    let (created_at, id) = text.split_once('|').ok_or_else(malformed)?;
    // Only a time this server could have written (its exact format, from 1970 to 9999), so
    // that the store is never handed a date it cannot compare.
    const YEAR_10000: i64 = 253_402_300_800_000_000;
    let time = Timestamp::parse(created_at).map_err(|_| malformed())?;
    if !(0..YEAR_10000).contains(&time.0) || time.to_string() != created_at {
        return Err(malformed());
    }
    Ok(LobbyCursor {
        created_at: created_at.to_owned(),
        id: id.parse().map_err(|_| malformed())?,
    })
}

/// A stored entry as `viewer` may see it: hidden fields null and `salt` null when redacted.
fn entry_for(entry: &Entry, viewer: Viewer, finished: bool) -> Result<Value, ServiceError> {
    let mut json = entry.to_json();
    if finished {
        return Ok(json);
    }
    let (event, _) = check::entry_event(entry).map_err(StoreError::Corrupt)?;
    if let Some(redacted) = engine::redact_event(&event, viewer) {
        json["data"] = redacted["data"].clone();
        json["salt"] = Value::Null;
    }
    Ok(json)
}

fn to_new_events(events: &[Event], at: Timestamp) -> Vec<NewEvent> {
    let at = at.to_string();
    events
        .iter()
        .map(|event| {
            let mut json = to_json(event);
            NewEvent {
                kind: json["type"]
                    .as_str()
                    .expect("an event serializes with its type")
                    .to_owned(),
                data: json["data"].take(),
                at: at.clone(),
            }
        })
        .collect()
}

fn to_json(value: &impl Serialize) -> Value {
    serde_json::to_value(value).expect("engine types serialize to JSON")
}

/// A status as the views name it, and the games table stores it.
fn status_name(status: Status) -> String {
    to_json(&status)
        .as_str()
        .expect("a status serializes to its name")
        .to_owned()
}

fn now() -> Timestamp {
    Timestamp(chrono::Utc::now().timestamp_micros())
}
