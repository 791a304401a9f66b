//! Snapshots of a game's state and the stored audit of a finished game.

use golf_server::store::{AuditResult, EventStore, Snapshot};
use serde_json::json;
use uuid::Uuid;

use crate::TestDb;
use crate::common::Backend;
use crate::fixtures::{append_at, created, event, new_game, parsed, raw, seqs, update};

pub async fn the_latest_snapshot_at_or_before_a_seq_is_found(backend: Backend) {
    // An append may keep states of the game after some of its entries; a replay asks for the
    // latest one at or before the entry it replays to.
    let db = TestDb::connect(backend).await;
    let store = db.store.as_ref();
    let game = new_game("2026-05-01T12:00:00Z");
    store
        .create_game(game.clone(), created(&game), None)
        .await
        .expect("create");
    assert!(
        store
            .load_snapshot(game.id, 10)
            .await
            .expect("load")
            .is_none()
    );
    let at = |seq: i64| Snapshot {
        seq,
        state: raw(json!({"after": seq})),
    };
    for (version, snapshots) in [(1, vec![at(3)]), (3, vec![]), (5, vec![at(6), at(7)])] {
        let mut next = update("playing");
        next.snapshots = snapshots;
        let events = vec![
            event("card_drawn", json!({})),
            event("card_swapped", json!({})),
        ];
        let appended = append_at(store, game.id, version, events, next, None)
            .await
            .expect("append");
        assert_eq!(seqs(&appended), [version + 1, version + 2]);
    }
    for (seq, expected) in [
        (2, None),
        (3, Some(3)),
        (5, Some(3)),
        (6, Some(6)),
        (9, Some(7)),
    ] {
        let found = store.load_snapshot(game.id, seq).await.expect("load");
        let found = found.map(|snapshot| (snapshot.seq, parsed(&snapshot.state)));
        let expected = expected
            .map(at)
            .map(|snapshot| (snapshot.seq, parsed(&snapshot.state)));
        assert_eq!(found, expected, "at or before {seq}");
    }
    assert!(
        store
            .load_snapshot(Uuid::new_v4(), 7)
            .await
            .expect("load")
            .is_none()
    );
}

pub async fn the_first_audit_of_a_game_stands(backend: Backend) {
    // A game loads without an audit until one is recorded; a second record changes nothing.
    let db = TestDb::connect(backend).await;
    let store: &dyn EventStore = db.store.as_ref();
    let game = new_game("2026-05-01T12:00:00Z");
    store
        .create_game(game.clone(), created(&game), None)
        .await
        .expect("create");
    let audit = |game_id| async move {
        store
            .load_game(game_id)
            .await
            .expect("load")
            .expect("game")
            .audit
    };
    assert_eq!(audit(game.id).await, None);
    let first = AuditResult {
        verified: false,
        first_bad_seq: Some(1),
    };
    store.record_audit(game.id, first).await.expect("record");
    assert_eq!(audit(game.id).await, Some(first));
    let second = AuditResult {
        verified: true,
        first_bad_seq: None,
    };
    store.record_audit(game.id, second).await.expect("record");
    assert_eq!(audit(game.id).await, Some(first));
}

pub async fn finished_games_are_unanalysed_until_their_analysis_is_stored(backend: Backend) {
    // The analysis threads' sweep finds the finished games without an analysis (not the games
    // in play), in id order, up to the limit; a game whose analysis is stored drops out.
    let db = TestDb::connect(backend).await;
    let store: &dyn EventStore = db.store.as_ref();
    let mut finished = Vec::new();
    for status in ["finished", "playing", "finished", "finished"] {
        let game = new_game("2026-05-01T12:00:00Z");
        store
            .create_game(game.clone(), created(&game), None)
            .await
            .expect("create");
        let moved = vec![event("game_started", json!({}))];
        append_at(store, game.id, 1, moved, update(status), None)
            .await
            .expect("append");
        if status == "finished" {
            finished.push(game.id);
        }
    }
    finished.sort();
    assert_eq!(store.unanalysed_games(10).await.expect("sweep"), finished);
    assert_eq!(
        store.unanalysed_games(2).await.expect("sweep"),
        finished[..2]
    );
    store
        .record_analysis(finished[1], "{\"status\": \"done\"}")
        .await
        .expect("record");
    assert_eq!(
        store.unanalysed_games(10).await.expect("sweep"),
        [finished[0], finished[2]]
    );
    assert_eq!(
        store
            .load_analysis(finished[1])
            .await
            .expect("load")
            .as_deref(),
        Some("{\"status\": \"done\"}")
    );
}
