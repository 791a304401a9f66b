//! Appends after a head the caller already knows (read with the game, or kept from its last
//! write), alone and in batches, and the read of games' versions that checks a kept state.

use golf_server::store::{Append, EventStore, Head, StoreError, VERSIONS_PER_READ, verify_chain};
use serde_json::json;
use uuid::Uuid;

use super::TestDb;
use super::fixtures::*;
use crate::common::Backend;

pub async fn an_append_after_a_known_head_is_written_only_at_that_version(backend: Backend) {
    // The head read with the game appends; the same head once the game moved on is a Conflict
    // that writes nothing, as is any head of a cancelled game; the version read follows.
    let db = TestDb::connect(backend).await;
    let store = db.store.as_ref();
    let game = create(store, "2026-05-01T12:00:00Z").await;
    let loaded = store.load_game(game.id).await.expect("load").expect("game");
    let first_head = loaded.head();
    assert_eq!(version_of(store, game.id).await, Some(1));

    let entries = append_one(
        store,
        Append {
            game_id: game.id,
            head: first_head,
            events: vec![event("player_joined", json!({"seat": 0}))],
            update: seat_update("waiting", 0, Some([4; 32])),
            idem: Some(move_idem("k", "f")),
        },
    )
    .await
    .expect("append after the known head");
    assert_eq!(seqs(&entries), [2]);
    assert_eq!(version_of(store, game.id).await, Some(2));

    let stale = append_one(
        store,
        Append {
            game_id: game.id,
            head: first_head,
            events: vec![event("player_joined", json!({"seat": 1}))],
            update: seat_update("waiting", 1, Some([5; 32])),
            idem: None,
        },
    )
    .await;
    assert!(matches!(stale, Err(StoreError::Conflict)), "{stale:?}");
    let loaded = store.load_game(game.id).await.expect("load").expect("game");
    assert_eq!((loaded.version, loaded.players), (2, 1));
    assert_eq!(loaded.seat_tokens, [(0, Some([4; 32]))]);
    let log = all_events(store, game.id).await;
    assert_eq!(seqs(&log), [1, 2]);
    assert_eq!(verify_chain(&SEED, &log), Ok(loaded.head_hash));
    assert_eq!(
        store
            .find_game_response(game.id, 0, "k")
            .await
            .expect("find")
            .map(|stored| stored.fingerprint),
        Some("f".to_owned())
    );

    // The current head continues the chain.
    let entries = append_one(
        store,
        Append {
            game_id: game.id,
            head: loaded.head(),
            events: vec![event("player_joined", json!({"seat": 1}))],
            update: seat_update("waiting", 1, Some([5; 32])),
            idem: None,
        },
    )
    .await
    .expect("append after the current head");
    assert_eq!(seqs(&entries), [3]);
    let loaded = store.load_game(game.id).await.expect("load").expect("game");
    assert_eq!(
        verify_chain(&SEED, &all_events(store, game.id).await),
        Ok(loaded.head_hash)
    );

    let cancelled = create(store, "2026-05-01T12:00:00Z").await;
    let head = store
        .load_game(cancelled.id)
        .await
        .expect("load")
        .expect("game")
        .head();
    store.cancel_game(cancelled.id).await.expect("cancel");
    assert_eq!(version_of(store, cancelled.id).await, None);
    let refused = append_one(
        store,
        Append {
            game_id: cancelled.id,
            head,
            events: vec![event("player_joined", json!({"seat": 0}))],
            update: update("waiting"),
            idem: None,
        },
    )
    .await;
    assert!(matches!(refused, Err(StoreError::Conflict)), "{refused:?}");
    assert_eq!(seqs(&all_events(store, cancelled.id).await), [1]);
    assert_eq!(version_of(store, Uuid::new_v4()).await, None);
    // One read of several versions answers for the games that exist and are not cancelled.
    let asked = [game.id, cancelled.id, Uuid::new_v4(), game.id];
    assert_eq!(
        store.game_versions(&asked).await.expect("versions"),
        [(game.id, 3)]
    );
    assert_eq!(store.game_versions(&[]).await.expect("versions"), []);
    let too_many = vec![game.id; VERSIONS_PER_READ + 1];
    assert!(matches!(
        store.game_versions(&too_many).await,
        Err(StoreError::Internal(_))
    ));
}

pub async fn a_batch_of_appends_fails_only_its_stale_members(backend: Backend) {
    // Appends to four games in one batch: the fresh ones are written, one stale by its version
    // and one whose key is recorded fail alone with Conflict, nothing of theirs written.
    let db = TestDb::connect(backend).await;
    let store = db.store.as_ref();
    let mut heads = Vec::new();
    for _ in 0..4 {
        let game = create(store, "2026-05-01T12:00:00Z").await;
        let loaded = store.load_game(game.id).await.expect("load").expect("game");
        heads.push((game.id, loaded.head()));
    }
    let (keyed, keyed_head) = heads[3];
    let taken = append_one(
        store,
        Append {
            game_id: keyed,
            head: keyed_head,
            events: vec![event("player_joined", json!({"seat": 0}))],
            update: seat_update("waiting", 0, Some([4; 32])),
            idem: Some(move_idem("k", "f")),
        },
    )
    .await
    .expect("record the key");
    let keyed_head = Head {
        version: 2,
        hash: <[u8; 32]>::try_from(hex::decode(&taken[0].hash).unwrap()).unwrap(),
        ..keyed_head
    };
    let append = |(game_id, head): (Uuid, Head), idem| Append {
        game_id,
        head,
        events: vec![
            event("card_drawn", json!({"game": game_id})),
            event("card_discarded", json!({})),
        ],
        update: update("playing"),
        idem,
    };
    let stale = Head {
        version: 0,
        ..heads[1].1
    };
    let results = store
        .append(vec![
            append(heads[0], None),
            append((heads[1].0, stale), None),
            append(heads[2], Some(move_idem("k", "f"))),
            append((keyed, keyed_head), Some(move_idem("k", "f2"))),
        ])
        .await;
    assert_eq!(seqs(results[0].as_ref().expect("fresh")), [2, 3]);
    assert!(
        matches!(results[1], Err(StoreError::Conflict)),
        "{:?}",
        results[1]
    );
    assert_eq!(
        seqs(results[2].as_ref().expect("fresh, key of its own")),
        [2, 3]
    );
    assert!(
        matches!(results[3], Err(StoreError::Conflict)),
        "{:?}",
        results[3]
    );
    for (game_id, written) in [
        (heads[0].0, 3),
        (heads[1].0, 1),
        (heads[2].0, 3),
        (keyed, 2),
    ] {
        let log = all_events(store, game_id).await;
        assert_eq!(log.len(), written, "{game_id}");
        let loaded = store.load_game(game_id).await.expect("load").expect("game");
        assert_eq!(loaded.version, written as i64);
        assert_eq!(verify_chain(&SEED, &log), Ok(loaded.head_hash));
    }
    assert_eq!(
        store
            .find_game_response(keyed, 0, "k")
            .await
            .expect("find")
            .map(|stored| stored.fingerprint),
        Some("f".to_owned())
    );
}

/// The version of game `id` as one read of versions finds it.
async fn version_of(store: &dyn EventStore, id: Uuid) -> Option<i64> {
    let versions = store.game_versions(&[id]).await.expect("versions");
    versions.first().map(|(_, version)| *version)
}
