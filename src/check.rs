//! Auditing stored games: every log's hash chain, and its replay through the rules engine
//! against the stored projection (`golf-server check-db`).

use serde_json::json;
use uuid::Uuid;

use crate::engine::{self, Event, State, Timestamp};
use crate::store::{Entry, EventStore, StoreError, load_log, verify_chain};

/// Games read per page while walking the database.
const PAGE: i64 = 500;

/// What a check of the whole database found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CheckReport {
    /// Games checked.
    pub games: u64,
    /// Log entries checked.
    pub entries: u64,
    /// Every mismatch found, one line per game.
    pub problems: Vec<GameProblem>,
}

/// One game whose log or projection is not what it should be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameProblem {
    /// The game.
    pub game_id: Uuid,
    /// What is wrong.
    pub problem: String,
}

/// The engine event and time of a stored entry; fails naming the entry when it is not an event
/// of the log format.
pub fn entry_event(entry: &Entry) -> Result<(Event, Timestamp), String> {
    let event = serde_json::from_value(json!({"type": entry.kind, "data": entry.data}))
        .map_err(|error| format!("entry {} is not a log event: {error}", entry.seq))?;
    let at = Timestamp::parse(&entry.at)
        .map_err(|error| format!("entry {} has a bad time: {error}", entry.seq))?;
    Ok((event, at))
}

/// Replays stored entries through the engine from the empty state.
pub fn rebuild(entries: &[Entry]) -> Result<State, String> {
    let mut state = State::default();
    for entry in entries {
        let (event, at) = entry_event(entry)?;
        engine::apply(&mut state, &event, at);
    }
    Ok(state)
}

/// Checks every game in the store.
pub async fn check_database(store: &dyn EventStore) -> Result<CheckReport, StoreError> {
    let mut report = CheckReport::default();
    let mut after = None;
    loop {
        let ids = store.game_ids(after, PAGE).await?;
        let Some(last) = ids.last() else {
            return Ok(report);
        };
        after = Some(*last);
        for id in ids {
            let entries = check_game(store, id, &mut report).await?;
            report.games += 1;
            report.entries += entries;
        }
    }
}

/// Checks one game, recording any problem in `report`; returns the number of entries read.
async fn check_game(
    store: &dyn EventStore,
    id: Uuid,
    report: &mut CheckReport,
) -> Result<u64, StoreError> {
    // A game cancelled since it was listed is no longer there to check.
    let Some(record) = store.load_game(id).await? else {
        return Ok(0);
    };
    // Entries up to the version read never change, so a game played on while it is checked
    // still checks out.
    let entries = load_log(store, id, record.version).await?;
    let mut problem = |text: String| {
        report.problems.push(GameProblem {
            game_id: id,
            problem: text,
        })
    };
    if entries.len() as i64 != record.version {
        problem(format!(
            "version {} but {} log entries",
            record.version,
            entries.len()
        ));
    }
    match verify_chain(&record.server_seed, &entries) {
        Ok(head) if head != record.head_hash => {
            problem("the stored head hash is not the hash of the last entry".to_owned())
        }
        Ok(_) => {}
        Err(error) => problem(format!("hash chain: {error}")),
    }
    match rebuild(&entries) {
        Ok(rebuilt) => match serde_json::from_value::<State>(record.projection.clone()) {
            Ok(stored) if stored == rebuilt => {}
            Ok(_) => problem("the projection differs from the replayed log".to_owned()),
            Err(error) => problem(format!("the projection does not parse: {error}")),
        },
        Err(error) => problem(error),
    }
    Ok(entries.len() as u64)
}
