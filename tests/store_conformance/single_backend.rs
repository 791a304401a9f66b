//! Conformance cases that only one backend, or none, can stage: a killed connection, a dead
//! port, a URL of another database.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::Backend;
use golf_server::store::{self, PoolOptions, StoreError, verify_chain};
use serde_json::json;
use sqlx::{Connection, PgConnection};

use super::TestDb;
use super::fixtures::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_terminated_append_leaves_nothing() {
    // An append whose connection is killed mid-write (after inserting its events: one statement
    // on PostgreSQL) writes nothing, fails as Unavailable, and the next append succeeds.
    let db = TestDb::connect(Backend::Postgres).await;
    let store = Arc::clone(&db.store);
    let game = create(store.as_ref(), "2026-05-01T12:00:00Z").await;

    // An open transaction holding seat 0 makes the append wait after its event inserts.
    let mut blocker = PgConnection::connect(&db.url).await.expect("connect");
    sqlx::raw_sql("BEGIN")
        .execute(&mut blocker)
        .await
        .expect("begin");
    sqlx::query(
        "INSERT INTO seats (game_id, seat, name, client_seed) VALUES ($1, 0, 'blocker', 's')",
    )
    .bind(game.id)
    .execute(&mut blocker)
    .await
    .expect("hold seat 0");

    let appending = tokio::spawn({
        let store = Arc::clone(&store);
        async move {
            let events = vec![
                event("player_joined", json!({"seat": 0})),
                event("player_joined", json!({"seat": 0, "again": true})),
            ];
            let joined = seat_update("waiting", 0, Some([5; 32]));
            append_at(store.as_ref(), game.id, 1, events, joined, None).await
        }
    });

    let mut watcher = PgConnection::connect(&db.url).await.expect("connect");
    let deadline = Instant::now() + Duration::from_secs(10);
    let pid: i32 = loop {
        let waiting: Option<i32> = sqlx::query_scalar(
            // The append is the only session of this fresh database that can wait on a lock
            // (pg_stat_activity cuts its long statement's text short of the seats part).
            "SELECT pid FROM pg_stat_activity \
             WHERE datname = current_database() AND wait_event_type = 'Lock'",
        )
        .fetch_optional(&mut watcher)
        .await
        .expect("pg_stat_activity");
        if let Some(pid) = waiting {
            break pid;
        }
        assert!(
            Instant::now() < deadline,
            "the append never waited on seat 0"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let wrote_events: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = $1 \
           AND relation = 'events'::regclass AND mode = 'RowExclusiveLock')",
    )
    .bind(pid)
    .fetch_one(&mut watcher)
    .await
    .expect("pg_locks");
    assert!(
        wrote_events,
        "the append inserted its events before waiting"
    );
    let killed: bool = sqlx::query_scalar("SELECT pg_terminate_backend($1)")
        .bind(pid)
        .fetch_one(&mut watcher)
        .await
        .expect("terminate");
    assert!(killed);

    let result = appending.await.expect("task");
    assert!(
        matches!(result, Err(StoreError::Unavailable(_))),
        "{result:?}"
    );
    sqlx::raw_sql("ROLLBACK")
        .execute(&mut blocker)
        .await
        .expect("rollback");

    assert_eq!(seqs(&all_events(store.as_ref(), game.id).await), [1]);
    let loaded = store.load_game(game.id).await.expect("load").expect("game");
    assert_eq!((loaded.version, loaded.players), (1, 0));
    assert!(loaded.seat_tokens.is_empty());

    let retried = append_at(
        store.as_ref(),
        game.id,
        1,
        vec![event("player_joined", json!({"seat": 0}))],
        seat_update("waiting", 0, Some([5; 32])),
        None,
    )
    .await
    .expect("the pool recovers");
    assert_eq!(seqs(&retried), [2]);
    let entries = all_events(store.as_ref(), game.id).await;
    let loaded = store.load_game(game.id).await.expect("load").expect("game");
    assert_eq!(verify_chain(&SEED, &entries), Ok(loaded.head_hash));
}

#[tokio::test]
async fn connect_to_a_dead_port_fails_fast() {
    // No server on the port: connect gives up with Unavailable within the acquire timeout.
    let options = PoolOptions {
        max_connections: 2,
        acquire_timeout: Duration::from_secs(1),
        ..PoolOptions::default()
    };
    let started = Instant::now();
    let result = store::connect("postgres://postgres@127.0.0.1:1/postgres", &options).await;
    assert!(
        matches!(result, Err(StoreError::Unavailable(_))),
        "{:?}",
        result.err()
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn connect_rejects_other_urls() {
    // A URL for another database is a clear configuration error.
    let result = store::connect("mysql://localhost/golf", &PoolOptions::default()).await;
    let Err(StoreError::Internal(message)) = result else {
        panic!("expected Internal, got {:?}", result.err());
    };
    assert!(message.contains("mysql"), "{message}");
}
