//! The queries of the sweeper: games whose turn deadline has passed, and waiting games created
//! before a time.

use golf_server::store::GameUpdate;
use serde_json::json;

use crate::TestDb;
use crate::common::Backend;
use crate::fixtures::{append_at, at, create, event, update};

fn with_deadline(status: &str, deadline_at: Option<&str>) -> GameUpdate {
    GameUpdate {
        deadline_at: deadline_at.map(at),
        account_games: Vec::new(),
        account_events: Vec::new(),
        ..update(status)
    }
}

pub async fn overdue_games_are_those_whose_stored_deadline_has_passed(backend: Backend) {
    // Each append sets the game's deadline (or clears it); overdue_games finds those at or
    // before a time, earliest first, up to a limit.
    let db = TestDb::connect(backend).await;
    let store = db.store.as_ref();
    let mut games = Vec::new();
    for deadline in [
        "2026-05-01T12:00:30.000002Z",
        "2026-05-01T12:00:10.000000Z",
        "2026-05-01T12:00:20.5Z",
    ] {
        let game = create(store, "2026-05-01T12:00:00Z").await;
        let dealt = vec![event("hole_dealt", json!({}))];
        let update = with_deadline("playing", Some(deadline));
        append_at(store, game.id, 1, dealt, update, None)
            .await
            .expect("append");
        games.push(game.id);
    }
    let none = store
        .overdue_games(at("2026-05-01T12:00:09.999999Z"), 10)
        .await
        .expect("query");
    assert!(none.is_empty(), "{none:?}");
    let due = store
        .overdue_games(at("2026-05-01T12:00:30.000001Z"), 10)
        .await
        .expect("query");
    assert_eq!(due, vec![games[1], games[2]]);
    let first = store
        .overdue_games(at("2026-05-01T14:00:40+02:00"), 1)
        .await
        .expect("query");
    assert_eq!(first, vec![games[1]], "the earliest deadline first");
    let offset = store
        .overdue_games(at("2026-05-01T14:00:15+02:00"), 10)
        .await
        .expect("query");
    assert_eq!(offset, vec![games[1]], "12:00:15 UTC in another offset");

    // A write that leaves nobody to wait for clears the deadline.
    let moved = vec![event("card_drawn", json!({}))];
    let cleared = with_deadline("playing", None);
    append_at(store, games[1], 2, moved, cleared, None)
        .await
        .expect("append");
    let due = store
        .overdue_games(at("2026-05-02T00:00:00Z"), 10)
        .await
        .expect("query");
    assert_eq!(due, vec![games[2], games[0]]);

    // The sweeper backs a failing game off: its deadline moves past the others' while it is still
    // due; a game that is no longer due keeps the deadline its last append set.
    let now = at("2026-05-02T00:00:00Z");
    store
        .postpone_deadline(games[2], now, at("2026-05-02T00:00:10Z"))
        .await
        .expect("postpone");
    store
        .postpone_deadline(games[1], now, at("2026-05-02T00:00:05Z"))
        .await
        .expect("a game with no deadline is left alone");
    let due = store.overdue_games(now, 10).await.expect("query");
    assert_eq!(due, vec![games[0]], "the postponed game is not due yet");
    let later = at("2026-05-02T00:00:20Z");
    let due = store.overdue_games(later, 10).await.expect("query");
    assert_eq!(due, vec![games[0], games[2]]);
}

pub async fn expired_waiting_games_are_the_waiting_games_created_before_a_time(backend: Backend) {
    // Waiting games (private ones too) created at or before the time, oldest first; started
    // and cancelled games never.
    let db = TestDb::connect(backend).await;
    let store = db.store.as_ref();
    let old = create(store, "2026-05-01T10:00:00Z").await;
    let older = create(store, "2026-05-01T09:00:00Z").await;
    let new = create(store, "2026-05-01T12:00:00Z").await;
    let started = create(store, "2026-05-01T08:00:00Z").await;
    let dealt = vec![event("hole_dealt", json!({}))];
    append_at(store, started.id, 1, dealt, update("playing"), None)
        .await
        .expect("start");
    let cancelled = create(store, "2026-05-01T08:30:00Z").await;
    store.cancel_game(cancelled.id).await.expect("cancel");

    let expired = store
        .expired_waiting_games(at("2026-05-01T11:00:00Z"), 10)
        .await
        .expect("query");
    assert_eq!(expired, vec![older.id, old.id]);
    let first = store
        .expired_waiting_games(at("2026-05-01T12:00:00Z"), 1)
        .await
        .expect("query");
    assert_eq!(first, vec![older.id]);
    let all = store
        .expired_waiting_games(at("2026-05-01T12:00:00Z"), 10)
        .await
        .expect("query");
    assert_eq!(all, vec![older.id, old.id, new.id]);
}
