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

use crate::engine::{self, Event, LoggedEvent, ReplayError, Secrets, State, Timestamp, parse_deck};
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

/// The engine event and time of a stored entry; fails naming the entry when it is not an event
/// of the log format.
pub fn entry_event(entry: &Entry) -> Result<(Event, Timestamp), String> {
    let event = serde_json::from_value(json!({"type": entry.kind, "data": entry.data}))
        .map_err(|_| format!("entry {} ({}) is not a log event", entry.seq, entry.kind))?;
    let at = Timestamp::parse(&entry.at)
        .map_err(|error| format!("entry {} has a bad time: {error}", entry.seq))?;
    Ok((event, at))
}

/// Replays a whole stored log through the engine from the empty state, re-deciding every
/// command it records (see [`engine::replay()`]).
pub fn rebuild(entries: &[Entry], secrets: &Secrets) -> Result<State, String> {
    let log = decode_log(entries, |log| engine::replay_prefix(log, secrets))?;
    engine::replay(&log, secrets).map_err(|error| error.to_string())
}

/// As [`rebuild`], for the first entries of a log, cut after any entry (as a replay asks): the
/// last command's events may be cut short.
pub fn rebuild_prefix(entries: &[Entry], secrets: &Secrets) -> Result<State, String> {
    rebuild_prefix_from(State::default(), entries, secrets)
}

/// As [`rebuild_prefix`], for the entries that follow a snapshot of the game, `start` (see
/// [`engine::replay_prefix_from`]).
pub fn rebuild_prefix_from(
    start: State,
    entries: &[Entry],
    secrets: &Secrets,
) -> Result<State, String> {
    let log = decode_log(entries, |log| {
        engine::replay_prefix_from(start.clone(), log, secrets)
    })?;
    engine::replay_prefix_from(start, &log, secrets).map_err(|error| error.to_string())
}

/// Decodes the entries. An entry that does not decode is reported only when the entries before
/// it replay with `replay_before`: a replay meets a fault in an earlier entry first.
fn decode_log(
    entries: &[Entry],
    replay_before: impl FnOnce(&[LoggedEvent]) -> Result<State, ReplayError>,
) -> Result<Vec<LoggedEvent>, String> {
    let mut log = Vec::with_capacity(entries.len());
    for entry in entries {
        match entry_event(entry) {
            Ok((event, at)) => log.push(LoggedEvent {
                seq: entry.seq,
                event,
                at,
            }),
            Err(undecodable) => {
                replay_before(&log).map_err(|error| error.to_string())?;
                return Err(undecodable);
            }
        }
    }
    Ok(log)
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

/// The state of `record`'s game after the last of `entries`, which follow `snapshot` (or the
/// start of the log): the log replayed through the engine, every command re-decided with the
/// game's secrets.
pub fn state_after(
    record: &GameRecord,
    snapshot: Option<Snapshot>,
    entries: &[Entry],
) -> Result<State, StoreError> {
    let start = match snapshot {
        Some(snapshot) => projection_state(record.id, &snapshot.state)?,
        None => State::default(),
    };
    rebuild_prefix_from(start, entries, &record.secrets()?).map_err(StoreError::Corrupt)
}

impl GameUpdate {
    /// The game row once the game is at `state`, keeping `snapshots` beside it.
    pub fn after(state: &State, snapshots: Vec<Snapshot>) -> GameUpdate {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{ClientSeed, Command, PlayerName, Rules, execute, shuffle};
    use uuid::Uuid;

    /// The log of a two-seat game just dealt, as the store would hold it (without a real
    /// chain), its secrets and its state.
    fn dealt_entries() -> (Vec<Entry>, Secrets, State) {
        let secrets = Secrets {
            server_seed: [3; 32],
            decks: Vec::new(),
        };
        let mut commands = vec![Command::Create {
            game_id: Uuid::from_u128(1),
            seats: 2,
            holes: 1,
            rules: Rules::resolve(2, None, None, None).unwrap(),
            commitment: shuffle::commitment(&secrets.server_seed),
            stacked: false,
            rated: false,
        }];
        for name in ["Ada", "Bob"] {
            commands.push(Command::Join {
                name: PlayerName::parse(name).unwrap(),
                bot: None,
                client_seed: ClientSeed::default(),
                account: None,
            });
        }
        let mut state = State::default();
        let mut entries = Vec::new();
        for command in &commands {
            let at = Timestamp(entries.len() as i64);
            for event in execute(&mut state, command, &secrets, at).unwrap() {
                let json = serde_json::to_value(&event).unwrap();
                entries.push(Entry {
                    seq: entries.len() as i64 + 1,
                    at: at.to_string(),
                    kind: event.kind().to_owned(),
                    data: json["data"].clone(),
                    salt: String::new(),
                    hash: String::new(),
                });
            }
        }
        (entries, secrets, state)
    }

    #[test]
    fn a_stored_log_rebuilds_through_the_engine() {
        let (entries, secrets, state) = dealt_entries();
        assert_eq!(rebuild(&entries, &secrets), Ok(state));
        assert_eq!(
            rebuild(&entries[..3], &secrets),
            Err(
                "the log ends with entry 3 (player_joined) where the rules log hole_dealt next"
                    .to_owned()
            )
        );
        assert!(rebuild_prefix(&entries[..3], &secrets).is_ok());
    }

    #[test]
    fn an_entry_that_is_no_log_event_is_refused_after_the_faults_before_it() {
        // The decoding error names the entry, not serde's message, which would quote the value.
        let (mut entries, secrets, _) = dealt_entries();
        entries[1].data["name"] = json!("");
        let error = rebuild(&entries, &secrets).expect_err("an empty name");
        assert_eq!(error, "entry 2 (player_joined) is not a log event");
        // A fault in an earlier entry is the one a replay meets first.
        let (mut entries, secrets, _) = dealt_entries();
        entries[1].data["seat"] = json!(1);
        entries[3].data["deck"] = json!([]);
        for rebuilt in [
            rebuild(&entries, &secrets),
            rebuild_prefix(&entries, &secrets),
        ] {
            assert_eq!(
                rebuilt,
                Err(
                    "entry 2 (player_joined) is not what the rules decide: seat differs".to_owned()
                )
            );
        }
        assert_eq!(
            rebuild(&entries[2..], &secrets),
            Err("entry 3 (player_joined) is refused by the rules: not_found".to_owned())
        );
    }
}
