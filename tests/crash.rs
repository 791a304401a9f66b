//! Crash safety: the server is killed with SIGKILL while `golf-loadgen` plays games at once, and
//! started again on the same database: every move it had acknowledged is in the log, `check-db`
//! passes, and a second `golf-loadgen --resume` plays every game to its end, its audit verified.

mod common;

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use common::load::{self, AckedMove, ndjson};
use common::process::{ServerProcess, check_db};
use common::{Backend, TestApp, TestDatabase};
use serde_json::Value;

/// Games played at once.
const GAMES: &str = "8";

/// Moves acknowledged before the kill: enough that games are mid-hole, few enough that none is
/// near its end (three holes take about sixty moves).
const ACKS_BEFORE_KILL: usize = 60;

/// How long each step may take: the first acknowledgements, and the resumed games' ends.
const STEP_TIMEOUT: Duration = Duration::from_secs(40);

/// `golf-loadgen` with `args`, writing its JSON report to `output.json` and anything else to
/// `output.err` (files, so that nothing it prints can hold it up).
fn loadgen(args: &[&str], output: &Path) -> Child {
    let file = |extension: &str| {
        std::fs::File::create(output.with_extension(extension)).expect("an output file")
    };
    Command::new(env!("CARGO_BIN_EXE_golf-loadgen"))
        .args(["--json", "--quiet"])
        .args(args)
        .stdout(file("json"))
        .stderr(file("err"))
        .spawn()
        .expect("golf-loadgen starts")
}

/// The moves of `--acked-log` files, in the order acknowledged. A game's moves are played one
/// after another (with `If-Match`), so each one's entries lie after the version the previous
/// acknowledged move of its game answered.
fn acked_moves(logs: &[&Path]) -> Vec<AckedMove> {
    let mut last: BTreeMap<String, i64> = BTreeMap::new();
    let mut moves = Vec::new();
    for line in logs.iter().flat_map(|path| ndjson(path)) {
        let game = line["game"].as_str().expect("game").to_owned();
        let version = line["seq"].as_i64().expect("seq");
        let before = last.insert(game.clone(), version).unwrap_or(0);
        moves.push(AckedMove {
            game,
            seat: u8::try_from(line["seat"].as_u64().expect("seat")).unwrap(),
            before,
            version,
            mv: line["move"].clone(),
        });
    }
    moves
}

/// The status of game `id`, from its public view.
async fn status(app: &TestApp, id: &str) -> String {
    app.view(id, None).await["status"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn acknowledged_moves_survive_sigkill_and_every_game_resumes(backend: Backend) {
    let database = TestDatabase::new(backend).await;
    let files = tempfile::tempdir().unwrap();
    let [games_file, first_log, second_log] =
        ["games.ndjson", "acked-1.ndjson", "acked-2.ndjson"].map(|name| files.path().join(name));
    let path = |file: &Path| file.display().to_string();

    let mut server = ServerProcess::start(&database.url, &[]);
    // Killed once it has acknowledged enough moves: its duration only bounds it if the test
    // fails first.
    let duration = STEP_TIMEOUT.as_secs().to_string();
    let mut first_run = loadgen(
        &[
            "--url",
            &server.address,
            "--games",
            GAMES,
            "--holes",
            "3",
            "--duration",
            &duration,
            "--games-file",
            &path(&games_file),
            "--acked-log",
            &path(&first_log),
        ],
        &files.path().join("first"),
    );
    let started = Instant::now();
    while ndjson(&first_log).len() < ACKS_BEFORE_KILL {
        assert!(
            started.elapsed() < STEP_TIMEOUT,
            "golf-loadgen acknowledged {} moves within {STEP_TIMEOUT:?}",
            ndjson(&first_log).len()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.kill();
    // What the load generator received before the kill reaches its log at once.
    tokio::time::sleep(Duration::from_millis(300)).await;
    first_run.kill().expect("golf-loadgen is stopped");
    first_run.wait().expect("golf-loadgen is reaped");
    let acked_before_kill = acked_moves(&[&first_log]).len();
    let (passed, report) = check_db(&database.url);
    assert!(passed, "check-db after the kill:\n{report}");

    let server = ServerProcess::start(&database.url, &[]);
    let app = server.app(&database);
    let games: Vec<String> = ndjson(&games_file)
        .iter()
        .map(|game| game["game"].as_str().expect("game").to_owned())
        .collect();
    let mut unfinished = HashSet::new();
    for id in &games {
        if status(&app, id).await != "finished" {
            unfinished.insert(id.clone());
        }
    }
    assert!(!unfinished.is_empty(), "every game ended before the kill");
    let mut second_run = loadgen(
        &[
            "--url",
            &server.address,
            "--resume",
            &path(&games_file),
            "--acked-log",
            &path(&second_log),
            "--check",
        ],
        &files.path().join("second"),
    );
    let started = Instant::now();
    let exit = loop {
        if let Some(exit) = second_run.try_wait().expect("golf-loadgen runs") {
            break exit;
        }
        if started.elapsed() > STEP_TIMEOUT {
            second_run.kill().expect("golf-loadgen is stopped");
            panic!("the resumed games did not finish within {STEP_TIMEOUT:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let report = std::fs::read_to_string(files.path().join("second.json")).unwrap();
    let resumed: Value = serde_json::from_str(&report).expect("a JSON report");
    assert!(
        exit.success(),
        "golf-loadgen --resume: {resumed}\n{}",
        std::fs::read_to_string(files.path().join("second.err")).unwrap()
    );
    assert_eq!(resumed["check"]["failed"], 0, "{resumed}");

    let acked = acked_moves(&[&first_log, &second_log]);
    let mut found_before_kill = 0;
    for id in &games {
        assert_eq!(status(&app, id).await, "finished", "{id}");
        let log = app.events(id, None, 0).await;
        for (index, mv) in acked.iter().enumerate().filter(|(_, mv)| &mv.game == id) {
            assert!(
                load::times_logged(&log, mv) >= 1,
                "acknowledged move {mv:?} is not in the log"
            );
            found_before_kill += usize::from(index < acked_before_kill);
        }
        let audit = app.audit(id).await;
        assert_eq!(audit["verified"], true, "{audit}");
    }
    let (passed, report) = check_db(&database.url);
    assert!(passed, "check-db at the end:\n{report}");
    println!(
        "SIGKILL under golf-loadgen ({backend:?}): {acked_before_kill} moves acknowledged \
         before the kill, {found_before_kill} found in the log; {} of {} games resumed by \
         golf-loadgen --resume and finished, {} audits verified ({} moves acknowledged in all; \
         check-db: {})",
        unfinished.len(),
        games.len(),
        resumed["check"]["verified"],
        acked.len(),
        report.trim()
    );
}

on_both_backends!(acknowledged_moves_survive_sigkill_and_every_game_resumes);
