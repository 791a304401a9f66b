//! The event store's conformance suite: every case runs against PostgreSQL and SQLite.
//!
//! Each test gets a fresh database from `common::TestDatabase` (on PostgreSQL, a database with a
//! random name on the server named by `DATABASE_URL` when it is a `postgres://` URL, else the
//! local one; a server that does not answer fails the test, it is never skipped), dropped
//! afterwards. Run: `cargo test --test store_conformance`.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Backend, TestDatabase};
use golf_server::check;
use golf_server::engine::{
    self, BotKind, ClientSeed, Command, FlipRule, PlayerName, Rules, Secrets, State, Timestamp,
    shuffle,
};
use golf_server::store::{
    self, CreateIdempotency, Entry, EventStore, GameUpdate, LobbyCursor, MoveIdempotency, NewEvent,
    NewGame, NewSeat, PoolOptions, StoreError, find_seat, verify_chain,
};
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde_json::{Value, json};
use sqlx::{Connection, PgConnection, SqliteConnection};
use uuid::Uuid;

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
    move_idempotency_found_then_expires,
    create_idempotency_and_key_conflicts,
    a_purge_deletes_a_backlog_of_many_batches,
    lobby_lists_public_waiting_games_newest_first,
    cancel_only_while_waiting,
    game_ids_page_through_every_game,
    a_write_behind_a_held_lock_is_busy,
    rebuild_equals_projection_after_random_games,
    ping_answers,
);

// ---------------------------------------------------------------------------------------------
// Data

const SEED: [u8; 32] = [7; 32];

fn new_game(created_at: &str) -> NewGame {
    NewGame {
        id: Uuid::new_v4(),
        created_at: created_at.to_owned(),
        seats: 2,
        holes: 9,
        rules: json!({"flip_after_discard": "optional"}),
        commitment: "ab".repeat(32),
        server_seed: SEED,
        host_token_hash: [1; 32],
        private: false,
        stacked: false,
        decks: None,
        status: "waiting".to_owned(),
        projection: json!({"status": "waiting", "players": []}),
    }
}

fn event(kind: &str, data: Value) -> NewEvent {
    NewEvent {
        kind: kind.to_owned(),
        data,
        at: "2026-05-01T12:00:00.5Z".to_owned(),
    }
}

fn created(game: &NewGame) -> Vec<NewEvent> {
    vec![event(
        "game_created",
        json!({"game_id": game.id, "format": "golf-log/1", "seats": game.seats, "name": "Zoë ☃"}),
    )]
}

fn update(status: &str) -> GameUpdate {
    GameUpdate {
        status: status.to_owned(),
        projection: json!({"status": status}),
        new_seat: None,
    }
}

fn seat_update(status: &str, seat: i32, token_hash: Option<[u8; 32]>) -> GameUpdate {
    GameUpdate {
        new_seat: Some(NewSeat {
            seat,
            name: format!("Player {seat}"),
            bot: token_hash.is_none().then(|| "greedy".to_owned()),
            client_seed: "seed".to_owned(),
            token_hash,
        }),
        ..update(status)
    }
}

fn move_idem(key: &str, fingerprint: &str) -> MoveIdempotency {
    MoveIdempotency {
        seat: 0,
        key: key.to_owned(),
        fingerprint: fingerprint.to_owned(),
        response_status: 200,
        response_body: json!({"version": 2, "fingerprint": fingerprint}),
    }
}

fn create_idem(key: &str, fingerprint: &str) -> CreateIdempotency {
    CreateIdempotency {
        key: key.to_owned(),
        fingerprint: fingerprint.to_owned(),
        response_status: 201,
        response_body: json!({"created": fingerprint}),
    }
}

/// Creates a game with its `game_created` event; returns the game as created.
async fn create(store: &dyn EventStore, created_at: &str) -> NewGame {
    let game = new_game(created_at);
    store
        .create_game(game.clone(), created(&game), None)
        .await
        .expect("create");
    game
}

