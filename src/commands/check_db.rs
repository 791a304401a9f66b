//! Auditing stored games: every log's hash chain, and its replay through the rules engine
//! against the stored projection (`golf-server check-db`).

use uuid::Uuid;

use crate::audit::replay::rebuild;
use crate::engine::Secrets;
use crate::store::codec::{projection_state, secrets_of};
use crate::store::{Entry, EventStore, GameRecord, StoreError, load_log, verify_chain};

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

/// Checks every game in the store. A game whose row or log does not decode is reported as that
/// game's problem and the pass goes on; only a database that fails to answer ends it.
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
            report.games += 1;
            match check_game(store, id, &mut report).await {
                Ok(entries) => report.entries += entries,
                Err(StoreError::Corrupt(error)) => report.problems.push(GameProblem {
                    game_id: id,
                    problem: format!("stored data does not decode: {error}"),
                }),
                Err(error) => return Err(error),
            }
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
    let secrets = secrets_of(&record)?;
    let stray = stray_entry(store, id, record.version).await?;
    let problems = [
        count_problem(&record, &entries),
        stray.map(|(seq, version)| {
            format!(
                "entry {seq} is past the version {version}: the next append would collide with it"
            )
        }),
        chain_problem(&record, &entries),
        replay_problem(id, &record, &entries, &secrets),
    ];
    let problems = problems.into_iter().flatten();
    report.problems.extend(problems.map(|problem| GameProblem {
        game_id: id,
        problem,
    }));
    Ok(entries.len() as u64)
}

/// An entry past `version`, which makes every later append collide with it, as its seq and the
/// game's version. A live game may have moved on since it was read: only an entry still past
/// the version read again is stray.
async fn stray_entry(
    store: &dyn EventStore,
    id: Uuid,
    version: i64,
) -> Result<Option<(i64, i64)>, StoreError> {
    let Some(next) = store.load_events(id, version, 1).await?.into_iter().next() else {
        return Ok(None);
    };
    Ok(match store.load_game(id).await? {
        Some(now) if now.version < next.seq => Some((next.seq, now.version)),
        _ => None,
    })
}

/// A log with more or fewer entries than the game's version says.
fn count_problem(record: &GameRecord, entries: &[Entry]) -> Option<String> {
    (entries.len() as i64 != record.version).then(|| {
        format!(
            "version {} but {} log entries",
            record.version,
            entries.len()
        )
    })
}

/// A hash chain that breaks, or that does not end in the stored head hash.
fn chain_problem(record: &GameRecord, entries: &[Entry]) -> Option<String> {
    match verify_chain(&record.server_seed, entries) {
        Ok(head) if head != record.head_hash => {
            Some("the stored head hash is not the hash of the last entry".to_owned())
        }
        Ok(_) => None,
        Err(error) => Some(format!("hash chain: {error}")),
    }
}

/// A log that does not replay through the rules engine, or not to the stored projection.
fn replay_problem(
    id: Uuid,
    record: &GameRecord,
    entries: &[Entry],
    secrets: &Secrets,
) -> Option<String> {
    let rebuilt = match rebuild(entries, secrets) {
        Ok(rebuilt) => rebuilt,
        Err(error) => return Some(error),
    };
    match projection_state(id, &record.projection) {
        Ok(stored) if stored == rebuilt => None,
        Ok(_) => Some("the projection differs from the replayed log".to_owned()),
        Err(error) => Some(error.to_string()),
    }
}
