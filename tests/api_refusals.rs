//! Requests the game refuses, through real HTTP on both backends: moves against its state (409),
//! a held lock (409), stale versions (412), oversized bodies (413) and values that break a
//! rule (422); none of them changes the game.

mod common;

use common::contract::{
    assert_unchanged, header, ok_move, problem, raw, reveal_all, snapshot, started, turn_order,
};
use common::{Backend, play_to_the_end, spawn_app, stacked_deck};
use reqwest::Method;
use serde_json::json;

// ---------------------------------------------------------------------------------------------
// 409, 412, 413
// ---------------------------------------------------------------------------------------------

async fn moves_against_the_state_of_the_game_are_409(backend: Backend) {
    // not_your_turn, wrong_stage, game_full, game_not_started, game_finished, game_not_waiting and
    // already_revealed, each refused without changing the game.
    let app = spawn_app(backend).await;

    // game_not_started: a seat of a game that still waits for players.
    let (waiting, _) = app.create_game(json!({"seats": 2, "holes": 1})).await;
    let ada = app.join(&waiting, "Ada").await;
    let before = snapshot(&app, &waiting).await;
    let reveal = json!({"type": "reveal", "positions": [0, 1]});
    problem(
        app.play(&waiting, &ada.token, &reveal).await,
        409,
        "game_not_started",
    )
    .await;
    assert_unchanged(&app, &waiting, before, "a move before the start").await;

    // game_full: joining a started game.
    let grace = app.join(&waiting, "Grace").await;
    let seats = vec![ada, grace];
    let id = waiting;
    let response = app
        .send(
            Method::POST,
            &format!("/v1/games/{id}/players"),
            Some(&json!({"name": "Late"})),
            None,
        )
        .await;
    problem(response, 409, "game_full").await;

    // wrong_stage: a draw during the initial reveal.
    let before = snapshot(&app, &id).await;
    for mv in [
        json!({"type": "draw", "source": "stock"}),
        json!({"type": "swap", "position": 0}),
        json!({"type": "pass"}),
    ] {
        problem(
            app.play(&id, &seats[0].token, &mv).await,
            409,
            "wrong_stage",
        )
        .await;
    }
    assert_unchanged(&app, &id, before, "a move in the wrong stage").await;

    // already_revealed: a second reveal by the same seat.
    ok_move(&app, &id, &seats[0], reveal.clone()).await;
    let before = snapshot(&app, &id).await;
    let response = app
        .play(
            &id,
            &seats[0].token,
            &json!({"type": "reveal", "positions": [2, 3]}),
        )
        .await;
    problem(response, 409, "already_revealed").await;
    assert_unchanged(&app, &id, before, "a second reveal").await;
    ok_move(&app, &id, &seats[1], reveal.clone()).await;

    // not_your_turn: the other seat draws; wrong_stage: the current seat discards before drawing.
    let (current, other) = turn_order(&app, &id, &seats).await;
    let before = snapshot(&app, &id).await;
    let draw = json!({"type": "draw", "source": "stock"});
    let body = problem(
        app.play(&id, &other.token, &draw).await,
        409,
        "not_your_turn",
    )
    .await;
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains(&current.seat.to_string()),
        "{body}"
    );
    for mv in [
        json!({"type": "discard"}),
        json!({"type": "swap", "position": 0}),
        json!({"type": "flip", "position": 4}),
        reveal.clone(),
    ] {
        problem(app.play(&id, &current.token, &mv).await, 409, "wrong_stage").await;
    }
    // After a draw, a second draw is the wrong stage too.
    assert_unchanged(&app, &id, before, "a refused turn").await;
    ok_move(&app, &id, current, draw.clone()).await;
    let before = snapshot(&app, &id).await;
    problem(
        app.play(&id, &current.token, &draw).await,
        409,
        "wrong_stage",
    )
    .await;
    assert_unchanged(&app, &id, before, "a second draw").await;

    // game_not_waiting: cancelling a started game.
    let (started_id, host, _) = started(&app, json!({"seats": 2, "holes": 1})).await;
    let response = app
        .send(
            Method::DELETE,
            &format!("/v1/games/{started_id}"),
            None,
            Some(&host),
        )
        .await;
    problem(response, 409, "game_not_waiting").await;
    assert_eq!(app.view(&started_id, None).await["status"], "playing");

    // game_finished: any move once the last hole is scored.
    let (done, host, seats) = started(&app, json!({"seats": 2, "holes": 1})).await;
    play_to_the_end(&app, &done, &seats).await;
    let before = snapshot(&app, &done).await;
    for seat in &seats {
        for mv in [draw.clone(), reveal.clone(), json!({"type": "pass"})] {
            problem(
                app.play(&done, &seat.token, &mv).await,
                409,
                "game_finished",
            )
            .await;
        }
    }
    assert_unchanged(&app, &done, before, "a move after the end").await;
    let response = app
        .send(
            Method::DELETE,
            &format!("/v1/games/{done}"),
            None,
            Some(&host),
        )
        .await;
    problem(response, 409, "game_not_waiting").await;
}