async fn all_events(store: &dyn EventStore, game_id: Uuid) -> Vec<Entry> {
    store.load_events(game_id, 0, 1000).await.expect("events")
}

fn seqs(entries: &[Entry]) -> Vec<i64> {
    entries.iter().map(|e| e.seq).collect()
}

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
    assert_eq!(loaded.created_at, "2026-05-01T12:00:00.000000Z");
    assert_eq!(loaded.status, "waiting");
    assert_eq!(loaded.version, 2);
    assert_eq!((loaded.seats, loaded.holes, loaded.players), (2, 9, 0));
    assert_eq!(loaded.rules, game.rules);
    assert_eq!(loaded.commitment, game.commitment);
    assert_eq!(loaded.server_seed, SEED);
    assert_eq!(loaded.host_token_hash, [1; 32]);
    assert!(!loaded.private && loaded.stacked);
    assert_eq!(loaded.decks, game.decks);
    assert_eq!(loaded.projection, game.projection);
    assert_eq!(hex::encode(loaded.head_hash), entries[1].hash);

    assert_eq!(all_events(store, game.id).await, entries);
    for (entry, event) in entries.iter().zip(&events) {
        assert_eq!(
            (&entry.kind, &entry.data, &entry.at),
            (&event.kind, &event.data, &event.at)
        );
    }
    assert_eq!(store.load_game(Uuid::new_v4()).await.expect("load"), None);
}

