//! `golf-server check-db`: every stored log verifies and replays to its projection, and
//! tampering with either is reported.

mod common;

use common::{Backend, Seat, TestApp, open_store, pick_move, spawn_app};
use golf_server::commands::check_db::{CheckReport, check_database};
use reqwest::Method;
use serde_json::json;
use uuid::Uuid;

/// A finished all-bot game (played out by the request that seats the last bot), a game in
/// progress, a waiting game and a cancelled one.
async fn populate(app: &TestApp) -> (String, String) {
    let (bots_game, created) = app
        .create_game(json!({"seats": 4, "holes": 2, "rules": {"flip_after_discard": "optional"}}))
        .await;
    let host = created["host_token"].as_str().unwrap().to_owned();
    for (n, bot) in ["random", "greedy", "random", "greedy"].iter().enumerate() {
        let response = app
            .send(
                Method::POST,
                &format!("/v1/games/{bots_game}/players"),
                Some(&json!({"name": format!("Bot {n}"), "bot": bot})),
                Some(&host),
            )
            .await;
        assert_eq!(response.status(), 201);
    }
    assert_eq!(app.view(&bots_game, None).await["status"], "finished");

    let (running, _) = app.create_game(json!({"seats": 2, "holes": 3})).await;
    let seats: Vec<Seat> = vec![
        app.join(&running, "Ada").await,
        app.join(&running, "Bob").await,
    ];
    for turn in 0..30 {
        for seat in &seats {
            let view = app.view(&running, Some(&seat.token)).await;
            if let Some(mv) = pick_move(&view, turn) {
                assert_eq!(app.play(&running, &seat.token, &mv).await.status(), 200);
            }
        }
    }

    app.create_game(json!({"seats": 3})).await;
    let (cancelled, created) = app.create_game(json!({"seats": 2})).await;
    let response = app
        .send(
            Method::DELETE,
            &format!("/v1/games/{cancelled}"),
            None,
            created["host_token"].as_str(),
        )
        .await;
    assert_eq!(response.status(), 204);
    (bots_game, running)
}

/// Runs a statement on the test database, in the dialect of its backend.
async fn tamper(app: &TestApp, backend: Backend, postgres: &str, sqlite: &str, game: &str) {
    let id: Uuid = game.parse().unwrap();
    let changed = match backend {
        Backend::Postgres => {
            let pool = sqlx::PgPool::connect(&app.database.url).await.unwrap();
            sqlx::query(sqlx::AssertSqlSafe(postgres.to_owned()))
                .bind(id)
                .execute(&pool)
                .await
                .unwrap()
                .rows_affected()
        }
        Backend::Sqlite => {
            let pool = sqlx::SqlitePool::connect(&app.database.url).await.unwrap();
            sqlx::query(sqlx::AssertSqlSafe(sqlite.to_owned()))
                .bind(id)
                .execute(&pool)
                .await
                .unwrap()
                .rows_affected()
        }
    };
    assert_eq!(changed, 1, "the tampering statement changed one row");
}

/// Checks the test database as check-db does; returns the report and its problems as
/// (game id, problem) pairs.
async fn check(app: &TestApp) -> (CheckReport, Vec<(String, String)>) {
    let report = check_database(open_store(&app.database.url).await.as_ref())
        .await
        .unwrap();
    let problems = report
        .problems
        .iter()
        .map(|p| (p.game_id.to_string(), p.problem.clone()))
        .collect();
    (report, problems)
}

/// Asserts that `game` has a problem that says `text`.
fn assert_problem(problems: &[(String, String)], game: &str, text: &str) {
    assert!(
        problems
            .iter()
            .any(|(id, problem)| id == game && problem.contains(text)),
        "no problem of {game} says {text:?}: {problems:?}"
    );
}

