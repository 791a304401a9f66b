//! The one codec between stored rows and engine types: events to and from log entries, states to
//! and from projections, and a game row's secrets.
//!
//! A failure to decode names the game or the entry and the kind of fault, never serde's message,
//! which would quote the value it could not read: that may be a card, and these messages reach
//! the server's logs.

use serde::Serialize;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::engine::{Event, Secrets, State, Status, Timestamp, parse_deck};
use crate::store::{Entry, GameRecord, NewEvent, StoreError};

/// The log entries to append for `events`, all stamped `at`.
pub fn new_events(events: &[Event], at: Timestamp) -> Vec<NewEvent> {
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
pub fn projection(state: &State) -> Value {
    to_json(state)
}

/// The state a stored projection holds.
pub fn projection_state(game_id: Uuid, projection: Value) -> Result<State, StoreError> {
    serde_json::from_value(projection).map_err(|error| {
        StoreError::Corrupt(format!(
            "the projection of game {game_id} does not decode ({:?})",
            error.classify()
        ))
    })
}

/// A status as the games table stores it (and the views name it).
pub fn status_name(status: Status) -> String {
    to_json(&status)
        .as_str()
        .expect("a status serializes to its name")
        .to_owned()
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

/// Any engine value as JSON (rules, decks, views).
pub fn to_json(value: &impl Serialize) -> Value {
    serde_json::to_value(value).expect("engine types serialize to JSON")
}
