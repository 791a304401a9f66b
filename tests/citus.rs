//! The service on a Citus cluster: a database of an earlier release distributed in place by
//! `golf-server distribute`, and the shards rebalanced onto a new worker while `golf-loadgen`
//! plays, without losing an acknowledged move. They need `DATABASE_URL` at a Citus coordinator
//! (scripts/test-citus runs them there, with `--ignored`).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::citus;
use common::cluster::Cluster;
use common::load::ndjson;
use common::process::{ServerProcess, check_db};
use common::{Backend, TestDatabase, admin_connection};
use serde_json::Value;
use sqlx::Connection;
use sqlx::postgres::PgConnection;

/// The log entries that record a player's move.
const MOVE_TYPES: &str = "'cards_revealed', 'card_drawn', 'card_swapped', 'card_discarded', \
                          'card_flipped', 'flip_declined'";

/// How long the load runs: the rebalance must be over well before it ends.
const LOAD_S: u64 = 75;

/// How long the rebalance may take.
const REBALANCE_TIMEOUT: Duration = Duration::from_secs(70);

/// Fails the test unless the tests' server is a Citus coordinator with workers.
async fn require_citus() {
    let workers = citus::workers(&mut admin_connection().await).await;
    assert!(
        !workers.is_empty(),
        "DATABASE_URL is not the coordinator of a Citus cluster with workers: run \
         scripts/test-citus"
    );
}

async fn connect(url: &str) -> PgConnection {
    PgConnection::connect(url).await.expect("connect")
}

/// `golf-server distribute` on `url`: its exit status and what it printed.
fn distribute(url: &str) -> (bool, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_golf-server"))
        .arg("distribute")
        .env("DATABASE_URL", url)
        .env("RUST_LOG", "warn")
        .output()
        .expect("golf-server distribute runs");
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    (output.status.success(), text)
}

/// Each table and how Citus holds it.
async fn placements(conn: &mut PgConnection) -> BTreeMap<String, String> {
    let rows: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT table_name::text, citus_table_type, distribution_column FROM citus_tables",
    )
    .fetch_all(conn)
    .await
    .expect("citus_tables");
    rows.into_iter()
        .map(|(table, kind, column)| (table, format!("{kind} {column}")))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Citus coordinator in DATABASE_URL: scripts/test-citus"]
async fn an_earlier_releases_database_is_distributed_in_place_and_keeps_its_games() {
    require_citus().await;
    let database = TestDatabase::on_citus_undistributed().await;
    sqlx::raw_sql(include_str!("fixtures/upgrade/postgres.sql"))
        .execute(&mut connect(&database.url).await)
        .await
        .expect("the earlier release's dump loads");
    // A connection of its own: the dump empties its session's search_path.
    let mut conn = connect(&database.url).await;
    let games: i64 = sqlx::query_scalar("SELECT count(*) FROM games WHERE status <> 'cancelled'")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    let entries: i64 = sqlx::query_scalar("SELECT count(*) FROM events")
        .fetch_one(&mut conn)
        .await
        .unwrap();

    let (ok, said) = distribute(&database.url);
    assert!(ok, "golf-server distribute failed:\n{said}");
    assert!(said.contains("games: distributed by id"), "{said}");
    let tables = placements(&mut conn).await;
    for game_table in ["games", "events", "seats", "snapshots", "account_games"] {
        let column = if game_table == "games" {
            "id"
        } else {
            "game_id"
        };
        assert_eq!(
            tables[game_table],
            format!("distributed {column}"),
            "{tables:?}"
        );
    }
    assert_eq!(tables["accounts"], "distributed username", "{tables:?}");
    assert_eq!(tables["seeks"], "reference <none>", "{tables:?}");
    let (ok, again) = distribute(&database.url);
    assert!(
        ok && again.contains("every table is distributed already"),
        "{again}"
    );

    // The rows moved to the workers: the coordinator holds none of them.
    let counted: (i64, i64) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM games WHERE status <> 'cancelled'), \
            (SELECT count(*) FROM events)",
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    assert_eq!(counted, (games, entries));
    let (passed, report) = check_db(&database.url);
    assert!(passed, "check-db on the distributed database:\n{report}");
    assert!(report.contains(&format!("{games} games")), "{report}");

    // Served as before: every game's public view, and a new game played on it. The fixture's
    // waiting games are older than a day: they wait on (the default expiry would cancel them).
    let server = ServerProcess::start(&database.url, &[("GOLF_WAITING_EXPIRY_S", "315360000")]);
    let app = server.app(&database);
    let ids: Vec<uuid::Uuid> =
        sqlx::query_scalar("SELECT id FROM games WHERE status <> 'cancelled' ORDER BY id")
            .fetch_all(&mut conn)
            .await
            .unwrap();
    for id in ids {
        let response = app.get(&format!("/v1/games/{id}")).await;
        assert_eq!(response.status(), 200, "game {id}");
    }
    let game = common::load::start_games(&app, 1, 1).await.remove(0);
    common::play_to_the_end(&app, &game.id, &game.seats).await;
    assert_eq!(app.view(&game.id, None).await["status"], "finished");
    assert_eq!(app.audit(&game.id).await["verified"], true);
    println!(
        "distribute on an earlier release's database ({games} games, {entries} entries):\n{said}"
    );
}