async fn stored_games_verify_and_replay_to_their_projections(backend: Backend) {
    let app = spawn_app(backend).await;
    populate(&app).await;
    let (report, problems) = check(&app).await;
    assert_eq!(problems, vec![]);
    assert_eq!(report.games, 3, "the cancelled game is not listed");
    assert!(report.entries > 100, "{report:?}");
}

async fn tampered_logs_and_projections_are_reported(backend: Backend) {
    let app = spawn_app(backend).await;
    let (bots_game, running) = populate(&app).await;
    tamper(
        &app,
        backend,
        "UPDATE events SET at = '2000-01-01T00:00:00.000000Z' WHERE game_id = $1 AND seq = 3",
        "UPDATE events SET at = '2000-01-01T00:00:00.000000Z' WHERE game_id = ?1 AND seq = 3",
        &bots_game,
    )
    .await;
    tamper(
        &app,
        backend,
        "UPDATE games SET projection = jsonb_set(projection::jsonb, '{turns}', '999') WHERE id = $1",
        "UPDATE games SET projection = json_set(projection, '$.turns', 999) WHERE id = ?1",
        &running,
    )
    .await;
    let (_, problems) = check(&app).await;
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert_problem(&problems, &bots_game, "entry 3");
    assert_problem(&problems, &running, "projection");
}

async fn undecodable_games_are_reported_and_the_pass_goes_on(backend: Backend) {
    // A number no JSON reader of ours takes: the game row of one game and a log entry of another
    // no longer decode. Each is that game's problem; the third game is still checked.
    let app = spawn_app(backend).await;
    let (bots_game, running) = populate(&app).await;
    tamper(
        &app,
        backend,
        r#"UPDATE games SET rules = '{"n": 1e400}' WHERE id = $1"#,
        r#"UPDATE games SET rules = '{"n": 1e400}' WHERE id = ?1"#,
        &bots_game,
    )
    .await;
    tamper(
        &app,
        backend,
        r#"UPDATE events SET data = '{"n": 1e400}' WHERE game_id = $1 AND seq = 2"#,
        r#"UPDATE events SET data = '{"n": 1e400}' WHERE game_id = ?1 AND seq = 2"#,
        &running,
    )
    .await;
    let (report, problems) = check(&app).await;
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert_problem(&problems, &bots_game, "does not decode");
    assert_problem(&problems, &running, "does not decode");
    assert_eq!(report.games, 3, "{report:?}");
}

async fn an_entry_past_the_version_is_reported(backend: Backend) {
    // A stray entry after the game's version would make its next append collide.
    let app = spawn_app(backend).await;
    let (bots_game, _) = populate(&app).await;
    let copy_last = "INSERT INTO events (game_id, seq, type, data, at, salt, hash) \
                     SELECT game_id, seq + 1, type, data, at, salt, hash FROM events \
                     WHERE game_id = {id} ORDER BY seq DESC LIMIT 1";
    tamper(
        &app,
        backend,
        &copy_last.replace("{id}", "$1"),
        &copy_last.replace("{id}", "?1"),
        &bots_game,
    )
    .await;
    let (_, problems) = check(&app).await;
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_problem(&problems, &bots_game, "is past the version");
}

