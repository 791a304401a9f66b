//! Two server instances on one database, each with its own cache of game states: whatever one
//! instance kept, the other's writes are seen at once, never overwritten, and never make a
//! legal request fail.

mod common;

use common::{Backend, Seat, TestApp, pick_move, spawn_app, spawn_app_on};
use reqwest::Method;
use serde_json::{Value, json};

/// Two instances over one fresh database.
async fn two_instances(backend: Backend) -> (TestApp, TestApp) {
    let first = spawn_app(backend).await;
    let second = spawn_app_on(first.database.shared()).await;
    (first, second)
}

async fn moves_alternate_between_instances_and_every_view_is_current(backend: Backend) {
    // Each move is read on one instance and sent to the other, whose kept state is then one move
    // behind: every view shows the latest version, every legal move is taken, If-Match with the
    // current version passes on the stale instance, and the finished log verifies.
    let (a, b) = two_instances(backend).await;
    let (id, _) = a.create_game(json!({"seats": 2, "holes": 2})).await;
    let seats: Vec<Seat> = vec![a.join(&id, "Ada").await, b.join(&id, "Bob").await];
    let instances = [&a, &b];
    let mut moves = 0;
    let mut version = 0;
    'game: for _round in 0..2000 {
        for seat in &seats {
            let reader = instances[moves % 2];
            let writer = instances[(moves + 1) % 2];
            let view = reader.view(&id, Some(&seat.token)).await;
            assert!(
                view["version"].as_i64().unwrap() >= version,
                "a view went back in time"
            );
            version = view["version"].as_i64().unwrap();
            // The other instance's view is as current: it checked its kept state.
            assert_eq!(writer.view(&id, Some(&seat.token)).await, view);
            if view["status"] == "finished" {
                break 'game;
            }
            let Some(mv) = pick_move(&view, moves) else {
                continue;
            };
            let response = writer
                .client
                .post(writer.url(&format!("/v1/games/{id}/moves")))
                .bearer_auth(&seat.token)
                .header("if-match", format!("\"{version}\""))
                .json(&mv)
                .send()
                .await
                .unwrap();
            let status = response.status();
            let body: Value = response.json().await.unwrap();
            assert_eq!(status, 200, "seat {} move {mv}: {body}", seat.seat);
            assert!(body["version"].as_i64().unwrap() > version);
            moves += 1;
        }
    }
    assert!(moves > 10, "{moves} moves");
    let final_view = a.view(&id, None).await;
    assert_eq!(final_view["status"], "finished");
    let audit: Value = b
        .send(Method::GET, &format!("/v1/games/{id}/audit"), None, None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(audit["verified"], true, "{audit}");
    let log = a.events(&id, None, 0).await;
    let seqs: Vec<i64> = log.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    assert_eq!(seqs, (1..=log.len() as i64).collect::<Vec<_>>());
    assert_eq!(audit["version"], log.len());
}

async fn a_stale_instance_refuses_only_what_the_database_refuses(backend: Backend) {
    // An instance that kept the game before the other instance's move still refuses a move out
    // of turn and a stale If-Match, with the current version; a game cancelled on one instance
    // is gone on the other.
    let (a, b) = two_instances(backend).await;
    let (id, created) = a.create_game(json!({"seats": 2, "holes": 1})).await;
    let seats: Vec<Seat> = vec![a.join(&id, "Ada").await, a.join(&id, "Bob").await];
    for seat in &seats {
        let reveal = json!({"type": "reveal", "positions": [0, 3]});
        assert_eq!(a.play(&id, &seat.token, &reveal).await.status(), 200);
    }
    // b keeps the game now; a moves it on.
    let kept = b.view(&id, Some(&seats[0].token)).await;
    let mover = kept["current_seat"].as_u64().unwrap() as usize;
    let draw = json!({"type": "draw", "source": "stock"});
    assert_eq!(a.play(&id, &seats[mover].token, &draw).await.status(), 200);
    // On b, the same draw again is out of turn order now (the mover must place the card).
    let again = b.play(&id, &seats[mover].token, &draw).await;
    assert_eq!(again.status(), 409, "{:?}", again.text().await);
    let stale_tag = b
        .client
        .post(b.url(&format!("/v1/games/{id}/moves")))
        .bearer_auth(&seats[mover].token)
        .header("if-match", format!("\"{}\"", kept["version"]))
        .json(&json!({"type": "discard"}))
        .send()
        .await
        .unwrap();
    assert_eq!(stale_tag.status(), 412);
    assert_eq!(
        b.view(&id, None).await["version"],
        a.view(&id, None).await["version"]
    );

    let (waiting, created_waiting) = a.create_game(json!({"seats": 2, "holes": 1})).await;
    let host = created_waiting["host_token"].as_str().unwrap().to_owned();
    assert_eq!(b.view(&waiting, None).await["status"], "waiting");
    let cancelled = a
        .send(
            Method::DELETE,
            &format!("/v1/games/{waiting}"),
            None,
            Some(&host),
        )
        .await;
    assert_eq!(cancelled.status(), 204);
    let gone = b
        .send(Method::GET, &format!("/v1/games/{waiting}"), None, None)
        .await;
    assert_eq!(gone.status(), 404);
    let join = b
        .send(
            Method::POST,
            &format!("/v1/games/{waiting}/players"),
            Some(&json!({"name": "Cy"})),
            None,
        )
        .await;
    assert_eq!(join.status(), 404);
    assert!(created["host_token"].is_string());
}

on_both_backends!(
    moves_alternate_between_instances_and_every_view_is_current,
    a_stale_instance_refuses_only_what_the_database_refuses,
);
