//! Two instances, one database: two `golf-server` processes on different ports over the same
//! PostgreSQL database. The same move sent to both at once is applied exactly once, whether the
//! copies carry the same `If-Match` or the same `Idempotency-Key`; the views of both agree at
//! every step, and streams held on both deliver the same entries with the same seqs.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::load::{self, Game};
use common::process::ServerProcess;
use common::sse::{Followed, follow};
use common::{Backend, TestApp, TestDatabase, pick_move};
use reqwest::Method;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// What one copy of a move got: its status and body.
type Copy = (u16, Value);

/// Sends `mv` as `token` to game `id` on `app`, with `If-Match` and `Idempotency-Key` if given.
async fn send_move(
    app: &TestApp,
    id: &str,
    token: &str,
    mv: &Value,
    if_match: Option<i64>,
    key: Option<&str>,
) -> Copy {
    let mut request = app
        .client
        .request(Method::POST, app.url(&format!("/v1/games/{id}/moves")))
        .bearer_auth(token)
        .json(mv);
    if let Some(version) = if_match {
        request = request.header("If-Match", format!("\"{version}\""));
    }
    if let Some(key) = key {
        request = request.header("Idempotency-Key", key);
    }
    let response = request.send().await.expect("the move is answered");
    let status = response.status().as_u16();
    (status, response.json().await.expect("a JSON answer"))
}

/// Every seat's view and the public one, with their ETags, from `app`.
async fn views(app: &TestApp, game: &Game) -> Vec<(String, Value)> {
    let mut views = Vec::new();
    let tokens = game.seats.iter().map(|seat| Some(seat.token.as_str()));
    for token in tokens.chain([None]) {
        let path = match token {
            Some(_) => format!("/v1/games/{}/view", game.id),
            None => format!("/v1/games/{}", game.id),
        };
        let response = app.send(Method::GET, &path, None, token).await;
        assert_eq!(response.status(), 200, "{path}");
        let tag = response.headers()["etag"].to_str().unwrap().to_owned();
        views.push((tag, response.json().await.unwrap()));
    }
    views
}

/// Which race a move is sent in.
#[derive(Debug, Clone, Copy)]
enum Race {
    IfMatch,
    IdempotencyKey,
}

/// Checks the answers to the two copies of a move: exactly one applied it. With `If-Match` the
/// other is refused (412, or 409 if it lost a race with its twin inside the store); with an
/// `Idempotency-Key` the other gets the stored answer, the same body.
/// Returns what the twin copy got: its status, or "replay".
fn exactly_one_applied(race: Race, copies: &[Copy; 2], mv: &Value) -> String {
    let applied = copies.iter().filter(|(status, _)| *status == 200).count();
    let refused = copies.iter().find(|(status, _)| *status != 200);
    match (race, applied, refused) {
        (Race::IfMatch, 1, Some((status @ (409 | 412), _))) => status.to_string(),
        (Race::IdempotencyKey, 2, None) => {
            assert_eq!(
                copies[0].1, copies[1].1,
                "{mv}: a replay is the stored answer"
            );
            "replay".to_owned()
        }
        (Race::IdempotencyKey, 1, Some((409, _))) => "409".to_owned(),
        _ => panic!("{mv} ({race:?}): not exactly one copy applied: {copies:?}"),
    }
}

/// A stream's follower and its task.
type Follower = (Arc<Mutex<Followed>>, tokio::task::JoinHandle<()>);

