//! Snapshots of a game's state and the stored audit of a finished game.

use std::collections::HashMap;

use golf_server::store::accounts::NewAccount;
use golf_server::store::{AuditResult, EventStore, NewEvent, Snapshot};
use serde_json::json;
use uuid::Uuid;

use crate::TestDb;
use crate::common::Backend;
use crate::fixtures::{append_at, at, created, event, new_game, parsed, raw, seqs, update};

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
    // in play), up to the limit (these, of no host and ended at the same time, in id order); a
    // game whose analysis is stored drops out.
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

pub async fn unanalysed_games_take_turns_between_their_hosts(backend: Backend) {
    // One host's many finished games do not hold back another's: the sweep takes each host's
    // newest game first (the games of no account as one host), then each host's second newest,
    // and so on.
    let db = TestDb::connect(backend).await;
    let store: &dyn EventStore = db.store.as_ref();
    for username in ["ann", "bob"] {
        let account = NewAccount {
            username: username.to_owned(),
            display_name: username.to_owned(),
            token_hash: [username.len() as u8 + username.as_bytes()[0]; 32],
            created_at: at("2026-05-01T08:00:00Z"),
        };
        store
            .accounts()
            .create_account(account, None)
            .await
            .expect("account");
    }
    let mut ended = HashMap::new();
    for (host, time) in [
        (Some("ann"), "11:00"),
        (Some("bob"), "10:00"),
        (Some("ann"), "13:00"),
        (None, "09:00"),
        (Some("ann"), "12:00"),
    ] {
        let mut game = new_game("2026-05-01T08:00:00Z");
        game.host_account = host.map(str::to_owned);
        store
            .create_game(game.clone(), created(&game), None)
            .await
            .expect("create");
        let end = NewEvent {
            at: format!("2026-05-01T{time}:00.000000Z"),
            ..event("game_ended", json!({}))
        };
        append_at(store, game.id, 1, vec![end], update("finished"), None)
            .await
            .expect("append");
        ended.insert(time, game.id);
    }
    let order = ["13:00", "10:00", "09:00", "12:00", "11:00"].map(|time| ended[time]);
    assert_eq!(store.unanalysed_games(10).await.expect("sweep"), order);
    assert_eq!(store.unanalysed_games(2).await.expect("sweep"), order[..2]);
}
