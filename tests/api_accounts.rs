//! Accounts through real HTTP on both backends: creation and each refusal, the account token,
//! its rotation across instances, profiles.

mod common;

use std::time::Duration;

use common::{Backend, Seat, TestApp, pick_move, play_to_the_end, spawn_app, spawn_app_on};
use reqwest::Method;
use serde_json::{Value, json};
use sqlx::Connection;
use sqlx::postgres::PgConnection;
use sqlx::sqlite::SqliteConnection;
use uuid::Uuid;

/// Creates an account and answers its status and body.
async fn post_account(app: &TestApp, body: Value, key: Option<&str>) -> (u16, Value) {
    let mut request = app.client.post(app.url("/v1/accounts")).json(&body);
    if let Some(key) = key {
        request = request.header("idempotency-key", key);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

/// Creates account `username` and answers its token.
pub async fn account(app: &TestApp, username: &str) -> String {
    let (status, body) = post_account(app, json!({"username": username}), None).await;
    assert_eq!(status, 201, "{body}");
    body["token"].as_str().unwrap().to_owned()
}

async fn get_json(app: &TestApp, path: &str, token: Option<&str>) -> (u16, Value) {
    let response = app.send(Method::GET, path, None, token).await;
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn an_account_is_created_read_and_its_name_folded(backend: Backend) {
    // A new account answers its token once; GET /v1/account shows it; the name is stored lowercase.
    let app = spawn_app(backend).await;
    let (status, created) = post_account(&app, json!({"username": "Ada_1"}), None).await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["username"], "ada_1");
    assert_eq!(
        created["display_name"], "ada_1",
        "the display name defaults to the username"
    );
    assert_eq!(
        created["rating"],
        json!({"value": 1500.0, "deviation": 500.0, "games": 0, "provisional": true})
    );
    assert_eq!(created["games"], json!({"played": 0, "won": 0}));
    let token = created["token"].as_str().unwrap();
    let (status, own) = get_json(&app, "/v1/account", Some(token)).await;
    assert_eq!(status, 200);
    assert_eq!(own["username"], "ada_1");
    assert_eq!(own["created_at"], created["created_at"]);
    assert!(own.get("token").is_none(), "the token is shown once");
    let (status, profile) = get_json(&app, "/v1/accounts/ADA_1", None).await;
    assert_eq!((status, &profile["username"]), (200, &json!("ada_1")));
    assert_eq!(profile["recent"], json!([]));
    let (status, named) = post_account(
        &app,
        json!({"username": "bob", "display_name": "Bob B"}),
        None,
    )
    .await;
    assert_eq!((status, &named["display_name"]), (201, &json!("Bob B")));
}

async fn every_refusal_of_a_new_account_has_its_code(backend: Backend) {
    // Invalid and reserved names are 422 invalid_username, a taken one (in any case) 409.
    let app = spawn_app(backend).await;
    account(&app, "ada").await;
    let cases = [
        (json!({"username": "ab"}), 422, "invalid_username"),
        (json!({"username": "9ada"}), 422, "invalid_username"),
        (json!({"username": "ada.b"}), 422, "invalid_username"),
        (json!({"username": "a".repeat(25)}), 422, "invalid_username"),
        (json!({"username": "bot-greedy"}), 422, "invalid_username"),
        (json!({"username": "ADA"}), 409, "username_taken"),
        (json!({"username": "ada"}), 409, "username_taken"),
        (
            json!({"username": "cleo", "display_name": ""}),
            422,
            "invalid_name",
        ),
        (
            json!({"username": "cleo", "extra": 1}),
            400,
            "malformed_request",
        ),
    ];
    for (body, status, code) in cases {
        let (got, problem) = post_account(&app, body.clone(), None).await;
        assert_eq!(
            (got, problem["code"].as_str().unwrap()),
            (status, code),
            "{body}"
        );
    }
    let (status, problem) = get_json(&app, "/v1/accounts/nobody", None).await;
    assert_eq!(
        (status, problem["code"].as_str().unwrap()),
        (404, "not_found")
    );
    for token in [None, Some("not-a-token")] {
        let (status, problem) = get_json(&app, "/v1/account", token).await;
        assert_eq!(
            (status, problem["code"].as_str().unwrap()),
            (401, "unauthorized")
        );
    }
}

async fn a_retried_creation_with_its_key_answers_the_same_account(backend: Backend) {
    // The same key and body answer the first account and token; another body is refused.
    let app = spawn_app(backend).await;
    let key = "6f1d2c9e-4b7a-4e2f-9c3d-acc0un7k3y01";
    let (first_status, first) = post_account(&app, json!({"username": "ada"}), Some(key)).await;
    let (again_status, again) = post_account(&app, json!({"username": "ada"}), Some(key)).await;
    assert_eq!((first_status, again_status), (201, 201));
    assert_eq!(first, again, "the replay carries the same token");
    let (status, problem) = post_account(&app, json!({"username": "bob"}), Some(key)).await;
    assert_eq!(
        (status, problem["code"].as_str().unwrap()),
        (422, "idempotency_key_reused")
    );
    let (status, _) = get_json(&app, "/v1/account", first["token"].as_str()).await;
    assert_eq!(status, 200);
}

async fn a_rotated_token_is_refused_at_once_on_another_instance(backend: Backend) {
    // After a rotation on one instance, the other refuses the old token and takes the new one.
    let first = spawn_app(backend).await;
    let second = spawn_app_on(first.database.shared()).await;
    let old = account(&first, "ada").await;
    assert_eq!(get_json(&second, "/v1/account", Some(&old)).await.0, 200);
    let response = first
        .send(Method::POST, "/v1/account/token", None, Some(&old))
        .await;
    assert_eq!(response.status(), 200);
    let new = response.json::<Value>().await.unwrap()["token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(new, old);
    assert_eq!(get_json(&second, "/v1/account", Some(&old)).await.0, 401);
    assert_eq!(get_json(&first, "/v1/account", Some(&old)).await.0, 401);
    let (status, own) = get_json(&second, "/v1/account", Some(&new)).await;
    assert_eq!((status, &own["username"]), (200, &json!("ada")));
}

async fn a_rotation_ends_the_streams_of_the_old_token(backend: Backend) {
    // A stream opened with the old token ends when the token is rotated, well before its next
    // keep-alive, on another instance on PostgreSQL (SQLite serves one instance); one opened with
    // the new token stays open.
    let first = spawn_app(backend).await;
    let second = match backend {
        Backend::Postgres => Some(spawn_app_on(first.database.shared()).await),
        Backend::Sqlite => None,
    };
    let streaming = second.as_ref().unwrap_or(&first);
    let old = account(&first, "ada").await;
    let mut stream = streaming
        .client
        .get(streaming.url("/v1/account/stream"))
        .bearer_auth(&old)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    let response = first
        .send(Method::POST, "/v1/account/token", None, Some(&old))
        .await;
    assert_eq!(response.status(), 200);
    let new = response.json::<Value>().await.unwrap()["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let ended = tokio::time::timeout(Duration::from_secs(5), async {
        while stream.chunk().await.unwrap().is_some() {}
    })
    .await;
    assert!(ended.is_ok(), "the old token's stream is still open");
    let mut kept = streaming
        .client
        .get(streaming.url("/v1/account/stream"))
        .bearer_auth(&new)
        .send()
        .await
        .unwrap();
    assert_eq!(kept.status(), 200);
    let quiet = tokio::time::timeout(Duration::from_secs(2), kept.chunk()).await;
    assert!(
        quiet.is_err(),
        "the new token's stream stays open: {quiet:?}"
    );
}

/// Takes a seat of game `id` with `token` and `body`; answers the status and body.
async fn join_with(app: &TestApp, id: &str, token: &str, body: Value) -> (u16, Value) {
    let path = format!("/v1/games/{id}/players");
    let response = app
        .send(Method::POST, &path, Some(&body), Some(token))
        .await;
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

/// Creates a game of two with `token` as the host's bearer; answers its id.
async fn game_hosted_by(app: &TestApp, token: &str) -> String {
    let body = json!({"seats": 2, "holes": 1});
    let response = app
        .send(Method::POST, "/v1/games", Some(&body), Some(token))
        .await;
    assert_eq!(response.status(), 201);
    response.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn a_seat_bound_to_an_account_is_read_and_moved_by_its_token(backend: Backend) {
    // The account that created a game joins it with its token: the seat takes its display name,
    // its player_joined names the account (an anonymous one does not), a second seat is refused,
    // and the account token reads the seat's view and moves it.
    let app = spawn_app(backend).await;
    let ada = account(&app, "ada").await;
    let id = game_hosted_by(&app, &ada).await;
    let (status, joined) = join_with(&app, &id, &ada, json!({"client_seed": "s"})).await;
    assert_eq!(status, 201, "{joined}");
    let (status, problem) = join_with(&app, &id, &ada, json!({})).await;
    assert_eq!(
        (status, problem["code"].as_str().unwrap()),
        (409, "already_seated")
    );
    app.join(&id, "Bob").await;
    let log = app.events(&id, None, 0).await;
    let joins: Vec<&Value> = log
        .iter()
        .filter(|e| e["type"] == "player_joined")
        .collect();
    assert_eq!(joins[0]["data"]["account"], "ada");
    assert_eq!(joins[0]["data"]["name"], "ada");
    assert!(joins[1]["data"].get("account").is_none(), "{}", joins[1]);
    let view = app.view(&id, Some(&ada)).await;
    assert_eq!(view["you"], joined["seat"], "{view}");
    let reveal = json!({"type": "reveal", "positions": [0, 1]});
    let moved = app.play(&id, &ada, &reveal).await;
    assert_eq!(moved.status(), 200);
    let audit = app.get(&format!("/v1/games/{id}/audit")).await;
    assert_eq!(audit.status(), 200);
}

async fn an_account_token_reads_other_games_as_a_spectator_only(backend: Backend) {
    // In a game it has no seat of, an account token reads the public view and the log, and gets
    // 401 where a seat is needed; an unknown or rotated token is 401 everywhere.
    let app = spawn_app(backend).await;
    let ada = account(&app, "ada").await;
    let (id, _) = app.create_game(json!({"seats": 2, "holes": 1})).await;
    let bob: Seat = app.join(&id, "Bob").await;
    app.join(&id, "Cleo").await;
    let public = |token: &str| {
        let path = format!("/v1/games/{id}");
        let token = token.to_owned();
        let app = &app;
        async move {
            app.send(Method::GET, &path, None, Some(&token))
                .await
                .status()
                .as_u16()
        }
    };
    assert_eq!(public(&ada).await, 200);
    assert_eq!(public(&bob.token).await, 200);
    let own = app
        .send(
            Method::GET,
            &format!("/v1/games/{id}/view"),
            None,
            Some(&ada),
        )
        .await;
    assert_eq!(own.status(), 401);
    let reveal = json!({"type": "reveal", "positions": [0, 1]});
    assert_eq!(app.play(&id, &ada, &reveal).await.status(), 401);
    let cancel = app
        .send(Method::DELETE, &format!("/v1/games/{id}"), None, Some(&ada))
        .await;
    assert_eq!(cancel.status(), 401);
    let rotated = app
        .send(Method::POST, "/v1/account/token", None, Some(&ada))
        .await;
    assert_eq!(rotated.status(), 200);
    assert_eq!(public(&ada).await, 401, "a rotated token is a bad token");
    assert_eq!(public("0123").await, 401);
    let create = app
        .send(
            Method::POST,
            "/v1/games",
            Some(&json!({"seats": 2})),
            Some(&ada),
        )
        .await;
    assert_eq!(create.status(), 401);
}

async fn a_game_of_two_accounts_plays_to_the_end_and_verifies(backend: Backend) {
    // Two account seats play a whole game by their account tokens; the log audits clean.
    let app = spawn_app(backend).await;
    let ada = account(&app, "ada").await;
    let bob = account(&app, "bob").await;
    let id = game_hosted_by(&app, &ada).await;
    let mut seats = Vec::new();
    for token in [&ada, &bob] {
        let (status, joined) = join_with(&app, &id, token, json!({})).await;
        assert_eq!(status, 201, "{joined}");
        let seat = joined["seat"].as_u64().unwrap() as u8;
        seats.push(Seat {
            seat,
            token: token.clone(),
        });
    }
    play_to_the_end(&app, &id, &seats).await;
    assert_eq!(app.view(&id, None).await["status"], "finished");
    let audit = app.audit(&id).await;
    assert_eq!(audit["verified"], true, "{audit}");
    // The export (with the accounts in its player_joined) verifies offline, and check-db passes.
    let export = app.get(&format!("/v1/games/{id}/export")).await;
    let export = export.text().await.unwrap();
    assert!(export.contains(r#""account":"bob""#), "{export}");
    let report = golf_server::audit::ndjson::audit_text(&export);
    assert!(report.verified, "{:?}", report.findings);
    let store = common::open_store(&app.database.url).await;
    let checked = golf_server::commands::check_db::check_database(store.as_ref())
        .await
        .unwrap();
    assert!(checked.problems.is_empty(), "{:?}", checked.problems);
}

/// Whether each of `seats` may move now, and the hole the game is at.
async fn who_may_move(app: &TestApp, id: &str, seats: &[Seat]) -> (Vec<Value>, Vec<bool>, Value) {
    let mut views = Vec::new();
    for seat in seats {
        views.push(app.view(id, Some(&seat.token)).await);
    }
    let may = views
        .iter()
        .map(|view| !view["legal_moves"].as_array().unwrap().is_empty())
        .collect();
    let hole = views[0]["hole"].clone();
    (views, may, hole)
}

/// Plays game `id` of `seats` to the end, one move at a time; answers how many times each seat
/// was given moves it did not have just before (the deal of hole 1 included): the `your_turn`s
/// due. A move that deals the next hole gives its mover reveal moves after losing its turn.
async fn play_counting_turns(app: &TestApp, id: &str, seats: &[Seat]) -> Vec<usize> {
    let mut due = vec![1; seats.len()];
    let (mut views, mut may, mut hole) = who_may_move(app, id, seats).await;
    for turn in 0..5000 {
        let Some(mover) = may.iter().position(|&may| may) else {
            return due;
        };
        let mv = pick_move(&views[mover], turn).unwrap();
        assert_eq!(app.play(id, &seats[mover].token, &mv).await.status(), 200);
        let (next_views, next_may, next_hole) = who_may_move(app, id, seats).await;
        for seat in 0..seats.len() {
            let dealt_to_mover = seat == mover && next_hole != hole && next_may[seat];
            if (!may[seat] && next_may[seat]) || dealt_to_mover {
                due[seat] += 1;
            }
        }
        (views, may, hole) = (next_views, next_may, next_hole);
    }
    panic!("the game did not end");
}

/// The events of `token`'s account, read a page of 7 at a time.
async fn all_events(app: &TestApp, token: &str) -> Vec<Value> {
    let mut events: Vec<Value> = Vec::new();
    loop {
        let after = events.last().map_or(0, |e| e["id"].as_i64().unwrap());
        let path = format!("/v1/account/events?after={after}&limit=7");
        let (status, page) = get_json(app, &path, Some(token)).await;
        assert_eq!(status, 200, "{page}");
        let page = page["events"].as_array().unwrap().clone();
        if page.is_empty() {
            return events;
        }
        events.extend(page);
    }
}

/// Reads `count` messages of the account stream of `token` opened with `Last-Event-ID: last`.
async fn streamed(app: &TestApp, token: &str, last: i64, count: usize) -> Vec<Value> {
    let mut response = app
        .client
        .get(app.url("/v1/account/stream"))
        .bearer_auth(token)
        .header("Last-Event-ID", last.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let (mut buffer, mut messages) = (String::new(), Vec::new());
    while messages.len() < count {
        let chunk = tokio::time::timeout(Duration::from_secs(10), response.chunk()).await;
        let bytes = chunk
            .expect("an event within 10 s")
            .unwrap()
            .expect("an open stream");
        buffer.push_str(std::str::from_utf8(&bytes).unwrap());
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            let (Some(id), Some(data)) = (
                block.lines().find_map(|l| l.strip_prefix("id: ")),
                block.lines().find_map(|l| l.strip_prefix("data: ")),
            ) else {
                continue;
            };
            let data: Value = serde_json::from_str(data).unwrap();
            assert_eq!(data["id"].as_i64().unwrap(), id.parse::<i64>().unwrap());
            messages.push(data);
        }
    }
    messages
}

async fn each_account_hears_of_its_games_start_turns_and_end_once(backend: Backend) {
    // Two accounts play a game: each one's events hold game_started, one your_turn each time its
    // seat got moves, and game_ended, exactly once, with ids 1, 2, 3, ...; the stream resumed
    // with Last-Event-ID gives the same events; its games list and counts show the game.
    let app = spawn_app(backend).await;
    let tokens = [account(&app, "ada").await, account(&app, "bob").await];
    let id = game_hosted_by(&app, &tokens[0]).await;
    let mut seats = Vec::new();
    for token in &tokens {
        let (status, joined) = join_with(&app, &id, token, json!({})).await;
        assert_eq!(status, 201, "{joined}");
        let seat = joined["seat"].as_u64().unwrap() as u8;
        seats.push(Seat {
            seat,
            token: token.clone(),
        });
    }
    let (status, page) = get_json(&app, "/v1/account/games?turn=mine", Some(&tokens[1])).await;
    assert_eq!(
        (status, page["games"].as_array().unwrap().len()),
        (200, 1),
        "{page}"
    );
    let due = play_counting_turns(&app, &id, &seats).await;
    for (n, token) in tokens.iter().enumerate() {
        let events = all_events(&app, token).await;
        let ids: Vec<i64> = events.iter().map(|e| e["id"].as_i64().unwrap()).collect();
        assert_eq!(ids, (1..=events.len() as i64).collect::<Vec<_>>());
        let of_type = |kind: &str| events.iter().filter(|e| e["type"] == kind).count();
        assert_eq!(of_type("game_started"), 1);
        assert_eq!(of_type("game_ended"), 1);
        assert_eq!(of_type("your_turn"), due[n], "account {n}");
        assert_eq!(events[0]["type"], "game_started");
        assert_eq!(events.last().unwrap()["type"], "game_ended");
        assert!(
            events
                .iter()
                .all(|e| e["game_id"] == json!(id) && e["seat"] == json!(n))
        );
        let resumed = streamed(&app, token, 2, events.len() - 2).await;
        assert_eq!(resumed, events[2..]);
        let (_, own) = get_json(&app, "/v1/account", Some(token)).await;
        assert_eq!(own["games"]["played"], 1);
        let (_, page) = get_json(&app, "/v1/account/games?status=finished", Some(token)).await;
        let game = &page["games"][0];
        assert_eq!(
            (&game["id"], &game["your_seat"], &game["your_turn"]),
            (&json!(id), &json!(n), &json!(false))
        );
        assert_eq!(game["players"][n]["account"], json!(["ada", "bob"][n]));
    }
    let (_, profile) = get_json(&app, "/v1/accounts/bob", None).await;
    assert_eq!(profile["recent"][0]["id"], json!(id));
}

async fn a_stream_is_woken_by_an_append_and_games_page_newest_first(backend: Backend) {
    // A stream open before the write that starts a game receives its game_started at once; the
    // account's games come newest first, a page at a time.
    let app = spawn_app(backend).await;
    let ada = account(&app, "ada").await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        let id = game_hosted_by(&app, &ada).await;
        join_with(&app, &id, &ada, json!({})).await;
        ids.push(id);
    }
    let listening = {
        let app_address = app.address.clone();
        let token = ada.clone();
        tokio::spawn(async move {
            let client = reqwest::Client::new();
            let mut response = client
                .get(format!(
                    "{app_address}/v1/account/stream?token={token}&after=0"
                ))
                .send()
                .await
                .unwrap();
            let chunk = tokio::time::timeout(Duration::from_secs(10), response.chunk()).await;
            String::from_utf8(chunk.unwrap().unwrap().unwrap().to_vec()).unwrap()
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    app.join(&ids[1], "Bob").await;
    let message = listening.await.unwrap();
    assert!(
        message.starts_with("id: 1\n") && message.contains("game_started"),
        "{message}"
    );
    let mut listed = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(cursor) => format!("/v1/account/games?limit=2&cursor={cursor}"),
            None => "/v1/account/games?limit=2".to_owned(),
        };
        let (status, page) = get_json(&app, &path, Some(&ada)).await;
        assert_eq!(status, 200, "{page}");
        listed.extend(
            page["games"]
                .as_array()
                .unwrap()
                .iter()
                .map(|g| g["id"].clone()),
        );
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(listed, vec![json!(ids[1]), json!(ids[2]), json!(ids[0])]);
    let (status, _) = get_json(&app, "/v1/account/games?cursor=zz", Some(&ada)).await;
    assert_eq!(status, 400);
    let (_, waiting) = get_json(&app, "/v1/account/games?status=playing", Some(&ada)).await;
    assert_eq!(waiting["games"].as_array().unwrap().len(), 1);
}

/// The ids of every game `token`'s account lists at `query`, one page of one game at a time,
/// each with its `your_turn`.
async fn listed_one_by_one(app: &TestApp, token: &str, query: &str) -> Vec<(String, bool)> {
    let mut listed = Vec::new();
    let mut cursor = String::new();
    loop {
        let path = format!("/v1/account/games?limit=1&{query}{cursor}");
        let (status, page) = get_json(app, &path, Some(token)).await;
        assert_eq!(status, 200, "{page}");
        for game in page["games"].as_array().unwrap() {
            let id = game["id"].as_str().unwrap().to_owned();
            listed.push((id, game["your_turn"].as_bool().unwrap()));
        }
        match page["next_cursor"].as_str() {
            Some(next) => cursor = format!("&cursor={next}"),
            None => return listed,
        }
    }
}

async fn finished_and_unfinished_games_are_listed_by_their_last_entry(backend: Backend) {
    // Two finished games, one waiting and one playing: a move in the playing game, older than
    // the last finished one, brings it to the top, whatever the filter or the page size, and
    // whose turn it is follows the game.
    let app = spawn_app(backend).await;
    let ada = account(&app, "ada").await;
    let bob = account(&app, "bob").await;
    let seated = |id: &str| {
        let id = id.to_owned();
        let (app, ada, bob) = (&app, ada.clone(), bob.clone());
        async move {
            let mut seats = Vec::new();
            for token in [ada, bob] {
                let (status, joined) = join_with(app, &id, &token, json!({})).await;
                assert_eq!(status, 201, "{joined}");
                let seat = joined["seat"].as_u64().unwrap() as u8;
                seats.push(Seat { seat, token });
            }
            seats
        }
    };
    let first = game_hosted_by(&app, &ada).await;
    play_to_the_end(&app, &first, &seated(&first).await).await;
    let playing = game_hosted_by(&app, &ada).await;
    let playing_seats = seated(&playing).await;
    let waiting = game_hosted_by(&app, &ada).await;
    join_with(&app, &waiting, &ada, json!({})).await;
    let last = game_hosted_by(&app, &ada).await;
    play_to_the_end(&app, &last, &seated(&last).await).await;
    let listed = listed_one_by_one(&app, &ada, "").await;
    let ids: Vec<&str> = listed.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, [&last, &waiting, &playing, &first]);
    assert!(listed[2].1, "both seats reveal at once: it is ada's turn");

    let view = app.view(&playing, Some(&ada)).await;
    let reveal = pick_move(&view, 0).unwrap();
    let response = app.play(&playing, &playing_seats[0].token, &reveal).await;
    assert_eq!(response.status(), 200);
    let ids =
        |listed: Vec<(String, bool)>| listed.into_iter().map(|(id, _)| id).collect::<Vec<_>>();
    let listed = listed_one_by_one(&app, &ada, "").await;
    assert_eq!(
        listed[0],
        (playing.clone(), false),
        "ada revealed: bob's turn"
    );
    assert_eq!(
        ids(listed),
        [
            playing.as_str(),
            last.as_str(),
            waiting.as_str(),
            first.as_str()
        ]
    );
    assert_eq!(
        ids(listed_one_by_one(&app, &ada, "status=finished").await),
        [last.as_str(), first.as_str()]
    );
    assert_eq!(
        ids(listed_one_by_one(&app, &ada, "status=waiting").await),
        [waiting.as_str()]
    );
    assert_eq!(
        ids(listed_one_by_one(&app, &ada, "status=playing").await),
        [playing.as_str()]
    );
    assert!(listed_one_by_one(&app, &ada, "turn=mine").await.is_empty());
    assert_eq!(
        listed_one_by_one(&app, &bob, "turn=mine").await,
        [(playing.clone(), true)]
    );
    assert_eq!(
        ids(listed_one_by_one(&app, &bob, "").await),
        [playing.as_str(), last.as_str(), first.as_str()]
    );
}

/// Runs `statement` with `$1` the game `id` and `$2` the text `at`; answers the rows it changed.
async fn execute(app: &TestApp, statement: &'static str, id: &str, at: &str) -> u64 {
    let id: Uuid = id.parse().unwrap();
    let url = &app.database.url;
    match app.database.backend {
        Backend::Postgres => {
            let mut conn = PgConnection::connect(url).await.unwrap();
            let query = sqlx::query(statement).bind(id).bind(at);
            query.execute(&mut conn).await.unwrap().rows_affected()
        }
        Backend::Sqlite => {
            let mut conn = SqliteConnection::connect(url).await.unwrap();
            let query = sqlx::query(statement).bind(id).bind(at);
            query.execute(&mut conn).await.unwrap().rows_affected()
        }
    }
}

async fn a_game_row_an_earlier_release_moved_is_timed_by_its_last_entry(backend: Backend) {
    // Each append writes the time of its last entry on the game's row, where the account's page
    // reads it. An earlier release, moving a game during a rolling upgrade, leaves that time
    // behind: the page then times the game by its last entry.
    let app = spawn_app(backend).await;
    let ada = account(&app, "ada").await;
    let older = game_hosted_by(&app, &ada).await;
    join_with(&app, &older, &ada, json!({})).await;
    let newer = game_hosted_by(&app, &ada).await;
    join_with(&app, &newer, &ada, json!({})).await;
    let last = app.events(&newer, None, 0).await.pop().unwrap();
    let left_behind = "UPDATE games SET last_entry_at = '2000-01-01T00:00:00Z', \
        last_entry_seq = version - 1 \
        WHERE id = $1 AND last_entry_seq = version AND last_entry_at = $2";
    let at = last["at"].as_str().unwrap();
    assert_eq!(execute(&app, left_behind, &newer, at).await, 1, "{last}");
    let listed = listed_one_by_one(&app, &ada, "").await;
    let ids: Vec<&str> = listed.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, [&newer, &older]);
}

on_both_backends!(
    a_game_row_an_earlier_release_moved_is_timed_by_its_last_entry,
    finished_and_unfinished_games_are_listed_by_their_last_entry,
    each_account_hears_of_its_games_start_turns_and_end_once,
    a_stream_is_woken_by_an_append_and_games_page_newest_first,
    a_seat_bound_to_an_account_is_read_and_moved_by_its_token,
    an_account_token_reads_other_games_as_a_spectator_only,
    a_game_of_two_accounts_plays_to_the_end_and_verifies,
    an_account_is_created_read_and_its_name_folded,
    every_refusal_of_a_new_account_has_its_code,
    a_retried_creation_with_its_key_answers_the_same_account,
    a_rotated_token_is_refused_at_once_on_another_instance,
    a_rotation_ends_the_streams_of_the_old_token,
);
