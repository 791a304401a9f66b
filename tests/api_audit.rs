//! `GET /v1/games/{id}/audit`: where a game's log stands while it runs, and once it is finished
//! the result of the full check of its log, computed when it ends and stored.

mod common;

use common::{Backend, TestApp, open_store, spawn_app, spawn_app_on};
use golf_server::store::AuditResult;
use reqwest::Method;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use sqlx::Connection;
use sqlx::postgres::PgConnection;
use sqlx::sqlite::SqliteConnection;
use sqlx::types::Json;
use std::time::Duration;
use uuid::Uuid;

async fn audit_of(app: &TestApp, id: &str, token: Option<&str>) -> (u16, Value) {
    let response = app
        .send(Method::GET, &format!("/v1/games/{id}/audit"), None, token)
        .await;
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

/// A finished two-seat game of bots: seating the second bot plays it to its end.
async fn finished_bot_game(app: &TestApp, holes: u8) -> String {
    let (id, created) = app.create_game(json!({"seats": 2, "holes": holes})).await;
    let host = created["host_token"].as_str().unwrap();
    for name in ["Ann", "Bea"] {
        let body = json!({"name": name, "bot": "greedy"});
        let path = format!("/v1/games/{id}/players");
        let response = app.send(Method::POST, &path, Some(&body), Some(host)).await;
        assert_eq!(response.status(), 201);
    }
    id
}

/// The audit stored for a finished game: the instance stores it right after the move that ends
/// the game is answered, so it is waited for (10 s at most).
async fn stored_audit(app: &TestApp, id: Uuid) -> AuditResult {
    let store = open_store(&app.database.url).await;
    for _ in 0..200 {
        if let Some(audit) = store.load_game(id).await.unwrap().unwrap().audit {
            return audit;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the audit of game {id} was not stored within 10 s of its end");
}

/// How many logs the server's audit worker has replayed, from `/metrics`.
async fn replays(app: &TestApp) -> u64 {
    let text = app.get("/metrics").await.text().await.unwrap();
    text.lines()
        .find_map(|line| line.strip_prefix("golf_audits_replayed_total "))
        .map_or(0, |count| count.trim().parse().unwrap())
}

/// Rewrites the data of one stored log entry, as a corrupted or forged database would hold it.
async fn overwrite_entry(app: &TestApp, id: Uuid, seq: i64, data: &Value) {
    let statement = "UPDATE events SET data = $1 WHERE game_id = $2 AND seq = $3";
    let url = &app.database.url;
    let changed = match app.database.backend {
        Backend::Postgres => {
            let mut conn = PgConnection::connect(url).await.unwrap();
            let query = sqlx::query(statement).bind(Json(data)).bind(id).bind(seq);
            query.execute(&mut conn).await.unwrap().rows_affected()
        }
        Backend::Sqlite => {
            let mut conn = SqliteConnection::connect(url).await.unwrap();
            let query = sqlx::query(statement).bind(Json(data)).bind(id).bind(seq);
            query.execute(&mut conn).await.unwrap().rows_affected()
        }
    };
    assert_eq!(changed, 1);
}

/// Forgets every stored audit, as a database whose instance stopped before storing them holds.
async fn unset_audits(app: &TestApp) {
    let statement = "UPDATE games SET audit_verified = NULL, audit_first_bad_seq = NULL";
    match app.database.backend {
        Backend::Postgres => {
            let mut conn = PgConnection::connect(&app.database.url).await.unwrap();
            sqlx::query(statement).execute(&mut conn).await.unwrap();
        }
        Backend::Sqlite => {
            let mut conn = SqliteConnection::connect(&app.database.url).await.unwrap();
            sqlx::query(statement).execute(&mut conn).await.unwrap();
        }
    }
}

async fn a_running_game_shows_its_commitment_and_head_and_nothing_else(backend: Backend) {
    // While the game runs, the audit gives the commitment, the head of the log and its version;
    // the seed and the verdict are null.
    let app = spawn_app(backend).await;
    let (id, created) = app.create_game(json!({"seats": 2, "holes": 1})).await;
    let seat = app.join(&id, "Ada").await;
    app.join(&id, "Bob").await;
    let events = app.events(&id, Some(&seat.token), 0).await;
    let (status, audit) = audit_of(&app, &id, Some(&seat.token)).await;
    assert_eq!(status, 200);
    assert_eq!(
        audit,
        json!({
            "commitment": created["commitment"],
            "seed": null,
            "head_hash": events.last().unwrap()["hash"],
            "version": events.len(),
            "verified": null,
            "stacked": false,
            "first_bad_seq": null,
        })
    );
    assert_eq!(audit_of(&app, &id, None).await.1, audit);
    let unknown = Uuid::new_v4();
    assert_eq!(audit_of(&app, &unknown.to_string(), None).await.0, 404);
    assert_eq!(audit_of(&app, &id, Some("not-a-token")).await.0, 401);
}

async fn a_finished_game_is_audited_when_it_ends_and_the_result_stands(backend: Backend) {
    // The end of the game stores its audit: verified, with the seed that the commitment binds.
    // The stored result is what the endpoint answers, even if the log is changed later.
    let app = spawn_app(backend).await;
    let id = finished_bot_game(&app, 2).await;
    let game_id: Uuid = id.parse().unwrap();
    let stored = stored_audit(&app, game_id).await;
    assert!(stored.verified, "{stored:?}");

    let (status, audit) = audit_of(&app, &id, None).await;
    assert_eq!(status, 200);
    assert_eq!(
        (&audit["verified"], &audit["first_bad_seq"]),
        (&json!(true), &Value::Null)
    );
    let seed = hex::decode(audit["seed"].as_str().unwrap()).unwrap();
    assert_eq!(hex::encode(Sha256::digest(&seed)), audit["commitment"]);

    let log = app.events(&id, None, 0).await;
    let dealt = log
        .iter()
        .find(|entry| entry["type"] == "hole_dealt")
        .unwrap();
    let mut forged = dealt["data"].clone();
    forged["deck"].as_array_mut().unwrap().swap(0, 51);
    overwrite_entry(&app, game_id, dealt["seq"].as_i64().unwrap(), &forged).await;
    assert_eq!(audit_of(&app, &id, None).await.1, audit);
}

async fn a_game_finished_without_a_stored_audit_is_checked_once_when_asked(backend: Backend) {
    // A game whose audit was never stored (finished by an earlier release) is checked when its
    // audit is first asked for, once however many ask at the same time: a forged score is found
    // at its entry, even with no hash changed.
    let app = spawn_app(backend).await;
    let id = finished_bot_game(&app, 1).await;
    let game_id: Uuid = id.parse().unwrap();
    // The audit stored at the game's end is let finish before the log is forged and it is unset.
    stored_audit(&app, game_id).await;
    let log = app.events(&id, None, 0).await;
    let ended = log
        .iter()
        .find(|entry| entry["type"] == "hole_ended")
        .unwrap();
    let seq = ended["seq"].as_i64().unwrap();
    let mut forged = ended["data"].clone();
    forged["scores"][0] = json!(forged["scores"][0].as_i64().unwrap() - 5);
    overwrite_entry(&app, game_id, seq, &forged).await;
    unset_audits(&app).await;

    // Twenty clients ask at once: every one gets the verdict, and the log is replayed once.
    let before = replays(&app).await;
    let answers = futures_util::future::join_all((0..20).map(|_| audit_of(&app, &id, None))).await;
    for (status, audit) in answers {
        assert_eq!(status, 200);
        assert_eq!(
            (&audit["verified"], &audit["first_bad_seq"]),
            (&json!(false), &json!(seq))
        );
    }
    assert_eq!(
        replays(&app).await,
        before + 1,
        "one replay for twenty requests"
    );
    let store = open_store(&app.database.url).await;
    let stored = store.load_game(game_id).await.unwrap().unwrap().audit;
    assert_eq!(
        stored.map(|audit| (audit.verified, audit.first_bad_seq)),
        Some((false, Some(seq)))
    );
}

async fn a_finished_game_left_unaudited_is_audited_by_the_next_instance_unasked(backend: Backend) {
    // The database is the audits' queue: a game that finished without its audit stored (an
    // instance killed before the audit job got to it) is audited by the next instance that
    // starts, before anybody asks for it.
    let app = spawn_app(backend).await;
    let id = finished_bot_game(&app, 1).await;
    let game_id: Uuid = id.parse().unwrap();
    stored_audit(&app, game_id).await;
    unset_audits(&app).await;

    let next = spawn_app_on(app.database.shared()).await;
    let audit = stored_audit(&next, game_id).await;
    assert!(audit.verified, "{audit:?}");
    assert_eq!(
        replays(&next).await,
        1,
        "the next instance replayed the game unasked"
    );
}

on_both_backends!(
    a_running_game_shows_its_commitment_and_head_and_nothing_else,
    a_finished_game_left_unaudited_is_audited_by_the_next_instance_unasked,
    a_finished_game_is_audited_when_it_ends_and_the_result_stands,
    a_game_finished_without_a_stored_audit_is_checked_once_when_asked,
);
