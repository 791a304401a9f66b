//! The event store's conformance suite: every case runs against PostgreSQL and SQLite, but the
//! few in `single_backend` that one backend alone can stage.
//!
//! Each test gets a fresh database from `common::TestDatabase` (on PostgreSQL, a database with a
//! random name on the server named by `DATABASE_URL` when it is a `postgres://` URL, else the
//! local one; a server that does not answer fails the test, it is never skipped), dropped
//! afterwards. Run: `cargo test --test store_conformance`.

mod common;
// A test crate finds its modules next to it, in tests/: these live in a folder of their own.
#[path = "store_conformance/fixtures.rs"]
mod fixtures;
#[path = "store_conformance/idempotency.rs"]
mod idempotency;
#[path = "store_conformance/known_head.rs"]
mod known_head;
#[path = "store_conformance/lock_waits.rs"]
mod lock_waits;
#[path = "store_conformance/random_games.rs"]
mod random_games;
#[path = "store_conformance/single_backend.rs"]
mod single_backend;
#[path = "store_conformance/snapshots_and_audits.rs"]
mod snapshots_and_audits;
#[path = "store_conformance/sweeps.rs"]
mod sweeps;

use std::sync::Arc;
use std::time::Duration;

use common::{Backend, TestDatabase};
use golf_server::engine::Status;
use golf_server::store::{self, EventStore, LobbyCursor, PoolOptions, StoreError, verify_chain};
use serde_json::json;
use sqlx::{Connection, PgConnection, SqliteConnection};
use uuid::Uuid;

use fixtures::*;
use idempotency::{
    a_join_key_seats_once_in_its_game_and_is_purged, a_purge_deletes_a_backlog_of_many_batches,
    account_events_older_than_thirty_days_are_purged_and_the_newer_kept,
    create_idempotency_and_key_conflicts, move_idempotency_found_then_expires,
};
use known_head::{
    a_batch_of_appends_fails_only_its_stale_members,
    an_append_after_a_known_head_is_written_only_at_that_version,
};
use random_games::rebuild_equals_projection_after_random_games;
use snapshots_and_audits::{
    finished_games_are_unanalysed_until_their_analysis_is_stored, the_first_audit_of_a_game_stands,
    the_latest_snapshot_at_or_before_a_seq_is_found,
    unanalysed_games_take_turns_between_their_hosts,
};
use sweeps::{
    expired_waiting_games_are_the_waiting_games_created_before_a_time,
    overdue_games_are_those_whose_stored_deadline_has_passed,
};

/// A store connected to a fresh database. The database goes with the value: a test that panics
/// drops it as it unwinds.
struct TestDb {
    store: Arc<dyn EventStore>,
    backend: Backend,
    url: String,
    database: TestDatabase,
}

impl TestDb {
    /// Creates a fresh database and connects a store to it, running the migrations. The
    /// database is dropped also when connecting fails.
    async fn connect(backend: Backend) -> Self {
        let database = TestDatabase::new(backend).await;
        let store = store::connect(&database.url, &PoolOptions::default())
            .await
            .expect("connect the store");
        TestDb {
            store,
            backend,
            url: database.url.clone(),
            database,
        }
    }

    /// Makes every idempotency record look older than the 24 h they are honored for.
    async fn age_idempotency_records(&self) {
        let statements = match self.backend {
            Backend::Postgres => [
                "UPDATE move_idempotency SET created_at = created_at - interval '25 hours'",
                "UPDATE create_idempotency SET created_at = created_at - interval '25 hours'",
            ],
            Backend::Sqlite => [
                "UPDATE move_idempotency SET created_at = created_at - 90000",
                "UPDATE create_idempotency SET created_at = created_at - 90000",
            ],
        };
        for statement in statements {
            self.execute(statement).await;
        }
    }

    /// Runs one statement on a connection of its own.
    async fn execute(&self, statement: &'static str) {
        match self.backend {
            Backend::Postgres => {
                let mut conn = PgConnection::connect(&self.url).await.expect("connect");
                sqlx::raw_sql(statement)
                    .execute(&mut conn)
                    .await
                    .expect("execute");
            }
            Backend::Sqlite => {
                let mut conn = SqliteConnection::connect(&self.url).await.expect("connect");
                sqlx::raw_sql(statement)
                    .execute(&mut conn)
                    .await
                    .expect("execute");
            }
        }
    }
}

