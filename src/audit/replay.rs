//! A stored log replayed through the engine: every command it records re-decided with the
//! game's secrets, from the empty state or from a snapshot. The store keeps entries and decodes
//! them; what they amount to is computed here, by the readers that need it (a replay's view,
//! `check-db`).

use crate::engine::{self, LoggedEvent, ReplayError, Secrets, State};
use crate::store::codec::{entry_event, projection_state};
use crate::store::{Entry, GameRecord, Snapshot, StoreError};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{ClientSeed, Command, PlayerName, Rules, Timestamp, execute, shuffle};
    use serde_json::json;
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