/// Waits until every follower has received entry `seq`.
async fn wait_for_streams(followers: &[Follower], seq: i64) {
    let started = Instant::now();
    while followers
        .iter()
        .any(|(followed, _)| followed.lock().unwrap().last() < seq)
    {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the streams did not show entry {seq} within 10 s"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_apply_each_twin_move_once_and_agree_on_views_and_streams() {
    let database = TestDatabase::new(Backend::Postgres).await;
    let servers = [
        ServerProcess::start(&database.url, &[]),
        ServerProcess::start(&database.url, &[]),
    ];
    assert_ne!(servers[0].address, servers[1].address);
    let apps = [servers[0].app(&database), servers[1].app(&database)];
    let game = load::start_games(&apps[0], 1, 2).await.remove(0);

    // Seat 0 follows the game on both instances, from its first entry.
    let stop_following = CancellationToken::new();
    let mut followers: Vec<Follower> = Vec::new();
    for app in &apps {
        let followed = Arc::new(Mutex::new(Followed::default()));
        let task = tokio::spawn(follow(
            app.address.clone(),
            game.id.clone(),
            game.seats[0].token.clone(),
            Arc::clone(&followed),
            stop_following.clone(),
        ));
        followers.push((followed, task));
    }

    let mut races = [0usize; 2];
    let mut twins = std::collections::BTreeMap::new();
    let mut turn = 0;
    'game: loop {
        for seat in &game.seats {
            let [first, second] = [views(&apps[0], &game).await, views(&apps[1], &game).await];
            assert_eq!(first, second, "both instances show the same views");
            let view = &first[usize::from(seat.seat)].1;
            if view["status"] == "finished" {
                break 'game;
            }
            let Some(mv) = pick_move(view, turn) else {
                continue;
            };
            let before = view["version"].as_i64().unwrap();
            let race = if turn % 2 == 0 {
                Race::IfMatch
            } else {
                Race::IdempotencyKey
            };
            let (if_match, key) = match race {
                Race::IfMatch => (Some(before), None),
                Race::IdempotencyKey => (None, Some(format!("twin-{turn}"))),
            };
            let (a, b) = tokio::join!(
                send_move(
                    &apps[0],
                    &game.id,
                    &seat.token,
                    &mv,
                    if_match,
                    key.as_deref()
                ),
                send_move(
                    &apps[1],
                    &game.id,
                    &seat.token,
                    &mv,
                    if_match,
                    key.as_deref()
                ),
            );
            let copies = [a, b];
            let twin = exactly_one_applied(race, &copies, &mv);
            *twins.entry(format!("{race:?} {twin}")).or_insert(0) += 1;
            let version = copies
                .iter()
                .find(|(status, _)| *status == 200)
                .map(|(_, body)| body["version"].as_i64().unwrap())
                .unwrap();
            let log = apps[1].events(&game.id, None, before).await;
            let logged = log
                .iter()
                .filter(|entry| load::records(entry, seat.seat, &mv))
                .count();
            assert_eq!(logged, 1, "{mv} ({race:?}) is logged once: {log:?}");
            assert_eq!(
                log.last().unwrap()["seq"],
                version,
                "nothing but the move's entries"
            );
            // Both streams show the move before the next one, so that they redact alike.
            wait_for_streams(&followers, version).await;
            races[turn % 2] += 1;
            turn += 1;
        }
    }

    let last = apps[0].events(&game.id, None, 0).await.len() as i64;
    wait_for_streams(&followers, last).await;
    stop_following.cancel();
    let mut streamed = Vec::new();
    for (followed, task) in followers {
        task.await.expect("a follower");
        let followed = followed.lock().unwrap();
        assert_eq!(followed.ends, 0, "the streams stay open");
        streamed.push(followed.entries.clone());
    }
    assert_eq!(
        streamed[0], streamed[1],
        "both instances stream the same entries with the same seqs"
    );
    assert_eq!(
        streamed[0].iter().map(|(seq, _)| *seq).collect::<Vec<_>>(),
        (1..=last).collect::<Vec<_>>()
    );
    println!(
        "two instances, one database: {} moves each sent to both at once ({} with the same \
         If-Match, {} with the same Idempotency-Key), each applied exactly once; views equal \
         at every step; {last} entries streamed alike by both; the twin copies got {twins:?}",
        races[0] + races[1],
        races[0],
        races[1]
    );
}