on_both_backends!(
    create_and_load_round_trip,
    append_and_page_events,
    chain_verifies_after_appends,
    concurrent_appends_have_one_winner,
    stale_expected_version_conflicts,
    an_append_after_a_known_head_is_written_only_at_that_version,
    a_batch_of_appends_fails_only_its_stale_members,
    move_idempotency_found_then_expires,
    a_join_key_seats_once_in_its_game_and_is_purged,
    create_idempotency_and_key_conflicts,
    a_purge_deletes_a_backlog_of_many_batches,
    account_events_older_than_thirty_days_are_purged_and_the_newer_kept,
    lobby_lists_public_waiting_games_newest_first,
    cancel_only_while_waiting,
    game_ids_page_through_every_game,
    a_write_behind_a_held_lock_is_busy,
    rebuild_equals_projection_after_random_games,
    the_latest_snapshot_at_or_before_a_seq_is_found,
    the_first_audit_of_a_game_stands,
    finished_games_are_unanalysed_until_their_analysis_is_stored,
    unanalysed_games_take_turns_between_their_hosts,
    overdue_games_are_those_whose_stored_deadline_has_passed,
    expired_waiting_games_are_the_waiting_games_created_before_a_time,
    ping_answers,
);

// ---------------------------------------------------------------------------------------------
// Cases on both backends

async fn create_and_load_round_trip(backend: Backend) {
    // A created game loads with every field it was created with, and its first entries.
    let db = TestDb::connect(backend).await;
    let store = db.store.as_ref();
    let mut game = new_game("2026-05-01T14:00:00+02:00");
    game.decks = Some(json!([["AS", "2C"]]));
    game.stacked = true;
    let events = vec![
        event("game_created", json!({"game_id": game.id, "n": null})),
        event("player_joined", json!({"seat": 0, "name": "日本語"})),
    ];
    let entries = store
        .create_game(game.clone(), events.clone(), None)
        .await
        .expect("create");
    assert_eq!(seqs(&entries), [1, 2]);
    assert_eq!(entries[1].to_json()["type"], "player_joined");

    let loaded = store.load_game(game.id).await.expect("load").expect("game");
    assert_eq!(loaded.id, game.id);
    assert_eq!(loaded.created_at.to_string(), "2026-05-01T12:00:00.000000Z");
    assert_eq!(loaded.status, Status::Waiting);
    assert_eq!(loaded.version, 2);
    assert_eq!((loaded.seats, loaded.holes, loaded.players), (2, 9, 0));
    assert_eq!(loaded.rules, game.rules);
    assert_eq!(loaded.commitment, game.commitment);
    assert_eq!(loaded.server_seed, SEED);
    assert_eq!(loaded.host_token_hash, [1; 32]);
    assert!(!loaded.private && loaded.stacked);
    assert_eq!(loaded.decks, game.decks);
    assert_eq!(parsed(&loaded.projection), parsed(&game.projection));
    assert_eq!(hex::encode(loaded.head_hash), entries[1].hash);

    assert_eq!(all_events(store, game.id).await, entries);
    for (entry, event) in entries.iter().zip(&events) {
        assert_eq!(
            (&entry.kind, &entry.data, &entry.at),
            (&event.kind, &event.data, &event.at)
        );
    }
    assert!(
        store
            .load_game(Uuid::new_v4())
            .await
            .expect("load")
            .is_none()
    );
}