async fn append_and_page_events(backend: Backend) {
    // Appends continue the seq, record seats and update the row; events page by seq.
    let db = TestDb::connect(backend).await;
    let store = db.store.as_ref();
    let game = create(store, "2026-05-01T12:00:00Z").await;
    let joined = store
        .append(
            game.id,
            1,
            vec![event("player_joined", json!({"seat": 0}))],
            seat_update("waiting", 0, Some([9; 32])),
            None,
        )
        .await
        .expect("join");
    assert_eq!(seqs(&joined), [2]);
    let dealt = store
        .append(
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
    assert_eq!(loaded.status, "playing");
    assert_eq!(loaded.projection, json!({"status": "playing"}));
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
    assert_eq!(find_seat(&hashes, &[9; 32]), Some(0));
    assert_eq!(find_seat(&hashes, &[8; 32]), None);
}

async fn chain_verifies_after_appends(backend: Backend) {
    // The stored log verifies against the seed and ends at the stored head; tampering is caught.
    let db = TestDb::connect(backend).await;
    let store = db.store.as_ref();
    let game = create(store, "2026-05-01T12:00:00Z").await;
    for version in 1..=4 {
        let data = json!({"seat": version % 2, "card": "10H", "nested": {"a": [1, null, "é"]}});
        store
            .append(
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
                store
                    .append(game.id, 1, events, update("playing"), None)
                    .await
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
    // A wrong expected version is a Conflict and writes nothing; an unknown game is NotFound.
    let db = TestDb::connect(backend).await;
    let store = db.store.as_ref();
    let game = create(store, "2026-05-01T12:00:00Z").await;
    for wrong in [0, 2, 99] {
        let result = store
            .append(
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
    let unknown = store
        .append(
            Uuid::new_v4(),
            1,
            vec![event("x", json!({}))],
            update("playing"),
            None,
        )
        .await;
    assert!(matches!(unknown, Err(StoreError::NotFound)), "{unknown:?}");

    let loaded = store.load_game(game.id).await.expect("load").expect("game");
    assert_eq!((loaded.version, loaded.players), (1, 0));
    assert_eq!(loaded.status, "waiting");
    assert_eq!(seqs(&all_events(store, game.id).await), [1]);
    assert!(loaded.seat_tokens.is_empty());
    assert_eq!(
        store
            .find_move_response(game.id, 0, "k")
            .await
            .expect("find"),
        None
    );
}

async fn move_idempotency_found_then_expires(backend: Backend) {
    // A stored move response is found by (game, seat, key), blocks its key for 24 h, then is
    // ignored, replaceable and purged.
    let db = TestDb::connect(backend).await;
    let store = db.store.as_ref();
    let game = create(store, "2026-05-01T12:00:00Z").await;
    let draw = || vec![event("card_drawn", json!({"seat": 0}))];
    store
        .append(
            game.id,
            1,
            draw(),
            update("playing"),
            Some(move_idem("key-1", "fp-a")),
        )
        .await
        .expect("append");
    let found = store
        .find_move_response(game.id, 0, "key-1")
        .await
        .expect("find");
    let found = found.expect("stored response");
    assert_eq!((found.fingerprint.as_str(), found.status), ("fp-a", 200));
    assert_eq!(found.body, json!({"version": 2, "fingerprint": "fp-a"}));
    assert_eq!(
        store
            .find_move_response(game.id, 1, "key-1")
            .await
            .expect("find"),
        None
    );
    assert_eq!(
        store
            .find_move_response(game.id, 0, "key-2")
            .await
            .expect("find"),
        None
    );

    let reused = store
        .append(
            game.id,
            2,
            draw(),
            update("playing"),
            Some(move_idem("key-1", "fp-b")),
        )
        .await;
    assert!(matches!(reused, Err(StoreError::Conflict)), "{reused:?}");
    assert_eq!(
        seqs(&all_events(store, game.id).await),
        [1, 2],
        "nothing written"
    );

    db.age_idempotency_records().await;
    assert_eq!(
        store
            .find_move_response(game.id, 0, "key-1")
            .await
            .expect("find"),
        None
    );
    store
        .append(
            game.id,
            2,
            draw(),
            update("playing"),
            Some(move_idem("key-1", "fp-b")),
        )
        .await
        .expect("an expired key is replaced");
    let replaced = store
        .find_move_response(game.id, 0, "key-1")
        .await
        .expect("find");
    assert_eq!(replaced.expect("stored").fingerprint, "fp-b");

    assert_eq!(store.purge_expired_idempotency().await.expect("purge"), 0);
    db.age_idempotency_records().await;
    assert_eq!(store.purge_expired_idempotency().await.expect("purge"), 1);
    assert_eq!(
        store
            .find_move_response(game.id, 0, "key-1")
            .await
            .expect("find"),
        None
    );
}

async fn create_idempotency_and_key_conflicts(backend: Backend) {
    // A creation key is recorded with the game; the same key or game id again is a Conflict (also
    // when racing), until the record expires.
    let db = TestDb::connect(backend).await;
    let store = db.store.as_ref();
    let first = new_game("2026-05-01T12:00:00Z");
    store
        .create_game(
            first.clone(),
            created(&first),
            Some(create_idem("c-1", "fp-1")),
        )
        .await
        .expect("create");
    let found = store
        .find_create_response("c-1")
        .await
        .expect("find")
        .expect("stored");
    assert_eq!((found.fingerprint.as_str(), found.status), ("fp-1", 201));
    assert_eq!(found.body, json!({"created": "fp-1"}));
    assert_eq!(store.find_create_response("c-2").await.expect("find"), None);

    let second = new_game("2026-05-01T12:00:01Z");
    let reused = store
        .create_game(
            second.clone(),
            created(&second),
            Some(create_idem("c-1", "fp-2")),
        )
        .await;
    assert!(matches!(reused, Err(StoreError::Conflict)), "{reused:?}");
    assert_eq!(
        store.load_game(second.id).await.expect("load"),
        None,
        "rolled back"
    );
    let same_id = store
        .create_game(first.clone(), created(&first), None)
        .await;
    assert!(matches!(same_id, Err(StoreError::Conflict)), "{same_id:?}");

    let racers: Vec<_> = (0..8)
        .map(|i| {
            let store = Arc::clone(&db.store);
            tokio::spawn(async move {
                let game = new_game("2026-05-01T12:00:02Z");
                let idem = create_idem("race", &format!("fp-{i}"));
                store
                    .create_game(game.clone(), created(&game), Some(idem))
                    .await
            })
        })
        .collect();
    let mut won = 0;
    for racer in racers {
        match racer.await.expect("task") {
            Ok(_) => won += 1,
            Err(StoreError::Conflict) => {}
            Err(e) => panic!("expected Ok or Conflict, got {e:?}"),
        }
    }
    assert_eq!(won, 1, "exactly one creation records the key");

    db.age_idempotency_records().await;
    assert_eq!(store.find_create_response("c-1").await.expect("find"), None);
    store
        .create_game(
            second.clone(),
            created(&second),
            Some(create_idem("c-1", "fp-2")),
        )
        .await
        .expect("an expired key is replaced");
    let replaced = store.find_create_response("c-1").await.expect("find");
    assert_eq!(replaced.expect("stored").fingerprint, "fp-2");
    assert_eq!(
        store.purge_expired_idempotency().await.expect("purge"),
        1,
        "race"
    );
}

async fn a_purge_deletes_a_backlog_of_many_batches(backend: Backend) {
    // A backlog of expired records, larger than one batch of the purge, goes in one call; the
    // records still honored stay.
    let db = TestDb::connect(backend).await;
    let backlog = match db.backend {
        Backend::Postgres => {
            "INSERT INTO create_idempotency (key, fingerprint, status, body, created_at) \
             SELECT 'old-' || i, 'fp', 201, '{}', now() - interval '25 hours' \
             FROM generate_series(1, 2500) AS i"
        }
        Backend::Sqlite => {
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2500) \
             INSERT INTO create_idempotency (key, fingerprint, status, body, created_at) \
             SELECT 'old-' || i, 'fp', 201, '{}', unixepoch() - 90000 FROM n"
        }
    };
    db.execute(backlog).await;
    let store = db.store.as_ref();
    let game = new_game("2026-05-01T12:00:00Z");
    store
        .create_game(
            game.clone(),
            created(&game),
            Some(create_idem("fresh", "fp")),
        )
        .await
        .expect("create");

    assert_eq!(
        store.purge_expired_idempotency().await.expect("purge"),
        2500
    );
    assert_eq!(store.purge_expired_idempotency().await.expect("purge"), 0);
    let fresh = store.find_create_response("fresh").await.expect("find");
    assert!(fresh.is_some(), "a record still honored is kept");
}

async fn lobby_lists_public_waiting_games_newest_first(backend: Backend) {
    // The lobby pages by (created_at, id) descending and leaves out private, full, started and
    // cancelled games.
    let db = TestDb::connect(backend).await;
    let store = db.store.as_ref();
    let mut listed = Vec::new();
    for minute in 0..4 {
        let game = create(store, &format!("2026-05-01T10:0{minute}:00Z")).await;
        listed.push((game.created_at.clone(), game.id));
    }
    // Two games created at the same instant (written differently) are ordered by id.
    let tie_a = create(store, "2026-05-01T12:00:00+02:00").await;
    let tie_b = create(store, "2026-05-01T10:00:00.000Z").await;
    listed.push(("2026-05-01T10:00:00Z".to_owned(), tie_a.id));
    listed.push(("2026-05-01T10:00:00Z".to_owned(), tie_b.id));

    let mut private = new_game("2026-05-01T11:00:00Z");
    private.private = true;
    store
        .create_game(private.clone(), created(&private), None)
        .await
        .expect("create");
    let full = create(store, "2026-05-01T11:00:01Z").await;
    for seat in 0..2 {
        let joined = vec![event("player_joined", json!({"seat": seat}))];
        store
            .append(
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
    store
        .append(
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
    assert_eq!(newest.created_at, "2026-05-01T10:03:00.000000Z");
    assert_eq!((newest.version, newest.seats, newest.players), (1, 2, 0));
    assert_eq!(
        newest.projection,
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
    assert_eq!(store.load_game(waiting.id).await.expect("load"), None);
    let append = store
        .append(
            waiting.id,
            1,
            vec![event("player_joined", json!({}))],
            update("waiting"),
            None,
        )
        .await;
    assert!(matches!(append, Err(StoreError::NotFound)), "{append:?}");
    let again = store.cancel_game(waiting.id).await;
    assert!(matches!(again, Err(StoreError::NotFound)), "{again:?}");
    let unknown = store.cancel_game(Uuid::new_v4()).await;
    assert!(matches!(unknown, Err(StoreError::NotFound)), "{unknown:?}");

    let started = create(store, "2026-05-01T12:00:00Z").await;
    store
        .append(
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
    assert_eq!(loaded.status, "playing");
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
    };
    let store = store::connect(&db.url, &impatient).await.expect("connect");
    let holder = db.database.hold(game.id).await;
    let join = || vec![event("player_joined", json!({"seat": 0}))];
    // The outer timeout only keeps a regression from hanging the suite.
    let waiting = store.append(game.id, 1, join(), update("waiting"), None);
    let result = tokio::time::timeout(Duration::from_secs(30), waiting)
        .await
        .expect("the append gave up by itself");
    assert!(matches!(result, Err(StoreError::Busy)), "{result:?}");
    let loaded = store.load_game(game.id).await.expect("load").expect("game");
    assert_eq!(loaded.version, 1, "nothing written");

    holder.release().await;
    let appended = store
        .append(game.id, 1, join(), update("waiting"), None)
        .await
        .expect("append once the game is free");
    assert_eq!(seqs(&appended), [2]);
}

/// A game played by random bots through the engine and stored as the service stores one:
/// each request's events in one append at the version it read, with the projection after
/// them. Each join is a request (it takes its seat in the same append), then every request
/// carries up to `batch` moves (a bot's turns are appended with the request that hands it the
/// turn). Returns the game's id and final state.
async fn play_random_game(store: &dyn EventStore, number: u64, batch: usize) -> (Uuid, State) {
    let seats = 2 + (number % 3) as u8;
    let flips = [FlipRule::Never, FlipRule::Optional, FlipRule::Always];
    let final_turns = number % 2 == 1;
    let rules = Rules::resolve(
        seats,
        Some(final_turns),
        Some(flips[(number / 2) as usize % 3]),
        None,
    )
    .expect("rules");
    let secrets = Secrets {
        server_seed: [number as u8; 32],
        decks: Vec::new(),
    };
    let mut rng = StdRng::seed_from_u64(number);
    let start = Timestamp::parse("2026-05-01T12:00:00.000000Z").expect("a time");
    let mut requests = (1..).map(|n| Timestamp(start.0 + n * 1_500_000));
    let mut state = State::default();

    let id = Uuid::new_v4();
    let create = Command::Create {
        game_id: id,
        seats,
        holes: 2,
        rules,
        commitment: shuffle::commitment(&secrets.server_seed),
        stacked: false,
    };
    let events = run_command(&mut state, &create, &secrets, start);
    let game = NewGame {
        id,
        created_at: start.to_string(),
        seats: i32::from(seats),
        holes: 2,
        rules: json!(rules),
        commitment: state.commitment.clone(),
        server_seed: secrets.server_seed,
        host_token_hash: [1; 32],
        private: false,
        stacked: false,
        decks: None,
        status: status_of(&state),
        projection: json!(state),
    };
    store.create_game(game, events, None).await.expect("create");

    for seat in 0..seats {
        let name = format!("Random {seat}");
        let join = Command::Join {
            name: PlayerName::parse(&name).expect("a name"),
            bot: Some(BotKind::Random),
            client_seed: ClientSeed::default(),
        };
        let version = state.version as i64;
        let at = requests.next().expect("a time");
        let events = run_command(&mut state, &join, &secrets, at);
        let taken = NewSeat {
            seat: i32::from(seat),
            name,
            bot: Some("random".to_owned()),
            client_seed: String::new(),
            token_hash: None,
        };
        let update = GameUpdate {
            status: status_of(&state),
            projection: json!(state),
            new_seat: Some(taken),
        };
        store
            .append(id, version, events, update, None)
            .await
            .expect("join at the version read");
    }

    loop {
        let version = state.version as i64;
        let at = requests.next().expect("a time");
        let mut events = Vec::new();
        for _ in 0..batch {
            let Some(seat) = (0..seats).find(|&s| !engine::legal_moves(&state, s).is_empty())
            else {
                break;
            };
            let mv = engine::choose(BotKind::Random, &engine::observe(&state, seat), &mut rng);
            events.extend(run_command(
                &mut state,
                &Command::Play { seat, mv },
                &secrets,
                at,
            ));
        }
        if events.is_empty() {
            return (id, state);
        }
        let update = GameUpdate {
            status: status_of(&state),
            projection: json!(state),
            new_seat: None,
        };
        store
            .append(id, version, events, update, None)
            .await
            .expect("append at the version read");
    }
}

/// Decides `command` and applies its events at `at`; returns them as the service stores them.
fn run_command(
    state: &mut State,
    command: &Command,
    secrets: &Secrets,
    at: Timestamp,
) -> Vec<NewEvent> {
    let events = engine::decide(state, command, secrets).expect("a legal command");
    events
        .iter()
        .map(|event| {
            engine::apply(state, event, at);
            let json = json!(event);
            NewEvent {
                kind: json["type"].as_str().expect("a type").to_owned(),
                data: json["data"].clone(),
                at: at.to_string(),
            }
        })
        .collect()
}

/// The status column of a state: its name in the views.
fn status_of(state: &State) -> String {
    json!(state.status).as_str().expect("a name").to_owned()
}

async fn rebuild_equals_projection_after_random_games(backend: Backend) {
    // Random legal games, stored in appends of various sizes: each stored log verifies along its
    // chain, and replayed through the rules it gives the stored projection.
    let db = TestDb::connect(backend).await;
    let store = db.store.as_ref();
    for number in 0..6 {
        let (id, played) = play_random_game(store, number, 1 + number as usize % 4).await;
        assert_eq!(played.status, engine::Status::Finished, "game {number}");
        let record = store.load_game(id).await.expect("load").expect("game");
        assert_eq!(record.version, played.version as i64);
        let entries = store::load_log(store, id, record.version)
            .await
            .expect("log");
        assert_eq!(
            verify_chain(&record.server_seed, &entries),
            Ok(record.head_hash)
        );
        let secrets = check::secrets_of(&record).expect("the secrets");
        let rebuilt = check::rebuild(&entries, &secrets).expect("the log replays");
        let stored: State = serde_json::from_value(record.projection).expect("a projection");
        assert_eq!(rebuilt, stored, "game {number}");
        assert_eq!(rebuilt, played, "game {number}");
        assert_eq!(record.players, i32::from(played.seats));
    }
}

async fn ping_answers(backend: Backend) {
    // A reachable database answers the readiness ping.
    let db = TestDb::connect(backend).await;
    db.store.ping().await.expect("ping");
}

// ---------------------------------------------------------------------------------------------
// Backend-specific cases

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_terminated_append_leaves_nothing() {
    // An append whose connection is killed mid-transaction (after inserting its events) writes
    // nothing, fails as Unavailable, and the next append succeeds.
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
            store.append(game.id, 1, events, joined, None).await
        }
    });

    let mut watcher = PgConnection::connect(&db.url).await.expect("connect");
    let deadline = Instant::now() + Duration::from_secs(10);
    let pid: i32 = loop {
        let waiting: Option<i32> = sqlx::query_scalar(
            "SELECT pid FROM pg_stat_activity \
             WHERE datname = current_database() AND wait_event_type = 'Lock' \
               AND query LIKE 'INSERT INTO seats%'",
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

    let retried = store
        .append(
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