/// The shards placed on the node listening on `port`.
async fn shards_on(conn: &mut PgConnection, port: u16) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM pg_dist_shard_placement WHERE nodeport = $1")
        .bind(i32::from(port))
        .fetch_one(conn)
        .await
        .expect("the placements")
}

/// A throwaway PostgreSQL cluster with Citus loaded, holding an empty database `name` with the
/// extension: a worker ready to be added.
async fn new_worker(name: &str) -> Cluster {
    let worker = tokio::task::spawn_blocking(|| {
        Cluster::start_with("-c shared_preload_libraries=citus -c wal_level=logical")
    })
    .await
    .unwrap()
    .expect("a throwaway cluster for the new worker");
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut connect(&worker.url()).await)
        .await
        .expect("the test database on the new worker");
    sqlx::raw_sql("CREATE EXTENSION citus")
        .execute(&mut connect(&common::with_database(&worker.url(), name)).await)
        .await
        .expect("citus on the new worker");
    worker
}

/// The acknowledged moves (lines of `--acked-log`) whose version is not in the log.
async fn not_logged(conn: &mut PgConnection, acked: &[Value]) -> Vec<Value> {
    let mut missing = Vec::new();
    for line in acked {
        let found: Option<i64> =
            sqlx::query_scalar("SELECT seq FROM events WHERE game_id = $1::uuid AND seq = $2")
                .bind(line["game"].as_str().unwrap())
                .bind(line["seq"].as_i64().unwrap())
                .fetch_optional(&mut *conn)
                .await
                .unwrap();
        if found.is_none() {
            missing.push(line.clone());
        }
    }
    missing
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Citus coordinator in DATABASE_URL: scripts/test-citus"]
async fn a_rebalance_onto_a_new_worker_under_load_loses_no_move() {
    require_citus().await;
    let database = TestDatabase::new(Backend::Postgres).await;
    let name = database.name.clone().expect("a PostgreSQL database");
    let new_worker = new_worker(&name).await;

    let server = ServerProcess::start(&database.url, &[]);
    let files = tempfile::tempdir().unwrap();
    let acked_log = files.path().join("acked.ndjson");
    let report = files.path().join("report.json");
    let mut load = Command::new(env!("CARGO_BIN_EXE_golf-loadgen"))
        .args([
            "--url",
            &server.address,
            "--json",
            "--quiet",
            "--games",
            "16",
        ])
        .args(["--holes", "18", "--duration", &LOAD_S.to_string()])
        .arg("--acked-log")
        .arg(&acked_log)
        .stdout(std::fs::File::create(&report).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .expect("golf-loadgen starts");
    let started = Instant::now();
    while ndjson(&acked_log).len() < 100 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no load within 30 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let mut coordinator = connect(&database.url).await;
    sqlx::query("SELECT citus_add_node('127.0.0.1', $1)")
        .bind(i32::from(new_worker.port))
        .execute(&mut coordinator)
        .await
        .expect("the new worker is added");
    let acked_before = ndjson(&acked_log).len();
    let rebalancing = Instant::now();
    sqlx::query("SELECT citus_rebalance_start()")
        .execute(&mut coordinator)
        .await
        .expect("the rebalance starts");
    let waited = tokio::time::timeout(
        REBALANCE_TIMEOUT,
        sqlx::query("SELECT citus_rebalance_wait()").execute(&mut coordinator),
    )
    .await;
    let took = rebalancing.elapsed();
    let acked_during = ndjson(&acked_log).len() - acked_before;
    assert!(
        matches!(waited, Ok(Ok(_))),
        "the rebalance did not end within {REBALANCE_TIMEOUT:?}: {waited:?}"
    );
    let moved_shards = shards_on(&mut coordinator, new_worker.port).await;
    assert!(moved_shards > 0, "no shard moved to the new worker");
    assert!(
        acked_during > 0,
        "no move was acknowledged during the rebalance"
    );

    let exit = tokio::task::spawn_blocking(move || load.wait())
        .await
        .unwrap()
        .expect("golf-loadgen ends");
    assert!(
        exit.success(),
        "golf-loadgen failed: {}",
        std::fs::read_to_string(&report).unwrap()
    );
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap())
        .expect("golf-loadgen's report");
    let acked = ndjson(&acked_log);
    let logged: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT count(*) FROM events WHERE type IN ({MOVE_TYPES})"
    )))
    .fetch_one(&mut coordinator)
    .await
    .unwrap();
    let missing = not_logged(&mut coordinator, &acked).await;
    assert!(
        missing.is_empty(),
        "acknowledged moves not logged: {missing:?}"
    );
    assert_eq!(
        logged,
        acked.len() as i64,
        "moves logged against moves acknowledged (the load ran to its end: none in flight)"
    );
    let games: BTreeSet<&str> = acked
        .iter()
        .filter_map(|line| line["game"].as_str())
        .collect();
    let (passed, check) = check_db(&database.url);
    assert!(passed, "check-db after the rebalance:\n{check}");
    drop(server);
    println!(
        "rebalance onto a third worker under load: {moved_shards} shards moved in {:.1} s; \
         {acked_during} moves acknowledged during it; {} acknowledged in all over {} games, {logged} \
         logged, none missing; errors by status {}; check-db: {}",
        took.as_secs_f64(),
        acked.len(),
        games.len(),
        summary["errors"],
        check.trim()
    );
}