async fn append_and_page_events(backend: Backend) {
    // Appends continue the seq, record seats and update the row; events page by seq.
    let db = TestDb::connect(backend).await;
    let store = db.store.as_ref();
    let game = create(store, "2026-05-01T12:00:00Z").await;
    let joined = append_at(
        store,
        game.id,
        1,
        vec![event("player_joined", json!({"seat": 0}))],
        seat_update("waiting", 0, Some([9; 32])),
        None,
    )
    .await
    .expect("join");
    assert_eq!(seqs(&joined), [2]);
    let dealt = append_at(
        store,
        game.id,
        2,
        vec![
            event("player_joined", json!({"seat": 1})),
            event("hole_dealt", json!({"hole": 1, "deck": ["AS"]})),
            event("cards_revealed", json!({"seat": 0, "positions": [0, 1]})),
        ],
        seat_update("playing", 1, None),
        None,
    )
    .await
    .expect("start");
    assert_eq!(seqs(&dealt), [3, 4, 5]);

    let loaded = store.load_game(game.id).await.expect("load").expect("game");
    assert_eq!((loaded.version, loaded.players), (5, 2));
    assert_eq!(loaded.status, Status::Playing);
    assert_eq!(parsed(&loaded.projection), json!({"status": "playing"}));
    assert_eq!(hex::encode(loaded.head_hash), dealt[2].hash);

    let all = all_events(store, game.id).await;
    assert_eq!(seqs(&all), [1, 2, 3, 4, 5]);
    assert_eq!(&all[1..], [joined, dealt].concat().as_slice());
    let page = store.load_events(game.id, 2, 2).await.expect("page");
    assert_eq!(seqs(&page), [3, 4]);
    let last = store.load_events(game.id, 4, 100).await.expect("page");
    assert_eq!(seqs(&last), [5]);
    assert!(
        store
            .load_events(game.id, 5, 100)
            .await
            .expect("page")
            .is_empty()
    );
    assert!(
        store
            .load_events(Uuid::new_v4(), 0, 10)
            .await
            .expect("page")
            .is_empty()
    );

    let hashes = store
        .load_game(game.id)
        .await
        .expect("load")
        .expect("game")
        .seat_tokens;
    assert_eq!(hashes, [(0, Some([9; 32])), (1, None)]);
}

async fn chain_verifies_after_appends(backend: Backend) {
    // The stored log verifies against the seed and ends at the stored head; tampering is caught.
    let db = TestDb::connect(backend).await;
    let store = db.store.as_ref();
    let game = create(store, "2026-05-01T12:00:00Z").await;
    for version in 1..=4 {
        let data = json!({"seat": version % 2, "card": "10H", "nested": {"a": [1, null, "é"]}});
        append_at(
            store,
            game.id,
            version,
            vec![event("card_drawn", data)],
            update("playing"),
            None,
        )
        .await
        .expect("append");
    }
    let entries = all_events(store, game.id).await;
    let loaded = store.load_game(game.id).await.expect("load").expect("game");
    assert_eq!(
        verify_chain(&loaded.server_seed, &entries),
        Ok(loaded.head_hash)
    );

    let mut tampered = entries.clone();
    tampered[2].data["card"] = json!("KS");
    assert_eq!(
        verify_chain(&SEED, &tampered),
        Err(store::ChainError::Hash { seq: 3 })
    );
    let mut reordered = entries;
    reordered.swap(1, 2);
    assert!(matches!(
        verify_chain(&SEED, &reordered),
        Err(store::ChainError::Sequence { expected: 2, .. })
    ));
}

async fn concurrent_appends_have_one_winner(backend: Backend) {
    // 16 appends at the same expected version: one wins, 15 conflict, the log has no gap.
    let db = TestDb::connect(backend).await;
    let game = create(db.store.as_ref(), "2026-05-01T12:00:00Z").await;
    let barrier = Arc::new(tokio::sync::Barrier::new(16));
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let store = Arc::clone(&db.store);
            let barrier = Arc::clone(&barrier);
            tokio::spawn(async move {
                barrier.wait().await;
                let events = vec![
                    event("card_drawn", json!({"task": i})),
                    event("card_discarded", json!({"task": i})),
                ];
                append_at(store.as_ref(), game.id, 1, events, update("playing"), None).await
            })
        })
        .collect();
    let mut winners = Vec::new();
    for (i, task) in tasks.into_iter().enumerate() {
        match task.await.expect("task") {
            Ok(entries) => winners.push((i, entries)),
            Err(StoreError::Conflict) => {}
            Err(e) => panic!("task {i}: expected Ok or Conflict, got {e:?}"),
        }
    }
    assert_eq!(winners.len(), 1, "exactly one append wins");
    let (winner, won) = &winners[0];
    let entries = all_events(db.store.as_ref(), game.id).await;
    assert_eq!(seqs(&entries), [1, 2, 3]);
    assert_eq!(&entries[1..], won.as_slice());
    assert_eq!(entries[2].data, json!({"task": winner}));
    let loaded = db
        .store
        .load_game(game.id)
        .await
        .expect("load")
        .expect("game");
    assert_eq!(loaded.version, 3);
    assert_eq!(verify_chain(&SEED, &entries), Ok(loaded.head_hash));
}