async fn a_log_that_breaks_the_rules_is_reported_not_replayed(backend: Backend) {
    // Events the engine would apply blindly (a dealer and a seat out of range overflow its
    // arithmetic) are refused before they are applied: check-db reports them and does not panic.
    let app = spawn_app(backend).await;
    let (bots_game, running) = populate(&app).await;
    tamper(
        &app,
        backend,
        "UPDATE events SET data = jsonb_set(data, '{dealer}', '255') \
         WHERE game_id = $1 AND type = 'hole_dealt' AND data->>'hole' = '1'",
        "UPDATE events SET data = json_set(data, '$.dealer', 255) \
         WHERE game_id = ?1 AND type = 'hole_dealt' AND json_extract(data, '$.hole') = 1",
        &bots_game,
    )
    .await;
    let first_swap = "(SELECT min(seq) FROM events WHERE game_id = {id} AND type = 'card_swapped')";
    tamper(
        &app,
        backend,
        &format!(
            "UPDATE events SET data = jsonb_set(data, '{{seat}}', '255') \
             WHERE game_id = $1 AND seq = {}",
            first_swap.replace("{id}", "$1")
        ),
        &format!(
            "UPDATE events SET data = json_set(data, '$.seat', 255) \
             WHERE game_id = ?1 AND seq = {}",
            first_swap.replace("{id}", "?1")
        ),
        &running,
    )
    .await;
    let (_, problems) = check(&app).await;
    assert_problem(
        &problems,
        &bots_game,
        "(hole_dealt) is not what the rules decide: dealer differs",
    );
    assert_problem(
        &problems,
        &running,
        "(card_swapped) is refused by the rules: no_such_seat",
    );
    // The hash chain notices the edits too; nothing else is wrong.
    assert_eq!(problems.len(), 4, "{problems:?}");
}

async fn a_deal_the_seed_does_not_give_is_reported(backend: Backend) {
    // The last two cards of hole 1's stock swapped: the same 52 cards, and none of the two
    // drawn yet, so the log still follows the rules; only dealing again from the server seed
    // tells. The replay reports it apart from the hash chain, and without naming a card.
    let app = spawn_app(backend).await;
    let (_, running) = populate(&app).await;
    tamper(
        &app,
        backend,
        "UPDATE events SET data = jsonb_set(jsonb_set(data, '{deck,50}', data->'deck'->51), \
         '{deck,51}', data->'deck'->50) \
         WHERE game_id = $1 AND type = 'hole_dealt' AND data->>'hole' = '1'",
        "UPDATE events SET data = json_set(data, '$.deck[50]', json_extract(data, '$.deck[51]'), \
         '$.deck[51]', json_extract(data, '$.deck[50]')) \
         WHERE game_id = ?1 AND type = 'hole_dealt' AND json_extract(data, '$.hole') = 1",
        &running,
    )
    .await;
    let (_, problems) = check(&app).await;
    let problem = |text: &str| (running.clone(), text.to_owned());
    assert_eq!(
        problems,
        vec![
            problem("hash chain: entry 4 has a wrong hash"),
            problem("entry 4 (hole_dealt) is not what the rules decide: deck differs"),
        ]
    );
}

async fn check_db_command_exits_1_on_a_mismatch(backend: Backend) {
    let app = spawn_app(backend).await;
    let (bots_game, _) = populate(&app).await;
    let run = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_golf-server"))
            .arg("check-db")
            .env("DATABASE_URL", &app.database.url)
            .env("RUST_LOG", "warn")
            .output()
            .unwrap()
    };
    let clean = run();
    let stdout = String::from_utf8_lossy(&clean.stdout).into_owned();
    assert!(clean.status.success(), "{stdout}");
    assert!(
        stdout.contains("3 games") && stdout.contains("0 problems"),
        "{stdout}"
    );

    tamper(
        &app,
        backend,
        "UPDATE games SET projection = jsonb_set(projection::jsonb, '{turns}', '999') WHERE id = $1",
        "UPDATE games SET projection = json_set(projection, '$.turns', 999) WHERE id = ?1",
        &bots_game,
    )
    .await;
    let tampered = run();
    let stdout = String::from_utf8_lossy(&tampered.stdout).into_owned();
    assert_eq!(tampered.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(&bots_game) && stdout.contains("1 problems"),
        "{stdout}"
    );
}

on_both_backends!(
    stored_games_verify_and_replay_to_their_projections,
    tampered_logs_and_projections_are_reported,
    undecodable_games_are_reported_and_the_pass_goes_on,
    an_entry_past_the_version_is_reported,
    a_log_that_breaks_the_rules_is_reported_not_replayed,
    a_deal_the_seed_does_not_give_is_reported,
    check_db_command_exits_1_on_a_mismatch,
);
