//! Batches of appends whose games another transaction holds, on PostgreSQL (SQLite has one write
//! lock for the whole database, so no batch there waits on one game's row).

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::Backend;
use golf_server::store::{self, Append, EventStore, PoolOptions, StoreError, verify_chain};
use serde_json::json;
use sqlx::{Connection, PgConnection};
use uuid::Uuid;

use super::TestDb;
use super::fixtures::*;

/// A store whose statements wait at most 200 ms for a lock (half the statement timeout).
async fn impatient_store(url: &str) -> Arc<dyn EventStore> {
    let options = PoolOptions {
        max_connections: 2,
        statement_timeout: Duration::from_millis(400),
        ..PoolOptions::default()
    };
    store::connect(url, &options).await.expect("connect")
}

/// The append of one `flipped` event to `game` after the head it has now.
async fn flip(store: &dyn EventStore, game: Uuid) -> Append {
    let loaded = store.load_game(game).await.expect("load").expect("game");
    Append {
        game_id: game,
        head: loaded.head(),
        events: vec![event("flipped", json!({"game": game}))],
        update: update("playing"),
        idem: None,
    }
}

/// The append of nothing to `game`: its row only, at the version it has now, which it keeps.
async fn touch(store: &dyn EventStore, game: Uuid) -> Append {
    Append {
        events: Vec::new(),
        ..flip(store, game).await
    }
}

/// The deadlocks PostgreSQL found in this database, once the sessions' counts are in: a session
/// reports them within a second of going idle.
async fn deadlocks(watcher: &mut PgConnection) -> i64 {
    tokio::time::sleep(Duration::from_millis(1500)).await;
    sqlx::query_scalar("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")
        .fetch_one(watcher)
        .await
        .expect("pg_stat_database")
}

/// An open transaction on a connection of its own that holds the rows of `games`.
async fn hold(url: &str, games: &[Uuid]) -> PgConnection {
    let mut conn = PgConnection::connect(url).await.expect("connect");
    sqlx::raw_sql("BEGIN")
        .execute(&mut conn)
        .await
        .expect("begin");
    sqlx::query("SELECT id FROM games WHERE id = ANY($1) FOR UPDATE")
        .bind(games)
        .execute(&mut conn)
        .await
        .expect("lock the game rows");
    conn
}

/// Waits until `count` statements of this database wait for a lock.
async fn until_waiting(watcher: &mut PgConnection, count: i64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let waiting: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity \
             WHERE datname = current_database() AND wait_event_type = 'Lock'",
        )
        .fetch_one(&mut *watcher)
        .await
        .expect("pg_stat_activity");
        if waiting >= count {
            return;
        }
        assert!(Instant::now() < deadline, "{count} appends never waited");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_held_game_fails_alone_in_its_batch() {
    // One game of a batch is held by another transaction past the lock timeout: its append alone
    // fails, as Busy (409 database_busy), and the others are written, each once; once the game is
    // free, its append at the same head is written too.
    let db = TestDb::connect(Backend::Postgres).await;
    let store = impatient_store(&db.url).await;
    let mut games = Vec::new();
    for _ in 0..4 {
        games.push(create(store.as_ref(), "2026-05-01T12:00:00Z").await.id);
    }
    let held = games[2];
    let mut appends = Vec::new();
    for &game in &games {
        appends.push(flip(store.as_ref(), game).await);
    }
    let retry = appends[2].clone();

    let holder = hold(&db.url, &[held]).await;
    let results = store.append(appends).await;
    for (game, result) in games.iter().zip(&results) {
        match result {
            Err(StoreError::Busy) if *game == held => {}
            Ok(entries) if *game != held => assert_eq!(seqs(entries), [2]),
            other => panic!("game {game} (held: {}): {other:?}", *game == held),
        }
    }
    holder.close().await.expect("release the game");

    assert!(append_one(store.as_ref(), retry).await.is_ok());
    for game in games {
        let log = all_events(store.as_ref(), game).await;
        assert_eq!(
            seqs(&log),
            [1, 2],
            "game {game}: one entry after its creation"
        );
        assert!(verify_chain(&SEED, &log).is_ok());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_batches_of_the_same_games_in_opposite_orders_never_deadlock() {
    // Two instances write batches of the same games, listed in opposite orders, while a third
    // transaction holds one game of each: each batch takes the games before the one it waits
    // for, and once that one is free, both complete, without PostgreSQL finding a deadlock (one
    // of them would then fail). Appends of no events leave the versions as they are, so both
    // batches' appends to a game are written.
    let db = TestDb::connect(Backend::Postgres).await;
    // Patient enough for PostgreSQL to look for a deadlock (after deadlock_timeout, 1 s) before
    // the lock timeout (2.5 s) ends the wait.
    let patient = PoolOptions::default();
    let first = store::connect(&db.url, &patient)
        .await
        .expect("one instance");
    let second = store::connect(&db.url, &patient).await.expect("the other");
    let mut ids = Vec::new();
    for _ in 0..4 {
        ids.push(create(first.as_ref(), "2026-05-01T12:00:00Z").await.id);
    }
    ids.sort();
    // Whatever order a plan follows, the input's or the ids', one batch meets its gate after one
    // of the games it shares with the other, and the other before it.
    let (shared, gates) = ([ids[0], ids[3]], [ids[1], ids[2]]);
    let mut one_batch = Vec::new();
    let mut other_batch = Vec::new();
    for game in [shared[0], gates[0], shared[1]] {
        one_batch.push(touch(first.as_ref(), game).await);
    }
    for game in [shared[1], gates[1], shared[0]] {
        other_batch.push(touch(second.as_ref(), game).await);
    }

    let mut watcher = PgConnection::connect(&db.url).await.expect("connect");
    let deadlocks_before = deadlocks(&mut watcher).await;
    let holder = hold(&db.url, &gates).await;
    let one = tokio::spawn(async move { first.append(one_batch).await });
    until_waiting(&mut watcher, 1).await;
    let other = tokio::spawn(async move { second.append(other_batch).await });
    until_waiting(&mut watcher, 2).await;
    holder.close().await.expect("release the gates");

    let (one, other) = (
        one.await.expect("one batch"),
        other.await.expect("the other"),
    );
    assert!(
        one.iter().chain(&other).all(Result::is_ok),
        "{one:?} {other:?}"
    );
    assert_eq!(deadlocks(&mut watcher).await, deadlocks_before);
}