async fn stale_expected_version_conflicts(backend: Backend) {
    // A wrong expected version is a Conflict and writes nothing, as is an unknown game.
    let db = TestDb::connect(backend).await;
    let store = db.store.as_ref();
    let game = create(store, "2026-05-01T12:00:00Z").await;
    for wrong in [0, 2, 99] {
        let result = append_at(
            store,
            game.id,
            wrong,
            vec![event("card_drawn", json!({}))],
            seat_update("playing", 0, Some([3; 32])),
            Some(move_idem("k", "f")),
        )
        .await;
        assert!(
            matches!(result, Err(StoreError::Conflict)),
            "{wrong}: {result:?}"
        );
    }
    let unknown = append_at(
        store,
        Uuid::new_v4(),
        1,
        vec![event("x", json!({}))],
        update("playing"),
        None,
    )
    .await;
    assert!(matches!(unknown, Err(StoreError::Conflict)), "{unknown:?}");

    let loaded = store.load_game(game.id).await.expect("load").expect("game");
    assert_eq!((loaded.version, loaded.players), (1, 0));
    assert_eq!(loaded.status, Status::Waiting);
    assert_eq!(seqs(&all_events(store, game.id).await), [1]);
    assert!(loaded.seat_tokens.is_empty());
    assert_eq!(
        store
            .find_game_response(game.id, 0, "k")
            .await
            .expect("find"),
        None
    );
}

async fn lobby_lists_public_waiting_games_newest_first(backend: Backend) {
    // The lobby pages by (created_at, id) descending and leaves out private, full, started and
    // cancelled games.
    let db = TestDb::connect(backend).await;
    let store = db.store.as_ref();
    let mut listed = Vec::new();
    for minute in 0..4 {
        let game = create(store, &format!("2026-05-01T10:0{minute}:00Z")).await;
        listed.push((game.created_at, game.id));
    }
    // Two games created at the same instant (written differently) are ordered by id.
    let tie_a = create(store, "2026-05-01T12:00:00+02:00").await;
    let tie_b = create(store, "2026-05-01T10:00:00.000Z").await;
    listed.push((at("2026-05-01T10:00:00Z"), tie_a.id));
    listed.push((at("2026-05-01T10:00:00Z"), tie_b.id));

    let mut private = new_game("2026-05-01T11:00:00Z");
    private.private = true;
    store
        .create_game(private.clone(), created(&private), None)
        .await
        .expect("create");
    let full = create(store, "2026-05-01T11:00:01Z").await;
    for seat in 0..2 {
        let joined = vec![event("player_joined", json!({"seat": seat}))];
        append_at(
            store,
            full.id,
            1 + i64::from(seat),
            joined,
            seat_update("waiting", seat, None),
            None,
        )
        .await
        .expect("join");
    }
    let started = create(store, "2026-05-01T11:00:02Z").await;
    append_at(
        store,
        started.id,
        1,
        vec![event("hole_dealt", json!({}))],
        update("playing"),
        None,
    )
    .await
    .expect("start");
    let cancelled = create(store, "2026-05-01T11:00:03Z").await;
    store.cancel_game(cancelled.id).await.expect("cancel");

    listed.sort_by(|a, b| b.cmp(a));
    let expected: Vec<Uuid> = listed.iter().map(|(_, id)| *id).collect();
    let mut pages = Vec::new();
    let mut cursor = None;
    loop {
        let page = store.list_waiting(4, cursor.clone()).await.expect("lobby");
        let Some(last) = page.last() else { break };
        cursor = Some(LobbyCursor::from(last));
        pages.push(page);
    }
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [4, 2]);
    let ids: Vec<Uuid> = pages.iter().flatten().map(|g| g.id).collect();
    assert_eq!(ids, expected);
    let newest = &pages[0][0];
    assert_eq!(newest.created_at.to_string(), "2026-05-01T10:03:00.000000Z");
    assert_eq!((newest.version, newest.seats, newest.players), (1, 2, 0));
    assert_eq!(
        parsed(&newest.projection),
        json!({"status": "waiting", "players": []})
    );
    assert!(store.list_waiting(0, None).await.expect("lobby").is_empty());
}

