//! Crash safety: the server is killed with SIGKILL while games are played at once, and started
//! again on the same database: every move it had acknowledged is in the log, `check-db` passes,
//! and every game is played on to its end, its audit verified.

mod common;

use std::collections::HashSet;
use std::time::Duration;

use common::load::{self, Outcome, SharedRecord};
use common::process::{ServerProcess, check_db};
use common::{Backend, TestApp, TestDatabase};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Games played at once.
const GAMES: usize = 8;

/// Moves acknowledged before the kill: enough that some games are mid-hole, few enough that
/// none is near its end.
const ACKS_BEFORE_KILL: usize = 60;

/// How long the games may take to finish once the server is back.
const FINISH_WITHIN: Duration = Duration::from_secs(40);

/// The status of every game, from its public view.
async fn statuses(app: &TestApp, games: &[load::Game]) -> Vec<String> {
    let mut statuses = Vec::new();
    for game in games {
        let view = app.view(&game.id, None).await;
        statuses.push(view["status"].as_str().unwrap().to_owned());
    }
    statuses
}

async fn acknowledged_moves_survive_sigkill_and_every_game_resumes(backend: Backend) {
    let database = TestDatabase::new(backend).await;
    let mut server = ServerProcess::start(&database.url, &[]);
    let app = server.app(&database);
    let games = load::start_games(&app, GAMES, 3).await;
    let record = SharedRecord::default();
    let stop = CancellationToken::new();
    let mut players = load::play_all(&app, &games, &record, &stop);
    load::wait_for_acks(&record, ACKS_BEFORE_KILL, Duration::from_secs(30)).await;

    server.kill();
    // Nothing can be acknowledged any more: the players' requests find no server.
    let acked_before_kill = record.lock().unwrap().acked.len();
    stop.cancel();
    while let Some(ended) = players.join_next().await {
        ended.expect("a player task");
    }
    let (passed, report) = check_db(&database.url);
    assert!(passed, "check-db after the kill:\n{report}");

    let server = ServerProcess::start(&database.url, &[]);
    let app = server.app(&database);
    let unfinished: HashSet<String> = games
        .iter()
        .zip(statuses(&app, &games).await)
        .filter(|(_, status)| status != "finished")
        .map(|(game, _)| game.id.clone())
        .collect();
    assert!(!unfinished.is_empty(), "every game ended before the kill");
    let mut players = load::play_all(&app, &games, &record, &CancellationToken::new());
    let finishing = async {
        let mut resumed = 0;
        while let Some(ended) = players.join_next().await {
            let (id, outcome) = ended.expect("a player task");
            assert_eq!(outcome, Outcome::Finished, "{id}");
            resumed += usize::from(unfinished.contains(&id));
        }
        resumed
    };
    let resumed = tokio::time::timeout(FINISH_WITHIN, finishing)
        .await
        .unwrap_or_else(|_| {
            panic!(
                "the games did not finish within {FINISH_WITHIN:?}:\n{}",
                server.output()
            )
        });

    let acked = record.lock().unwrap().acked.clone();
    let mut found_before_kill = 0;
    for game in &games {
        let log = app.events(&game.id, None, 0).await;
        for (index, mv) in acked.iter().enumerate() {
            if mv.game != game.id {
                continue;
            }
            let times = load::times_logged(&log, mv);
            assert_eq!(times, 1, "acknowledged move {mv:?} is logged {times} times");
            found_before_kill += usize::from(index < acked_before_kill);
        }
        let audit: Value = app
            .get(&format!("/v1/games/{}/audit", game.id))
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(audit["verified"], true, "{audit}");
    }
    let (passed, report) = check_db(&database.url);
    assert!(passed, "check-db at the end:\n{report}");
    println!(
        "SIGKILL under load ({backend:?}): {acked_before_kill} moves acknowledged before the \
         kill, {found_before_kill} found in the log; {resumed} of {GAMES} games resumed and \
         finished ({} moves acknowledged in all, each logged once; check-db: {})",
        acked.len(),
        report.trim()
    );
}

on_both_backends!(acknowledged_moves_survive_sigkill_and_every_game_resumes);