async fn a_move_behind_a_held_lock_is_409_database_busy_and_changes_nothing(backend: Backend) {
    // Another transaction holds the game past the store's lock wait (PostgreSQL's lock_timeout,
    // SQLite's busy_timeout): the move is refused with a 409 that says to try again, not a 5xx,
    // and it is applied once the game is free.
    let app = spawn_app(backend).await;
    let (id, _) = app.create_game(json!({"seats": 2, "holes": 1})).await;
    let ada = app.join(&id, "Ada").await;
    app.join(&id, "Grace").await;
    let before = snapshot(&app, &id).await;
    let reveal = json!({"type": "reveal", "positions": [0, 1]});

    let holder = app
        .database
        .hold(id.parse().expect("a game id is a uuid"))
        .await;
    problem(
        app.play(&id, &ada.token, &reveal).await,
        409,
        "database_busy",
    )
    .await;
    holder.release().await;
    assert_unchanged(&app, &id, before, "a move behind a held lock").await;

    let response = app.play(&id, &ada.token, &reveal).await;
    assert_eq!(
        response.status(),
        200,
        "the same move once the game is free"
    );
}

async fn a_stale_if_match_is_412_and_changes_nothing(backend: Backend) {
    // If-Match with an old ETag is 412 stale_version and the version stays; the current one plays.
    let app = spawn_app(backend).await;
    let (id, _, seats) = started(&app, json!({"seats": 2, "holes": 1})).await;
    let old = app
        .send(
            Method::GET,
            &format!("/v1/games/{id}/view"),
            None,
            Some(&seats[0].token),
        )
        .await;
    let old_tag = header(old.headers(), "etag").to_owned();
    ok_move(
        &app,
        &id,
        &seats[1],
        json!({"type": "reveal", "positions": [0, 1]}),
    )
    .await;
    let before = snapshot(&app, &id).await;
    let moves = format!("/v1/games/{id}/moves");
    let auth = format!("Bearer {}", seats[0].token);
    let reveal = r#"{"type": "reveal", "positions": [0, 1]}"#;
    for tag in [old_tag.as_str(), "\"0\"", "\"999\"", "W/\"1\"", "1"] {
        let response = raw(
            &app,
            Method::POST,
            &moves,
            Some(reveal),
            &[("authorization", &auth), ("if-match", tag)],
        )
        .await;
        let body = problem(response, 412, "stale_version").await;
        assert!(body["detail"].is_string());
    }
    assert_unchanged(&app, &id, before, "a stale move").await;
    assert_eq!(before.0, 5);

    // The current ETag (as a view gives it) lets the move through.
    let current = app
        .send(
            Method::GET,
            &format!("/v1/games/{id}/view"),
            None,
            Some(&seats[0].token),
        )
        .await;
    let tag = header(current.headers(), "etag").to_owned();
    assert_eq!(tag, format!("\"{}\"", before.0));
    // If-Match compares strongly: the weak form of the current tag does not match.
    let weak = format!("W/{tag}");
    let response = raw(
        &app,
        Method::POST,
        &moves,
        Some(reveal),
        &[("authorization", &auth), ("if-match", &weak)],
    )
    .await;
    problem(response, 412, "stale_version").await;
    let response = raw(
        &app,
        Method::POST,
        &moves,
        Some(reveal),
        &[("authorization", &auth), ("if-match", &tag)],
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(header(response.headers(), "etag"), "\"6\"");
}

async fn bodies_over_64_kib_are_413_payload_too_large(backend: Backend) {
    // A body over 64 KiB is 413 payload_too_large on every endpoint that takes one; 64 KiB is not.
    let app = spawn_app(backend).await;
    let limit = 64 * 1024;
    let padded = |json: &str, size: usize| format!("{json}{}", " ".repeat(size - json.len()));

    let create = r#"{"seats": 2, "holes": 1}"#;
    let response = raw(
        &app,
        Method::POST,
        "/v1/games",
        Some(&padded(create, limit + 1)),
        &[],
    )
    .await;
    problem(response, 413, "payload_too_large").await;
    let response = raw(
        &app,
        Method::POST,
        "/v1/games",
        Some(&format!(
            r#"{{"seats": 2, "pad": "{}"}}"#,
            "x".repeat(300_000)
        )),
        &[],
    )
    .await;
    problem(response, 413, "payload_too_large").await;
    let response = raw(
        &app,
        Method::POST,
        "/v1/games",
        Some(&padded(create, limit)),
        &[],
    )
    .await;
    assert_eq!(response.status(), 201, "64 KiB exactly is accepted");

    let (id, _, seats) = started(&app, json!({"seats": 2, "holes": 1})).await;
    let before = snapshot(&app, &id).await;
    let auth = format!("Bearer {}", seats[0].token);
    let reveal = r#"{"type": "reveal", "positions": [0, 1]}"#;
    let response = raw(
        &app,
        Method::POST,
        &format!("/v1/games/{id}/moves"),
        Some(&padded(reveal, limit + 1)),
        &[("authorization", &auth)],
    )
    .await;
    problem(response, 413, "payload_too_large").await;
    assert_unchanged(&app, &id, before, "an oversized move").await;

    let (waiting, _) = app.create_game(json!({"seats": 2})).await;
    let response = raw(
        &app,
        Method::POST,
        &format!("/v1/games/{waiting}/players"),
        Some(&padded(r#"{"name": "Ada"}"#, limit + 1)),
        &[],
    )
    .await;
    problem(response, 413, "payload_too_large").await;
    assert_eq!(
        app.view(&waiting, None).await["players"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
}

// ---------------------------------------------------------------------------------------------
// 422
// ---------------------------------------------------------------------------------------------

async fn move_values_that_break_a_rule_are_422_and_change_nothing(backend: Backend) {
    // position_out_of_range, duplicate_positions, invalid_reveal and must_swap_discard_draw are
    // 422s that change neither the version nor the log.
    let app = spawn_app(backend).await;
    let (id, _, seats) = started(&app, json!({"seats": 2, "holes": 1})).await;

    let before = snapshot(&app, &id).await;
    for (positions, code) in [
        (json!([0, 6]), "position_out_of_range"),
        (json!([-1, 2]), "position_out_of_range"),
        (json!([1, 1]), "duplicate_positions"),
        (json!([0, 1, 2]), "invalid_reveal"),
        (json!([3]), "invalid_reveal"),
        (json!([]), "invalid_reveal"),
    ] {
        let mv = json!({"type": "reveal", "positions": positions});
        problem(app.play(&id, &seats[0].token, &mv).await, 422, code).await;
    }
    assert_unchanged(&app, &id, before, "a refused reveal").await;
    reveal_all(&app, &id, &seats).await;

    let (current, _) = turn_order(&app, &id, &seats).await;
    let public = app.view(&id, None).await;
    let top = public["discard_top"].as_str().unwrap().to_owned();
    ok_move(
        &app,
        &id,
        current,
        json!({"type": "draw", "source": "discard"}),
    )
    .await;
    let before = snapshot(&app, &id).await;
    for position in [6, -1, 100] {
        let mv = json!({"type": "swap", "position": position});
        let body = problem(
            app.play(&id, &current.token, &mv).await,
            422,
            "position_out_of_range",
        )
        .await;
        assert!(
            body["detail"]
                .as_str()
                .unwrap()
                .contains(&position.to_string()),
            "{body}"
        );
    }
    let body = problem(
        app.play(&id, &current.token, &json!({"type": "discard"}))
            .await,
        422,
        "must_swap_discard_draw",
    )
    .await;
    assert!(
        body["detail"].as_str().unwrap().contains(&top),
        "the detail names the public card {top}: {body}"
    );
    assert_unchanged(&app, &id, before, "a refused placement").await;
    let view = ok_move(&app, &id, current, json!({"type": "swap", "position": 5})).await;
    assert_eq!(view["players"][current.seat as usize]["grid"][5], top);
}

async fn flip_rules_are_422(backend: Backend) {
    // Under "optional", flipping a face-up card is position_already_revealed (and out of range
    // positions are refused); under "always", passing is flip_required.
    let app = spawn_app(backend).await;
    for (rule, refused, code) in [
        (
            "optional",
            json!({"type": "flip", "position": 0}),
            "position_already_revealed",
        ),
        (
            "optional",
            json!({"type": "flip", "position": 6}),
            "position_out_of_range",
        ),
        ("always", json!({"type": "pass"}), "flip_required"),
        (
            "always",
            json!({"type": "flip", "position": 1}),
            "position_already_revealed",
        ),
    ] {
        let (id, _, seats) = started(
            &app,
            json!({"seats": 2, "holes": 1, "rules": {"flip_after_discard": rule}}),
        )
        .await;
        reveal_all(&app, &id, &seats).await;
        let (current, other) = turn_order(&app, &id, &seats).await;
        ok_move(
            &app,
            &id,
            current,
            json!({"type": "draw", "source": "stock"}),
        )
        .await;
        let view = ok_move(&app, &id, current, json!({"type": "discard"})).await;
        assert_eq!(view["stage"], "flip", "{rule}");
        let before = snapshot(&app, &id).await;
        problem(app.play(&id, &current.token, &refused).await, 422, code).await;
        // The other seat is still not to play.
        problem(
            app.play(&id, &other.token, &json!({"type": "pass"})).await,
            409,
            "not_your_turn",
        )
        .await;
        assert_unchanged(&app, &id, before, code).await;
        let view = ok_move(&app, &id, current, json!({"type": "flip", "position": 4})).await;
        assert!(view["players"][current.seat as usize]["grid"][4].is_string());
    }
}

async fn creation_and_seat_values_that_break_a_rule_are_422(backend: Backend) {
    // invalid_name, invalid_client_seed, invalid_deck, invalid_game_options, out_of_range and
    // idempotency_key_reused on creation; good values next to them are accepted.
    let app = spawn_app(backend).await;
    let (id, _) = app.create_game(json!({"seats": 4})).await;
    let players = format!("/v1/games/{id}/players");
    let long = "n".repeat(41);
    // White space around a name counts towards its 40 characters as sent, as the schema says.
    let padded = format!(" {} ", "é".repeat(39));
    for name in [
        "",
        "   ",
        "\t\n",
        long.as_str(),
        padded.as_str(),
        "Ada\u{7}",
        "\u{0}",
        "A\u{9f}da",
        // Look-alikes: a right-to-left override, an isolate, a zero-width space and joiner, a
        // byte order mark.
        "Ada\u{202E}",
        "\u{2067}Bob\u{2069}",
        "A\u{200B}da",
        "Ad\u{200D}a",
        "\u{FEFF}Ada",
    ] {
        let response = app
            .send(Method::POST, &players, Some(&json!({"name": name})), None)
            .await;
        let body = problem(response, 422, "invalid_name").await;
        assert!(body["detail"].is_string());
    }
    let seed = "s".repeat(65);
    for client_seed in [seed.as_str(), "seed\u{1b}", "se\u{202D}ed", "seed\u{2060}"] {
        let response = app
            .send(
                Method::POST,
                &players,
                Some(&json!({"name": "Ada", "client_seed": client_seed})),
                None,
            )
            .await;
        problem(response, 422, "invalid_client_seed").await;
    }
    assert_eq!(app.view(&id, None).await["players"], json!([]));
    // The edges of the ranges are accepted: 40 scalar values as sent, trimmed when stored, and a
    // 64-character seed.
    let forty = format!(" {} ", "é".repeat(38));
    let response = app
        .send(
            Method::POST,
            &players,
            Some(&json!({"name": forty, "client_seed": "s".repeat(64)})),
            None,
        )
        .await;
    assert_eq!(response.status(), 201);
    assert_eq!(
        app.view(&id, None).await["players"][0]["name"],
        "é".repeat(38)
    );

    for (body, needle) in [
        (json!({"seats": 5}), "seats"),
        (json!({"seats": 1}), "seats"),
        (json!({"seats": 2, "holes": 0}), "holes"),
        (json!({"seats": 2, "holes": 19}), "holes"),
        (
            json!({"seats": 3, "rules": {"max_turns_per_hole": 2}}),
            "max_turns_per_hole",
        ),
        (
            json!({"seats": 2, "rules": {"max_turns_per_hole": -1}}),
            "max_turns_per_hole",
        ),
        (
            json!({"seats": 2, "rules": {"max_turns_per_hole": 5_000_000_000i64}}),
            "max_turns_per_hole",
        ),
        (
            json!({"seats": 2, "rules": {"max_turns_per_hole": 401}}),
            "max_turns_per_hole",
        ),
        (
            json!({"seats": 2, "holes": 1, "decks": [stacked_deck(1), stacked_deck(2)]}),
            "decks",
        ),
    ] {
        let response = app.send(Method::POST, "/v1/games", Some(&body), None).await;
        let problem = problem(response, 422, "invalid_game_options").await;
        assert!(
            problem["detail"].as_str().unwrap().contains(needle),
            "{body}: {problem}"
        );
    }
    let mut duplicate = stacked_deck(7);
    duplicate[10] = duplicate[11].clone();
    let mut unknown = stacked_deck(7);
    unknown[3] = "1S".to_owned();
    let short = stacked_deck(7)[..51].to_vec();
    for bad in [duplicate, unknown, short] {
        let body = json!({"seats": 2, "holes": 2, "decks": [stacked_deck(3), bad]});
        let response = app.send(Method::POST, "/v1/games", Some(&body), None).await;
        let problem = problem(response, 422, "invalid_deck").await;
        assert!(
            problem["detail"].as_str().unwrap().contains("decks[1]"),
            "the detail names the deck: {problem}"
        );
    }
    let body = json!({"seats": 2, "holes": 2, "decks": [stacked_deck(3)]});
    let response = app.send(Method::POST, "/v1/games", Some(&body), None).await;
    assert_eq!(response.status(), 201);

    // Paging limits out of their ranges.
    for path in [
        format!("/v1/games/{id}/events?limit=0"),
        format!("/v1/games/{id}/events?limit=1001"),
        format!("/v1/games/{id}/events?limit=-5"),
        format!("/v1/games/{id}/events?after=-1"),
        "/v1/games?limit=101".to_owned(),
        "/v1/games?limit=0".to_owned(),
        "/v1/games?status=waiting&limit=101".to_owned(),
    ] {
        problem(app.get(&path).await, 422, "out_of_range").await;
    }
    // Statuses of docs/API.md parse, but the lobby lists only waiting games.
    for status in ["playing", "finished"] {
        let path = format!("/v1/games?status={status}");
        let refused = problem(app.get(&path).await, 422, "out_of_range").await;
        assert!(
            refused["detail"].as_str().unwrap().contains("only waiting"),
            "{refused}"
        );
    }
    for path in [
        format!("/v1/games/{id}/events?limit=1"),
        format!("/v1/games/{id}/events?limit=1000"),
        "/v1/games?limit=100".to_owned(),
        "/v1/games?limit=1".to_owned(),
    ] {
        assert_eq!(app.get(&path).await.status(), 200, "{path}");
    }

    // idempotency_key_reused on creation.
    let first = app
        .client
        .post(app.url("/v1/games"))
        .header("idempotency-key", "create-1-5f0c2b9e-8d1a-4c7e")
        .json(&json!({"seats": 2}))
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), 201);
    let again = app
        .client
        .post(app.url("/v1/games"))
        .header("idempotency-key", "create-1-5f0c2b9e-8d1a-4c7e")
        .json(&json!({"seats": 3}))
        .send()
        .await
        .unwrap();
    problem(again, 422, "idempotency_key_reused").await;

    // Creation keys are shared by every client, so a short, guessable one is refused.
    let short = app
        .client
        .post(app.url("/v1/games"))
        .header("idempotency-key", "1")
        .json(&json!({"seats": 2}))
        .send()
        .await
        .unwrap();
    problem(short, 400, "malformed_request").await;
}

on_both_backends!(
    moves_against_the_state_of_the_game_are_409,
    a_move_behind_a_held_lock_is_409_database_busy_and_changes_nothing,
    a_stale_if_match_is_412_and_changes_nothing,
    bodies_over_64_kib_are_413_payload_too_large,
    move_values_that_break_a_rule_are_422_and_change_nothing,
    flip_rules_are_422,
    creation_and_seat_values_that_break_a_rule_are_422,
);
