//! golf-loadgen, the built binary, against a real server: each mode plays (or reads) real games,
//! reports what it did in the JSON it promises, and every game it finished verifies.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Output};

use common::{Backend, TestApp, spawn_app};
use serde_json::{Value, json};

/// Runs golf-loadgen against `app` with `args` (plus `--url`, `--json` and `--quiet`) and returns
/// its exit code and report. A safety `--duration` bounds runs that stop by `--total-games`.
async fn loadgen(app: &TestApp, args: &[&str]) -> (Option<i32>, Value) {
    let output = run(app, args).await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let report = serde_json::from_str(&stdout).unwrap_or_else(|error| {
        panic!(
            "golf-loadgen {args:?} printed no JSON report ({error}):\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output.status.code(), report)
}

async fn run(app: &TestApp, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_golf-loadgen"));
    command
        .args(["--url", &app.address, "--json", "--quiet"])
        .args(args);
    // The server runs on this test's runtime: wait for the binary on a thread of its own.
    tokio::task::spawn_blocking(move || command.output().expect("golf-loadgen runs"))
        .await
        .expect("the waiting thread")
}

/// The report has every field, each latency's percentiles in order, errors as counts by status,
/// and no 500 (bad luck under load may give a 503, never a 500).
fn assert_shape(report: &Value) {
    for field in [
        "moves_per_sec",
        "views_per_sec",
        "games_per_sec",
        "moves_acked",
        "views_read",
        "games_finished",
        "elapsed_s",
    ] {
        assert!(report[field].is_number(), "{field} in {report:#}");
    }
    for latency in ["move_latency_ms", "view_latency_ms"] {
        let l = &report[latency];
        let at = |q: &str| l[q].as_f64().unwrap_or_else(|| panic!("{latency}.{q}"));
        assert!(
            at("p50") <= at("p90") && at("p90") <= at("p99") && at("p99") <= at("max"),
            "{latency}: {l}"
        );
    }
    let errors = report["errors"].as_object().expect("errors is an object");
    assert!(errors.values().all(Value::is_u64), "{errors:?}");
    assert!(!errors.contains_key("500"), "{errors:?}");
}

fn count(report: &Value, field: &str) -> u64 {
    report[field]
        .as_u64()
        .unwrap_or_else(|| panic!("{field} in {report:#}"))
}

async fn moves_mode_plays_games_to_the_end_and_they_verify(backend: Backend) {
    let app = spawn_app(backend).await;
    let args = ["--games", "2", "--total-games", "2", "--duration", "120"];
    let (code, report) = loadgen(&app, &[&args[..], &["--check"]].concat()).await;
    assert_eq!(code, Some(0), "{report:#}");
    assert_shape(&report);
    assert_eq!(count(&report, "games_finished"), 2, "{report:#}");
    // A one-hole game of two seats takes at least 2 reveals and 2 draws and placements.
    assert!(count(&report, "moves_acked") >= 2 * 6, "{report:#}");
    assert!(report["moves_per_sec"].as_f64() > Some(0.0));
    assert!(report["move_latency_ms"]["max"].as_f64() > Some(0.0));
    // One-hole games: every move was chosen in hole 1.
    let by_hole = report["move_latency_by_hole_ms"]
        .as_object()
        .expect("by hole");
    assert_eq!(by_hole.keys().collect::<Vec<_>>(), ["1"], "{report:#}");
    assert_eq!(by_hole["1"]["max"], report["move_latency_ms"]["max"]);
    assert_eq!(report["check"]["checked"], 2, "{report:#}");
    assert_eq!(report["check"]["verified"], 2, "{report:#}");
}

async fn views_mode_only_reads_views_of_games_in_progress(backend: Backend) {
    let app = spawn_app(backend).await;
    let args = ["--mode", "views", "--games", "2", "--duration", "2"];
    let (code, report) = loadgen(&app, &[&args[..], &["--check"]].concat()).await;
    assert_eq!(code, Some(0), "{report:#}");
    assert_shape(&report);
    assert!(count(&report, "views_read") >= 2, "{report:#}");
    assert!(report["view_latency_ms"]["p50"].as_f64() > Some(0.0));
    // The moves that set the games up are not measured, and no game ends.
    assert_eq!(count(&report, "moves_acked"), 0, "{report:#}");
    assert_eq!(count(&report, "games_finished"), 0, "{report:#}");
    assert_eq!(report["check"]["checked"], 0, "{report:#}");
}

async fn views_mode_reads_views_in_the_hole_asked_for(backend: Backend) {
    // --view-hole 3 plays each game into hole 3 first: the games it read are there, and stay.
    let app = spawn_app(backend).await;
    let dir = tempfile::tempdir().expect("temporary directory");
    let games_file = dir.path().join("games.ndjson");
    let args = [
        "--mode",
        "views",
        "--games",
        "2",
        "--holes",
        "3",
        "--view-hole",
        "3",
        "--duration",
        "1",
        "--games-file",
        games_file.to_str().expect("UTF-8 path"),
    ];
    let (code, report) = loadgen(&app, &args).await;
    assert_eq!(code, Some(0), "{report:#}");
    assert!(count(&report, "views_read") >= 2, "{report:#}");
    let listed = std::fs::read_to_string(&games_file).expect("games file");
    assert_eq!(listed.lines().count(), 2, "{listed}");
    for line in listed.lines() {
        let game: Value = serde_json::from_str(line).expect("an NDJSON line");
        let view = app.view(game["game"].as_str().expect("id"), None).await;
        assert_eq!(
            (&view["hole"], &view["status"]),
            (&json!(3), &json!("playing")),
            "{view:#}"
        );
        assert_ne!(view["stage"], "reveal", "{view:#}");
    }
}

async fn players_mode_seats_play_from_their_own_views(backend: Backend) {
    let app = spawn_app(backend).await;
    let args = ["--mode", "players", "--games", "2", "--total-games", "2"];
    let (code, report) = loadgen(
        &app,
        &[&args[..], &["--duration", "120", "--check"]].concat(),
    )
    .await;
    assert_eq!(code, Some(0), "{report:#}");
    assert_shape(&report);
    assert_eq!(count(&report, "games_finished"), 2, "{report:#}");
    assert!(count(&report, "moves_acked") >= 2 * 6, "{report:#}");
    assert!(count(&report, "views_read") >= 2, "{report:#}");
    assert_eq!(report["check"]["verified"], 2, "{report:#}");
}

async fn players_with_accounts_follow_their_accounts_events(backend: Backend) {
    // Each of the 4 accounts gets its game's game_started and at least one your_turn (its
    // initial reveal) on its stream, and the report says how long each took from its write.
    let app = spawn_app(backend).await;
    let args = [
        "--mode",
        "players",
        "--accounts",
        "--games",
        "2",
        "--total-games",
        "2",
        "--duration",
        "120",
    ];
    let (code, report) = loadgen(&app, &args).await;
    assert_eq!(code, Some(0), "{report:#}");
    assert_shape(&report);
    assert_eq!(count(&report, "games_finished"), 2, "{report:#}");
    assert!(count(&report, "account_events") >= 4 * 2, "{report:#}");
    let lag = &report["account_event_lag_ms"];
    assert!(
        lag["p50"].as_f64().unwrap() <= lag["max"].as_f64().unwrap(),
        "{report:#}"
    );
}

async fn streams_mode_holds_every_seat_s_stream_open_without_a_move(backend: Backend) {
    let app = spawn_app(backend).await;
    let args = [
        "--mode",
        "streams",
        "--games",
        "2",
        "--seats",
        "3",
        "--duration",
        "1",
    ];
    let (code, report) = loadgen(&app, &args).await;
    assert_eq!(code, Some(0), "{report:#}");
    assert_shape(&report);
    assert_eq!(count(&report, "streams_opened"), 6, "{report:#}");
    assert_eq!(count(&report, "games_started"), 2, "{report:#}");
    assert_eq!(count(&report, "moves_acked"), 0, "{report:#}");
    assert_eq!(report["errors"], json!({}), "{report:#}");
}

/// The entry types a player's move writes first (a move may add others: a reshuffle before a
/// draw, the end of a hole and the next deal after the move that ends it).
const MOVE_ENTRIES: [&str; 6] = [
    "cards_revealed",
    "card_drawn",
    "card_swapped",
    "card_discarded",
    "card_flipped",
    "flip_declined",
];

/// The acknowledged moves of `--acked-log` files, by game: the versions they answered.
fn acked(paths: &[&Path]) -> BTreeMap<String, Vec<i64>> {
    let mut games: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for path in paths {
        for line in std::fs::read_to_string(path).expect("acked log").lines() {
            let acked: Value = serde_json::from_str(line).expect("an NDJSON line");
            assert!(acked["move"]["type"].is_string(), "{acked}");
            games
                .entry(acked["game"].as_str().expect("game").to_owned())
                .or_default()
                .push(acked["seq"].as_i64().expect("seq"));
        }
    }
    games
}

async fn a_second_run_resumes_the_games_of_the_first(backend: Backend) {
    let app = spawn_app(backend).await;
    let dir = tempfile::tempdir().expect("temporary directory");
    let (games_file, first_log, second_log) = (
        dir.path().join("games.ndjson"),
        dir.path().join("acked-1.ndjson"),
        dir.path().join("acked-2.ndjson"),
    );
    let path = |path: &Path| path.to_str().expect("UTF-8 path").to_owned();
    let first = [
        "--games",
        "2",
        "--holes",
        "6",
        "--duration",
        "1",
        "--idempotency-keys",
        "--games-file",
        &path(&games_file),
        "--acked-log",
        &path(&first_log),
    ];
    let (code, first) = loadgen(&app, &first).await;
    assert_eq!(code, Some(0), "{first:#}");
    let listed = std::fs::read_to_string(&games_file).expect("games file");
    let ids: BTreeSet<String> = listed
        .lines()
        .map(|line| {
            let game: Value = serde_json::from_str(line).expect("an NDJSON line");
            assert_eq!(game["tokens"].as_array().map(Vec::len), Some(2), "{game}");
            game["game"].as_str().expect("game").to_owned()
        })
        .collect();
    assert!(ids.len() >= 2, "{listed}");

    let second = [
        "--resume",
        &path(&games_file),
        "--check",
        "--acked-log",
        &path(&second_log),
    ];
    let (code, second) = loadgen(&app, &second).await;
    assert_eq!(code, Some(0), "{second:#}");
    assert_eq!(
        count(&second, "games_finished"),
        ids.len() as u64,
        "{second:#}"
    );
    assert_eq!(second["check"]["verified"], ids.len(), "{second:#}");

    // Every move the server acknowledged, in either run, is in its game's log once, in order.
    let acked = acked(&[&first_log, &second_log]);
    assert_eq!(acked.keys().cloned().collect::<BTreeSet<_>>(), ids);
    for (id, versions) in &acked {
        assert!(versions.is_sorted_by(|a, b| a < b), "{id}: {versions:?}");
        let log = app.events(id, None, 0).await;
        let moves = log
            .iter()
            .filter(|entry| MOVE_ENTRIES.iter().any(|kind| entry["type"] == *kind))
            .count();
        assert_eq!(moves, versions.len(), "{id}");
        let head = log.last().and_then(|entry| entry["seq"].as_i64());
        assert_eq!(versions.last().copied(), head, "{id}");
    }
}

on_both_backends!(
    moves_mode_plays_games_to_the_end_and_they_verify,
    views_mode_only_reads_views_of_games_in_progress,
    views_mode_reads_views_in_the_hole_asked_for,
    players_mode_seats_play_from_their_own_views,
    players_with_accounts_follow_their_accounts_events,
    streams_mode_holds_every_seat_s_stream_open_without_a_move,
    a_second_run_resumes_the_games_of_the_first,
);

#[test]
fn flags_that_contradict_each_other_are_refused() {
    let output = Command::new(env!("CARGO_BIN_EXE_golf-loadgen"))
        .args(["--mode", "views", "--total-games", "3"])
        .output()
        .expect("golf-loadgen runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("views and streams modes run for a --duration only"),
        "{stderr}"
    );
    let output = Command::new(env!("CARGO_BIN_EXE_golf-loadgen"))
        .args(["--mode", "views", "--holes", "2", "--view-hole", "3"])
        .output()
        .expect("golf-loadgen runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--view-hole must be a hole of the game"),
        "{stderr}"
    );
}
