//! Conformance cases for the stored answers of idempotent requests: found, expired, purged; and
//! the purge of account events older than 30 days, which runs with theirs.

use std::sync::Arc;

use crate::common::Backend;
use golf_server::store::{GameIdempotency, JOIN_SCOPE, StoreError};
use serde_json::json;

use super::TestDb;
use super::fixtures::*;

pub async fn move_idempotency_found_then_expires(backend: Backend) {
    // A stored move response is found by (game, seat, key), blocks its key for 24 h, then is
    // ignored, replaceable and purged.
    let db = TestDb::connect(backend).await;
    let store = db.store.as_ref();
    let game = create(store, "2026-05-01T12:00:00Z").await;
    let draw = || vec![event("card_drawn", json!({"seat": 0}))];
    append_at(
        store,
        game.id,
        1,
        draw(),
        update("playing"),
        Some(move_idem("key-1", "fp-a")),
    )
    .await
    .expect("append");
    let found = store
        .find_game_response(game.id, 0, "key-1")
        .await
        .expect("find");
    let found = found.expect("stored response");
    assert_eq!((found.fingerprint.as_str(), found.status), ("fp-a", 200));
    assert_eq!(found.body, json!({"version": 2, "fingerprint": "fp-a"}));
    assert_eq!(
        store
            .find_game_response(game.id, 1, "key-1")
            .await
            .expect("find"),
        None
    );
    assert_eq!(
        store
            .find_game_response(game.id, 0, "key-2")
            .await
            .expect("find"),
        None
    );

    let reused = append_at(
        store,
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
            .find_game_response(game.id, 0, "key-1")
            .await
            .expect("find"),
        None
    );
    append_at(
        store,
        game.id,
        2,
        draw(),
        update("playing"),
        Some(move_idem("key-1", "fp-b")),
    )
    .await
    .expect("an expired key is replaced");
    let replaced = store
        .find_game_response(game.id, 0, "key-1")
        .await
        .expect("find");
    assert_eq!(replaced.expect("stored").fingerprint, "fp-b");

    assert_eq!(store.purge_expired_idempotency().await.expect("purge"), 0);
    db.age_idempotency_records().await;
    assert_eq!(store.purge_expired_idempotency().await.expect("purge"), 1);
    assert_eq!(
        store
            .find_game_response(game.id, 0, "key-1")
            .await
            .expect("find"),
        None
    );
}

pub async fn a_join_key_seats_once_in_its_game_and_is_purged(backend: Backend) {
    // A join's answer, stored under JOIN_SCOPE with the seat it took, blocks its key in the game
    // for any later seat (one key seats one player), and expires and is purged as a move's.
    let db = TestDb::connect(backend).await;
    let store = db.store.as_ref();
    let game = create(store, "2026-05-01T12:00:00Z").await;
    let joined = |fingerprint| GameIdempotency {
        seat: JOIN_SCOPE,
        ..move_idem("join-1", fingerprint)
    };
    let join = || vec![event("player_joined", json!({}))];
    let first = seat_update("waiting", 0, Some([1; 32]));
    append_at(store, game.id, 1, join(), first, Some(joined("fp-a")))
        .await
        .expect("the first join");
    let found = store
        .find_game_response(game.id, JOIN_SCOPE, "join-1")
        .await;
    assert_eq!(found.expect("find").expect("stored").fingerprint, "fp-a");

    let second = seat_update("waiting", 1, Some([2; 32]));
    let again = append_at(store, game.id, 2, join(), second, Some(joined("fp-a"))).await;
    assert!(matches!(again, Err(StoreError::Conflict)), "{again:?}");
    let loaded = store.load_game(game.id).await.expect("load").expect("game");
    assert_eq!(
        (loaded.version, loaded.players),
        (2, 1),
        "nobody else seated"
    );

    db.age_idempotency_records().await;
    assert_eq!(store.purge_expired_idempotency().await.expect("purge"), 1);
    let purged = store
        .find_game_response(game.id, JOIN_SCOPE, "join-1")
        .await;
    assert_eq!(purged.expect("find"), None);
}

pub async fn create_idempotency_and_key_conflicts(backend: Backend) {
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
    assert!(
        store.load_game(second.id).await.expect("load").is_none(),
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

pub async fn a_purge_deletes_a_backlog_of_many_batches(backend: Backend) {
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

pub async fn account_events_older_than_thirty_days_are_purged_and_the_newer_kept(backend: Backend) {
    // A backlog larger than one batch of the purge, then three events of today, in the order
    // the appends write them.
    let db = TestDb::connect(backend).await;
    let events = match db.backend {
        Backend::Postgres => {
            "INSERT INTO account_events (account, id, at, type, data, created_at) \
             SELECT 'ada', i, '2026-01-01T00:00:00Z', 'your_turn', '{}', \
                 now() - interval '31 days' FROM generate_series(1, 2500) AS i; \
             INSERT INTO account_events (account, id, at, type, data) \
             SELECT 'ada', i, '2026-02-01T00:00:00Z', 'your_turn', '{}' \
             FROM generate_series(2501, 2503) AS i"
        }
        Backend::Sqlite => {
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2500) \
             INSERT INTO account_events (account, id, at, type, data, created_at) \
             SELECT 'ada', i, '2026-01-01T00:00:00Z', 'your_turn', '{}', \
                 unixepoch() - 31 * 86400 FROM n; \
             WITH RECURSIVE n(i) AS (SELECT 2501 UNION ALL SELECT i + 1 FROM n WHERE i < 2503) \
             INSERT INTO account_events (account, id, at, type, data) \
             SELECT 'ada', i, '2026-02-01T00:00:00Z', 'your_turn', '{}' FROM n"
        }
    };
    db.execute(events).await;
    let store = db.store.as_ref();

    assert_eq!(
        store.purge_expired_idempotency().await.expect("purge"),
        2500
    );
    assert_eq!(store.purge_expired_idempotency().await.expect("purge"), 0);
    let kept = store
        .accounts()
        .account_events("ada", 0, 10)
        .await
        .expect("events");
    let ids: Vec<i64> = kept.iter().map(|event| event.id).collect();
    assert_eq!(ids, [2501, 2502, 2503], "the events of today stay");
}
