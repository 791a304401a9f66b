//! The lobby, cancelling a waiting game and replaying a game's views, through real HTTP on
//! both backends.

mod common;

use common::contract::{ok_move, problem, reveal_all, started, turn_order, version};
use common::{Backend, open_store, spawn_app, stacked_deck};
use golf_server::engine::{self, Viewer};
use golf_server::store::{codec, load_log};
use reqwest::Method;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// Lobby and cancel
// ---------------------------------------------------------------------------------------------

async fn the_lobby_lists_public_waiting_games_newest_first(backend: Backend) {
    // The lobby lists public waiting games with free seats newest first, without private, started,
    // cancelled or stacked games (whose host knows every card); limit=1 pages through each game
    // once.
    let app = spawn_app(backend).await;
    let (oldest, _) = app.create_game(json!({"seats": 2})).await;
    let (_private, _) = app.create_game(json!({"seats": 2, "private": true})).await;
    let (_stacked, _) = app
        .create_game(json!({"seats": 2, "decks": [stacked_deck(1)]}))
        .await;
    let (full, _, _) = started(&app, json!({"seats": 2, "holes": 1})).await;
    let (cancelled, created) = app.create_game(json!({"seats": 3})).await;
    let host = created["host_token"].as_str().unwrap();
    let (half, _) = app.create_game(json!({"seats": 3, "holes": 2})).await;
    app.join(&half, "Ada").await;
    let response = app
        .send(
            Method::DELETE,
            &format!("/v1/games/{cancelled}"),
            None,
            Some(host),
        )
        .await;
    assert_eq!(response.status(), 204);
    let (newest, _) = app.create_game(json!({"seats": 4})).await;
    let expected = vec![newest.clone(), half.clone(), oldest.clone()];

    for path in ["/v1/games?status=waiting", "/v1/games"] {
        let response = app.get(path).await;
        assert_eq!(response.status(), 200);
        let page: Value = response.json().await.unwrap();
        let games = page["games"].as_array().unwrap();
        let ids: Vec<&str> = games.iter().map(|g| g["id"].as_str().unwrap()).collect();
        assert_eq!(ids, expected, "{path}");
        assert_eq!(page["next_cursor"], Value::Null);
        for game in games {
            assert_eq!(game["status"], "waiting");
            assert!(game.get("you").is_none() && game.get("legal_moves").is_none());
        }
        assert_eq!(games[1]["players"][0]["name"], "Ada");
    }
    assert!(!expected.contains(&full));

    // One game a page, following next_cursor until it is null.
    let mut seen = Vec::new();
    let mut path = "/v1/games?status=waiting&limit=1".to_owned();
    for _ in 0..10 {
        let page: Value = app.get(&path).await.json().await.unwrap();
        let games = page["games"].as_array().unwrap();
        assert!(games.len() <= 1);
        seen.extend(games.iter().map(|g| g["id"].as_str().unwrap().to_owned()));
        match page["next_cursor"].as_str() {
            Some(cursor) => path = format!("/v1/games?status=waiting&limit=1&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(seen, expected, "every game seen once, newest first");
    // Two a page.
    let page: Value = app.get("/v1/games?limit=2").await.json().await.unwrap();
    assert_eq!(page["games"].as_array().unwrap().len(), 2);
    let cursor = page["next_cursor"].as_str().unwrap();
    let page: Value = app
        .get(&format!("/v1/games?limit=2&cursor={cursor}"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(page["games"][0]["id"], oldest);
    assert_eq!(page["games"].as_array().unwrap().len(), 1);
    assert_eq!(page["next_cursor"], Value::Null);

    // A game that fills leaves the lobby.
    app.join(&half, "Grace").await;
    app.join(&half, "Alan").await;
    let page: Value = app.get("/v1/games").await.json().await.unwrap();
    let ids: Vec<&str> = page["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![newest.as_str(), oldest.as_str()]);
}

async fn the_host_cancels_a_waiting_game_and_it_is_gone(backend: Backend) {
    // DELETE by the host is a 204; afterwards the game is 404 everywhere; a started game is 409
    // game_not_waiting.
    let app = spawn_app(backend).await;
    let (id, created) = app.create_game(json!({"seats": 3})).await;
    let host = created["host_token"].as_str().unwrap().to_owned();
    let ada = app.join(&id, "Ada").await;
    let response = app
        .send(
            Method::DELETE,
            &format!("/v1/games/{id}"),
            None,
            Some(&host),
        )
        .await;
    assert_eq!(response.status(), 204);
    assert!(response.headers().contains_key("x-request-id"));
    assert!(response.bytes().await.unwrap().is_empty());
    let reveal = json!({"type": "reveal", "positions": [0, 1]});
    let join = json!({"name": "Grace"});
    for (method, path, body, token) in [
        (Method::GET, format!("/v1/games/{id}"), None, None),
        (
            Method::GET,
            format!("/v1/games/{id}/view"),
            None,
            Some(ada.token.as_str()),
        ),
        (
            Method::POST,
            format!("/v1/games/{id}/players"),
            Some(&join),
            None,
        ),
        (
            Method::POST,
            format!("/v1/games/{id}/moves"),
            Some(&reveal),
            Some(ada.token.as_str()),
        ),
        (Method::GET, format!("/v1/games/{id}/events"), None, None),
        (
            Method::GET,
            format!("/v1/games/{id}/events"),
            None,
            Some(ada.token.as_str()),
        ),
        (Method::GET, format!("/v1/games/{id}/replay/1"), None, None),
        (
            Method::DELETE,
            format!("/v1/games/{id}"),
            None,
            Some(host.as_str()),
        ),
    ] {
        let response = app.send(method.clone(), &path, body, token).await;
        problem(response, 404, "not_found").await;
    }
    let page: Value = app.get("/v1/games").await.json().await.unwrap();
    assert_eq!(page["games"], json!([]));

    // A started game cannot be cancelled, and stays.
    let (started_id, host, seats) = started(&app, json!({"seats": 2})).await;
    let response = app
        .send(
            Method::DELETE,
            &format!("/v1/games/{started_id}"),
            None,
            Some(&host),
        )
        .await;
    problem(response, 409, "game_not_waiting").await;
    let view = app.view(&started_id, Some(&seats[0].token)).await;
    assert_eq!(view["status"], "playing");
}

// ---------------------------------------------------------------------------------------------
// Replays
// ---------------------------------------------------------------------------------------------

async fn replays_show_the_view_as_it_was(backend: Backend) {
    // A replay with a seat token is that seat's view after entry seq (you and legal_moves as
    // then), without a token the spectator's; the latest seq equals the current views.
    let app = spawn_app(backend).await;
    let (id, _, seats) = started(&app, json!({"seats": 2, "holes": 1})).await;
    // game_created 1, player_joined 2 and 3, hole_dealt 4.
    assert_eq!(version(&app, &id).await, 4);
    let dealt_views: Vec<Value> = {
        let mut views = Vec::new();
        for seat in &seats {
            views.push(app.view(&id, Some(&seat.token)).await);
        }
        views
    };
    reveal_all(&app, &id, &seats).await;
    let (current, _) = turn_order(&app, &id, &seats).await;
    ok_move(
        &app,
        &id,
        current,
        json!({"type": "draw", "source": "stock"}),
    )
    .await;

    let replay = |seq: u64, token: Option<String>| {
        let app = &app;
        let id = id.clone();
        async move {
            let response = app
                .send(
                    Method::GET,
                    &format!("/v1/games/{id}/replay/{seq}"),
                    None,
                    token.as_deref(),
                )
                .await;
            assert_eq!(response.status(), 200, "replay {seq}");
            response.json::<Value>().await.unwrap()
        }
    };

    // Right after the deal every seat could reveal any of the 15 pairs.
    for (seat, dealt) in seats.iter().zip(&dealt_views) {
        let view = replay(4, Some(seat.token.clone())).await;
        assert_eq!(view["version"], 4);
        assert_eq!(view["you"], seat.seat);
        assert_eq!(view["stage"], "reveal");
        let legal = view["legal_moves"].as_array().unwrap();
        assert_eq!(legal.len(), 15, "{view}");
        assert!(legal.iter().all(|m| m["type"] == "reveal"));
        assert_eq!(
            &view, dealt,
            "the replay equals the view seat {} had",
            seat.seat
        );
    }
    // Before seat 1 joined (seq 2) it is still seat 1's view: you, and nothing it may do yet.
    let early = replay(2, Some(seats[1].token.clone())).await;
    assert_eq!(early["you"], seats[1].seat);
    assert_eq!(early["legal_moves"], json!([]));
    assert_eq!(early["players"].as_array().unwrap().len(), 1);
    // After seat 0's reveal (seq 5), seat 0 waits while seat 1 may still reveal.
    let first = replay(5, Some(seats[0].token.clone())).await;
    assert_eq!(first["version"], 5);
    assert_eq!(first["legal_moves"], json!([]));
    assert_eq!(first["players"][0]["revealed_count"], 2);
    let second = replay(5, Some(seats[1].token.clone())).await;
    assert_eq!(second["legal_moves"].as_array().unwrap().len(), 15);
    assert_eq!(second["players"][0]["grid"], first["players"][0]["grid"]);
    // Before the deal: waiting, one player.
    let early = replay(2, Some(seats[0].token.clone())).await;
    assert_eq!(early["status"], "waiting");
    assert_eq!(early["players"].as_array().unwrap().len(), 1);
    assert_eq!(early["legal_moves"], json!([]));
    assert_eq!(early["stage"], Value::Null);

    // Without a token: the spectator's view, no `you`, no `legal_moves`, no face-down cards.
    let spectator = replay(4, None).await;
    assert_eq!(spectator["version"], 4);
    assert!(spectator.get("you").is_none(), "{spectator}");
    assert!(spectator.get("legal_moves").is_none(), "{spectator}");
    for player in spectator["players"].as_array().unwrap() {
        assert_eq!(player["grid"], json!([null, null, null, null, null, null]));
    }

    // The latest seq equals the current views, for each seat and for spectators.
    let latest = version(&app, &id).await;
    for seat in &seats {
        assert_eq!(
            replay(latest, Some(seat.token.clone())).await,
            app.view(&id, Some(&seat.token)).await
        );
    }
    assert_eq!(replay(latest, None).await, app.view(&id, None).await);
    // The drawer sees the drawn card in the replay; the other seat does not.
    let drawn_by_current = replay(latest, Some(current.token.clone())).await;
    assert!(drawn_by_current["drawn"]["card"].is_string());
    let other = seats.iter().find(|s| s.seat != current.seat).unwrap();
    assert_eq!(
        replay(latest, Some(other.token.clone())).await["drawn"]["card"],
        Value::Null
    );
}

async fn replays_start_from_the_nearest_deal_and_equal_a_full_replay(backend: Backend) {
    // A game of bots is kept with a snapshot at each deal; the replay of every entry, served from
    // the nearest snapshot before it, is the view a replay of the whole log from entry 1 gives.
    let app = spawn_app(backend).await;
    let (id, created) = app.create_game(json!({"seats": 2, "holes": 3})).await;
    let host = created["host_token"].as_str().unwrap();
    for name in ["Ann", "Bea"] {
        let response = app
            .send(
                Method::POST,
                &format!("/v1/games/{id}/players"),
                Some(&json!({"name": name, "bot": "greedy"})),
                Some(host),
            )
            .await;
        assert_eq!(response.status(), 201);
    }
    let store = open_store(&app.database.url).await;
    let game_id = id.parse().unwrap();
    let record = store.load_game(game_id).await.unwrap().unwrap();
    assert_eq!(record.status, engine::Status::Finished);
    let entries = load_log(store.as_ref(), game_id, record.version)
        .await
        .unwrap();
    let secrets = codec::secrets_of(&record).unwrap();
    let deals: Vec<i64> = entries
        .iter()
        .filter(|entry| entry.kind == "hole_dealt")
        .map(|entry| entry.seq)
        .collect();
    assert_eq!(deals.len(), 3);
    for deal in &deals {
        let snapshot = store.load_snapshot(game_id, *deal).await.unwrap();
        assert_eq!(
            snapshot.map(|snapshot| snapshot.seq),
            Some(*deal),
            "a snapshot at each deal"
        );
    }
    for seq in 1..=record.version {
        let whole =
            golf_server::audit::replay::rebuild_prefix(&entries[..seq as usize], &secrets).unwrap();
        let expected = serde_json::to_value(engine::view(&whole, Viewer::Spectator)).unwrap();
        let replayed: Value = app
            .get(&format!("/v1/games/{id}/replay/{seq}"))
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(replayed, expected, "seq {seq}");
    }
}

on_both_backends!(
    the_lobby_lists_public_waiting_games_newest_first,
    the_host_cancels_a_waiting_game_and_it_is_gone,
    replays_show_the_view_as_it_was,
    replays_start_from_the_nearest_deal_and_equal_a_full_replay,
);