async fn cancel_only_while_waiting(backend: Backend) {
    // A waiting game can be cancelled, then is gone; a started game cannot be.
    let db = TestDb::connect(backend).await;
    let store = db.store.as_ref();
    let waiting = create(store, "2026-05-01T12:00:00Z").await;
    store.cancel_game(waiting.id).await.expect("cancel");
    assert!(store.load_game(waiting.id).await.expect("load").is_none());
    let append = append_at(
        store,
        waiting.id,
        1,
        vec![event("player_joined", json!({}))],
        update("waiting"),
        None,
    )
    .await;
    assert!(matches!(append, Err(StoreError::Conflict)), "{append:?}");
    let again = store.cancel_game(waiting.id).await;
    assert!(matches!(again, Err(StoreError::NotFound)), "{again:?}");
    let unknown = store.cancel_game(Uuid::new_v4()).await;
    assert!(matches!(unknown, Err(StoreError::NotFound)), "{unknown:?}");

    let started = create(store, "2026-05-01T12:00:00Z").await;
    append_at(
        store,
        started.id,
        1,
        vec![event("hole_dealt", json!({}))],
        update("playing"),
        None,
    )
    .await
    .expect("start");
    let refused = store.cancel_game(started.id).await;
    assert!(
        matches!(refused, Err(StoreError::NotWaiting)),
        "{refused:?}"
    );
    let loaded = store
        .load_game(started.id)
        .await
        .expect("load")
        .expect("game");
    assert_eq!(loaded.status, Status::Playing);
}

async fn game_ids_page_through_every_game(backend: Backend) {
    // game_ids lists every game that is not cancelled, in id order, page by page.
    let db = TestDb::connect(backend).await;
    let store = db.store.as_ref();
    let mut expected = Vec::new();
    for _ in 0..5 {
        expected.push(create(store, "2026-05-01T12:00:00Z").await.id);
    }
    let cancelled = create(store, "2026-05-01T12:00:00Z").await;
    store.cancel_game(cancelled.id).await.expect("cancel");
    expected.sort();

    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let page = store.game_ids(after, 2).await.expect("ids");
        let Some(last) = page.last() else { break };
        after = Some(*last);
        seen.extend(page);
    }
    assert_eq!(seen, expected);
}

async fn a_write_behind_a_held_lock_is_busy(backend: Backend) {
    // Another transaction holds the game for longer than the store waits (PostgreSQL's
    // lock_timeout, SQLite's busy_timeout): the append ends as Busy (a 409 for the client),
    // never as Unavailable (a 5xx), a panic or a hang. Readers do not wait,
    // and once the game is free the append goes through.
    let db = TestDb::connect(backend).await;
    let game = create(db.store.as_ref(), "2026-05-01T12:00:00Z").await;
    let impatient = PoolOptions {
        max_connections: 2,
        acquire_timeout: Duration::from_millis(500),
        statement_timeout: Duration::from_millis(400),
        ..PoolOptions::default()
    };
    let store = store::connect(&db.url, &impatient).await.expect("connect");
    let holder = db.database.hold(game.id).await;
    let join = || vec![event("player_joined", json!({"seat": 0}))];
    // The outer timeout only keeps a regression from hanging the suite.
    let waiting = append_at(store.as_ref(), game.id, 1, join(), update("waiting"), None);
    let result = tokio::time::timeout(Duration::from_secs(30), waiting)
        .await
        .expect("the append gave up by itself");
    assert!(matches!(result, Err(StoreError::Busy)), "{result:?}");
    let loaded = store.load_game(game.id).await.expect("load").expect("game");
    assert_eq!(loaded.version, 1, "nothing written");

    holder.release().await;
    let appended = append_at(store.as_ref(), game.id, 1, join(), update("waiting"), None)
        .await
        .expect("append once the game is free");
    assert_eq!(seqs(&appended), [2]);
}

async fn ping_answers(backend: Backend) {
    // A reachable database answers the readiness ping.
    let db = TestDb::connect(backend).await;
    db.store.ping().await.expect("ping");
}
