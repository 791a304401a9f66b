//! The games, events, updates and idempotency records the conformance cases store.

use golf_server::engine::{FlipRule, Rules, Status, Timestamp};
use golf_server::store::{
    Append, CreateIdempotency, Entry, EventStore, GameIdempotency, GameUpdate, Head, NewEvent,
    NewGame, NewSeat, RawJson, StoreError,
};
use serde_json::{Value, json};
use uuid::Uuid;

pub const SEED: [u8; 32] = [7; 32];

pub fn new_game(created_at: &str) -> NewGame {
    NewGame {
        id: Uuid::new_v4(),
        created_at: at(created_at),
        seats: 2,
        holes: 9,
        rules: Rules {
            flip_after_discard: FlipRule::Optional,
            ..Rules::default()
        },
        commitment: "ab".repeat(32),
        server_seed: SEED,
        host_token_hash: [1; 32],
        private: false,
        stacked: false,
        decks: None,
        status: Status::Waiting,
        projection: raw(json!({"status": "waiting", "players": []})),
        host_account: None,
        rated: false,
    }
}

/// The time an RFC 3339 text names, in any offset.
pub fn at(text: &str) -> Timestamp {
    let time = chrono::DateTime::parse_from_rfc3339(text).expect("RFC 3339");
    Timestamp(time.timestamp_micros())
}

/// The status named `name` (`"waiting"`, `"playing"`, `"finished"`).
pub fn status_named(name: &str) -> Status {
    serde_json::from_value(json!(name)).expect("a status")
}

/// `value` as the store takes JSON it only keeps.
pub fn raw(value: Value) -> RawJson {
    serde_json::value::to_raw_value(&value).expect("JSON")
}

/// The JSON a store kept, to compare.
pub fn parsed(raw: &RawJson) -> Value {
    serde_json::from_str(raw.get()).expect("stored JSON")
}

pub fn event(kind: &str, data: Value) -> NewEvent {
    NewEvent {
        kind: kind.to_owned(),
        data,
        at: "2026-05-01T12:00:00.5Z".to_owned(),
    }
}

pub fn created(game: &NewGame) -> Vec<NewEvent> {
    vec![event(
        "game_created",
        json!({"game_id": game.id, "format": "golf-log/1", "seats": game.seats, "name": "Zoë ☃"}),
    )]
}

pub fn update(status: &str) -> GameUpdate {
    GameUpdate {
        status: status_named(status),
        projection: raw(json!({"status": status})),
        new_seats: Vec::new(),
        snapshots: Vec::new(),
        deadline_at: None,
        account_games: Vec::new(),
        account_events: Vec::new(),
    }
}

pub fn seat_update(status: &str, seat: i32, token_hash: Option<[u8; 32]>) -> GameUpdate {
    GameUpdate {
        new_seats: vec![NewSeat {
            seat,
            name: format!("Player {seat}"),
            bot: token_hash.is_none().then(|| "greedy".to_owned()),
            client_seed: "seed".to_owned(),
            token_hash,
            account: None,
        }],
        ..update(status)
    }
}

pub fn move_idem(key: &str, fingerprint: &str) -> GameIdempotency {
    GameIdempotency {
        seat: 0,
        key: key.to_owned(),
        fingerprint: fingerprint.to_owned(),
        response_status: 200,
        response_body: json!({"version": 2, "fingerprint": fingerprint}),
    }
}

pub fn create_idem(key: &str, fingerprint: &str) -> CreateIdempotency {
    CreateIdempotency {
        key: key.to_owned(),
        fingerprint: fingerprint.to_owned(),
        response_status: 201,
        response_body: json!({"created": fingerprint}),
    }
}

/// Creates a game with its `game_created` event; returns the game as created.
pub async fn create(store: &dyn EventStore, created_at: &str) -> NewGame {
    let game = new_game(created_at);
    store
        .create_game(game.clone(), created(&game), None)
        .await
        .expect("create");
    game
}

pub async fn all_events(store: &dyn EventStore, game_id: Uuid) -> Vec<Entry> {
    store.load_events(game_id, 0, 1000).await.expect("events")
}

pub fn seqs(entries: &[Entry]) -> Vec<i64> {
    entries.iter().map(|e| e.seq).collect()
}

/// Writes `append` alone: a batch of one.
pub async fn append_one(store: &dyn EventStore, append: Append) -> Result<Vec<Entry>, StoreError> {
    let mut results = store.append(vec![append]).await;
    assert_eq!(results.len(), 1, "one answer per append");
    results.pop().expect("an answer")
}

/// Appends `events` to game `game_id` if it is at `version`: after the head read with the game
/// (or, for a game that does not load, a head no game has).
pub async fn append_at(
    store: &dyn EventStore,
    game_id: Uuid,
    version: i64,
    events: Vec<NewEvent>,
    update: GameUpdate,
    idem: Option<GameIdempotency>,
) -> Result<Vec<Entry>, StoreError> {
    let head = match store.load_game(game_id).await.expect("load") {
        Some(game) => Head {
            version,
            ..game.head()
        },
        None => Head {
            version,
            server_seed: SEED,
            hash: [0; 32],
        },
    };
    let append = Append {
        game_id,
        head,
        events,
        update,
        idem,
    };
    append_one(store, append).await
}
