//! The one codec between stored rows and engine types: events to and from log entries (and a
//! stored log replayed through the rules), states to and from projections, and a game row's
//! secrets.
//!
//! A failure to decode names the game or the entry and the kind of fault, never serde's message,
//! which would quote the value it could not read: that may be a card, and these messages reach
//! the server's logs.

use serde::Serialize;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::engine::{Event, LoggedEvent, Secrets, State, Timestamp, parse_deck};
use crate::store::{
    Append, Entry, GameIdempotency, GameRecord, GameUpdate, Head, LobbyGame, NewEvent, NewGame,
    RawJson, Snapshot, StoreError,
};

/// The log entries to append for `events`, all stamped `at`.
pub fn new_events(events: &[Event], at: Timestamp) -> Vec<NewEvent> {
    let at = at.to_string();
    events
        .iter()
        .map(|event| {
            let mut json = to_json(event);
            NewEvent {
                kind: event.kind().to_owned(),
                data: json["data"].take(),
                at: at.clone(),
            }
        })
        .collect()
}

/// A stored entry as the engine's logged event (its seq, event and time); fails as
/// [`entry_event`].
pub fn logged_event(entry: &Entry) -> Result<LoggedEvent, String> {
    let (event, at) = entry_event(entry)?;
    Ok(LoggedEvent {
        seq: entry.seq,
        event,
        at,
    })
}

/// The engine event and time of a stored entry; fails naming the entry when it is not an event
/// of the log format.
pub fn entry_event(entry: &Entry) -> Result<(Event, Timestamp), String> {
    let event = serde_json::from_value(json!({"type": entry.kind, "data": entry.data}))
        .map_err(|_| format!("entry {} ({}) is not a log event", entry.seq, entry.kind))?;
    let at = Timestamp::parse(&entry.at)
        .map_err(|error| format!("entry {} has a bad time: {error}", entry.seq))?;
    Ok((event, at))
}

/// The projection to store for `state`.
pub fn projection(state: &State) -> RawJson {
    serde_json::value::to_raw_value(state).expect("engine types serialize to JSON")
}

/// The state a stored projection holds.
pub fn projection_state(game_id: Uuid, projection: &RawJson) -> Result<State, StoreError> {
    serde_json::from_str(projection.get()).map_err(|error| {
        StoreError::Corrupt(format!(
            "the projection of game {game_id} does not decode ({:?})",
            error.classify()
        ))
    })
}

/// The secrets of a stored game: its server seed and its explicit decks, if stacked.
pub fn secrets_of(record: &GameRecord) -> Result<Secrets, StoreError> {
    let decks = match &record.decks {
        None => Vec::new(),
        Some(json) => serde_json::from_value::<Vec<Vec<String>>>(json.clone())
            .ok()
            .and_then(|decks| decks.iter().map(|deck| parse_deck(deck).ok()).collect())
            .ok_or_else(|| StoreError::Corrupt(format!("decks of game {}", record.id)))?,
    };
    Ok(Secrets {
        server_seed: record.server_seed,
        decks,
    })
}

impl GameRecord {
    /// The game's state, decoded from its projection (which it no longer holds after).
    pub fn take_state(&mut self) -> Result<State, StoreError> {
        projection_state(self.id, &std::mem::take(&mut self.projection))
    }

    /// The game's secrets: its server seed and its explicit decks, if stacked.
    pub fn secrets(&self) -> Result<Secrets, StoreError> {
        secrets_of(self)
    }
}

impl NewGame {
    /// The row of the game that `state` holds right after its creation at `created_at`, with its
    /// secret `server_seed` and explicit `decks` (as the client sent them), and the hash of its
    /// host token.
    pub fn created(
        state: &State,
        created_at: Timestamp,
        server_seed: [u8; 32],
        host_token_hash: [u8; 32],
        private: bool,
        decks: Option<&Vec<Vec<String>>>,
    ) -> Result<NewGame, StoreError> {
        let id = state
            .game_id
            .ok_or_else(|| StoreError::Internal("a game created without an id".to_owned()))?;
        Ok(NewGame {
            id,
            created_at,
            seats: i32::from(state.seats),
            holes: i32::from(state.holes),
            rules: state.rules,
            commitment: state.commitment.clone(),
            server_seed,
            host_token_hash,
            private,
            stacked: state.stacked,
            decks: decks.map(to_json),
            status: state.status,
            projection: projection(state),
            host_account: None,
            rated: state.rated,
        })
    }
}

impl LobbyGame {
    /// The game's state, decoded from its projection.
    pub fn state(&self) -> Result<State, StoreError> {
        projection_state(self.id, &self.projection)
    }
}

impl Snapshot {
    /// The state `state` to keep, after its last entry.
    pub fn of(state: &State) -> Snapshot {
        Snapshot {
            seq: state.version as i64,
            state: projection(state),
        }
    }
}

impl Append {
    /// The append of `events` at `at` after `head`, bringing the game row to `update`, with
    /// the stored response of the request if it had an `Idempotency-Key`.
    pub fn new(
        game_id: Uuid,
        head: Head,
        events: &[Event],
        at: Timestamp,
        update: GameUpdate,
        idem: Option<GameIdempotency>,
    ) -> Append {
        Append {
            game_id,
            head,
            events: new_events(events, at),
            update,
            idem,
        }
    }
}

/// Any engine value as JSON (rules, decks, views).
pub fn to_json(value: &impl Serialize) -> Value {
    serde_json::to_value(value).expect("engine types serialize to JSON")
}
