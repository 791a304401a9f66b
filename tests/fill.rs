//! `golf-server fill`: the games it writes are the API's own, served as such: finished games
//! that verify, an account's finished and playing games in its list, waiting games in the lobby;
//! and its standard output the accounts it signed up, whatever it logs.

mod common;

use std::process::Command;

use common::{Backend, TestDatabase, spawn_app_on};
use reqwest::Method;
use serde_json::Value;

async fn a_filled_database_serves_its_games_as_the_api_wrote_them(backend: Backend) {
    let database = TestDatabase::new(backend).await;
    let output = Command::new(env!("CARGO_BIN_EXE_golf-server"))
        .args([
            "fill",
            "--finished",
            "30",
            "--playing",
            "4",
            "--waiting",
            "3",
        ])
        .args(["--accounts", "2", "--concurrency", "4"])
        .env("DATABASE_URL", &database.url)
        // Every log line, on standard error: standard output is the accounts, one JSON each.
        .env("RUST_LOG", "debug")
        .output()
        .expect("run golf-server fill");
    assert!(output.status.success(), "{output:?}");
    let accounts: Vec<Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(accounts.len(), 2);
    let app = spawn_app_on(database).await;

    let lobby: Value = app
        .get("/v1/games?status=waiting")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(lobby["games"].as_array().unwrap().len(), 3, "{lobby}");

    // Every tenth finished game has seat 0 of account (n / 10) % 2: account 0 holds games 0
    // and 20, and two of the four playing games.
    let token = accounts[0]["token"].as_str().unwrap();
    let mine = app
        .send(Method::GET, "/v1/account/games", None, Some(token))
        .await;
    let mine: Value = mine.json().await.unwrap();
    // fill writes four games at once: a finished game may end after a playing one started.
    let field = |name: &str| -> Vec<String> {
        mine["games"]
            .as_array()
            .unwrap()
            .iter()
            .map(|game| game[name].as_str().unwrap().to_owned())
            .collect()
    };
    let mut statuses = field("status");
    statuses.sort_unstable();
    assert_eq!(
        statuses,
        ["finished", "finished", "playing", "playing"],
        "{mine}"
    );
    let times = field("updated_at");
    assert!(
        times.is_sorted_by(|a, b| a >= b),
        "not newest first: {mine}"
    );
    for game in mine["games"].as_array().unwrap() {
        let id = game["id"].as_str().unwrap();
        if game["status"] == "finished" {
            let export = app.get(&format!("/v1/games/{id}/export")).await;
            assert_eq!(export.status(), 200);
            let log = export.text().await.unwrap();
            let verified = Command::new(env!("CARGO_BIN_EXE_golf-server"))
                .args(["verify", "-"])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::null())
                .spawn()
                .and_then(|mut child| {
                    use std::io::Write as _;
                    child.stdin.take().unwrap().write_all(log.as_bytes())?;
                    child.wait()
                })
                .expect("run golf-server verify");
            assert!(verified.success(), "game {id} does not verify");
        }
    }
}

on_both_backends!(a_filled_database_serves_its_games_as_the_api_wrote_them);
