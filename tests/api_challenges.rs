//! Challenges and rematches through real HTTP on both backends: accepted by all (the game
//! created with every seat taken), declined by one, cancelled, expired, answers to closed ones,
//! refusals, the account events they give, and rematches (of a game with a bot, and of two
//! accounts).

mod common;

use std::time::Duration;

use common::openapi::{assert_valid, spec};
use common::{Backend, TestApp, TestDatabase, spawn_app, spawn_app_with};
use golf_server::service::Clock;
use reqwest::Method;
use serde_json::{Value, json};

/// `author` challenges `to` to a one-hole game; answers the challenge.
async fn challenge(app: &TestApp, author: &str, to: &[&str]) -> Value {
    let body = json!({"to": to, "holes": 1});
    let (status, challenge) = app
        .send_json(Method::POST, "/v1/challenges", Some(&body), Some(author))
        .await;
    assert_eq!(status, 201, "{challenge}");
    assert_valid(&spec(), "Challenge", &challenge);
    challenge
}

async fn answer(app: &TestApp, id: &str, token: &str, verb: &str) -> (u16, Value) {
    let path = format!("/v1/challenges/{id}/{verb}");
    app.send_json(Method::POST, &path, None, Some(token)).await
}

/// The types of `token`'s account events, with their data.
async fn events(app: &TestApp, token: &str) -> Vec<Value> {
    let (status, page) = app
        .send_json(Method::GET, "/v1/account/events", None, Some(token))
        .await;
    assert_eq!(status, 200);
    assert_valid(&spec(), "AccountEventsPage", &page);
    page["events"].as_array().unwrap().clone()
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|event| event["type"] == kind)
        .collect()
}

async fn accepted_by_all_creates_the_game_with_every_seat(backend: Backend) {
    // Ada challenges Bob and Cleo: each hears of it; the last acceptance creates the game, with
    // Ada at seat 0 and the others in the order of `to`, and each account hears it started.
    let app = spawn_app(backend).await;
    let ada = app.sign_up("ada").await;
    let (bob, cleo) = (app.sign_up("bob").await, app.sign_up("cleo").await);
    let created = challenge(&app, &ada, &["Bob", "cleo"]).await;
    let id = created["id"].as_str().unwrap();
    assert_eq!(created["status"], "open");
    assert_eq!(
        created["to"],
        json!([{"username": "bob", "answer": null}, {"username": "cleo", "answer": null}])
    );
    let received = events(&app, &bob).await;
    let received = of_type(&received, "challenge_received");
    assert_eq!(received.len(), 1);
    assert_eq!(
        (&received[0]["challenge_id"], &received[0]["game_id"]),
        (&json!(id), &Value::Null)
    );
    let (_, listed) = app
        .send_json(Method::GET, "/v1/account/challenges", None, Some(&cleo))
        .await;
    assert_eq!(listed["challenges"][0]["id"], json!(id));
    let (status, after_bob) = answer(&app, id, &bob, "accept").await;
    assert_eq!((status, &after_bob["status"]), (200, &json!("open")));
    let (status, again) = answer(&app, id, &bob, "accept").await;
    assert_eq!(
        (status, &again["status"]),
        (200, &json!("open")),
        "the same answer again"
    );
    let (status, done) = answer(&app, id, &cleo, "accept").await;
    assert_eq!((status, &done["status"]), (200, &json!("accepted")));
    let game_id = done["game_id"].as_str().unwrap();
    let view = app.view(game_id, None).await;
    assert_eq!(view["status"], "playing");
    let names: Vec<&Value> = view["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["name"])
        .collect();
    assert_eq!(names, [&json!("ada"), &json!("bob"), &json!("cleo")]);
    for (seat, token) in [&ada, &bob, &cleo].into_iter().enumerate() {
        let own = app.view(game_id, Some(token)).await;
        assert_eq!(own["you"], seat, "an account's token acts as its seat's");
        let started = events(&app, token).await;
        let started = of_type(&started, "game_started");
        assert_eq!(
            (started.len(), &started[0]["game_id"]),
            (1, &json!(game_id))
        );
    }
    let answered = events(&app, &ada).await;
    assert_eq!(of_type(&answered, "challenge_answered").len(), 2);
    let (_, listed) = app
        .send_json(Method::GET, "/v1/account/challenges", None, Some(&ada))
        .await;
    assert_eq!(listed["challenges"], json!([]), "no longer open");
}

async fn a_decline_closes_it_and_later_answers_are_refused(backend: Backend) {
    // Bob declines: the challenge is declined, Cleo's acceptance is 409 challenge_closed, and
    // Bob cannot change his answer.
    let app = spawn_app(backend).await;
    let ada = app.sign_up("ada").await;
    let (bob, cleo) = (app.sign_up("bob").await, app.sign_up("cleo").await);
    let created = challenge(&app, &ada, &["bob", "cleo"]).await;
    let id = created["id"].as_str().unwrap();
    let (status, declined) = answer(&app, id, &bob, "decline").await;
    assert_eq!((status, &declined["status"]), (200, &json!("declined")));
    assert_eq!(declined["to"][0]["answer"], "declined");
    let (status, problem) = answer(&app, id, &cleo, "accept").await;
    assert_eq!(
        (status, &problem["code"]),
        (409, &json!("challenge_closed"))
    );
    let (status, problem) = answer(&app, id, &bob, "accept").await;
    assert_eq!(
        (status, &problem["code"]),
        (409, &json!("challenge_closed"))
    );
    let (status, problem) = answer(&app, id, &ada, "accept").await;
    assert_eq!(
        (status, &problem["code"]),
        (401, &json!("unauthorized")),
        "the author does not answer"
    );
}

async fn its_author_cancels_it_and_strangers_never_see_it(backend: Backend) {
    // Only the author cancels (204); answers then get 409; an account outside it gets 404.
    let app = spawn_app(backend).await;
    let ada = app.sign_up("ada").await;
    let (bob, eve) = (app.sign_up("bob").await, app.sign_up("eve").await);
    let created = challenge(&app, &ada, &["bob"]).await;
    let path = format!("/v1/challenges/{}", created["id"].as_str().unwrap());
    let (status, _) = app.send_json(Method::GET, &path, None, Some(&eve)).await;
    assert_eq!(status, 404);
    let (status, _) = app.send_json(Method::GET, &path, None, None).await;
    assert_eq!(status, 401);
    let (status, _) = app.send_json(Method::DELETE, &path, None, Some(&bob)).await;
    assert_eq!(status, 401);
    let (status, _) = app.send_json(Method::DELETE, &path, None, Some(&ada)).await;
    assert_eq!(status, 204);
    let (status, read) = app.send_json(Method::GET, &path, None, Some(&bob)).await;
    assert_eq!((status, &read["status"]), (200, &json!("cancelled")));
    let (status, problem) = answer(&app, created["id"].as_str().unwrap(), &bob, "accept").await;
    assert_eq!(
        (status, &problem["code"]),
        (409, &json!("challenge_closed"))
    );
    let (status, problem) = app.send_json(Method::DELETE, &path, None, Some(&ada)).await;
    assert_eq!(
        (status, &problem["code"]),
        (409, &json!("challenge_closed"))
    );
}

async fn a_challenge_names_other_existing_accounts(backend: Backend) {
    // Empty, too long, self, twice, a bot: 422 invalid_challenge; unknown: 422 unknown_account.
    let app = spawn_app(backend).await;
    let ada = app.sign_up("ada").await;
    app.sign_up("bob").await;
    let cases = [
        (json!([]), "invalid_challenge"),
        (json!(["bob", "bob"]), "invalid_challenge"),
        (json!(["ADA"]), "invalid_challenge"),
        (json!(["bot-greedy"]), "invalid_challenge"),
        (json!(["bob", "x1", "x2", "x3"]), "invalid_challenge"),
        (json!(["nobody"]), "unknown_account"),
    ];
    for (to, code) in cases {
        let body = json!({"to": to});
        let (status, problem) = app
            .send_json(Method::POST, "/v1/challenges", Some(&body), Some(&ada))
            .await;
        assert_eq!((status, &problem["code"]), (422, &json!(code)), "{to}");
    }
    let body = json!({"to": ["bob"]});
    let (status, _) = app
        .send_json(Method::POST, "/v1/challenges", Some(&body), None)
        .await;
    assert_eq!(status, 401);
}

async fn a_challenge_expires(backend: Backend) {
    // Past GOLF_CHALLENGE_EXPIRY_S it reads expired and takes no answer.
    let clock = Clock::system();
    let app = spawn_app_with(TestDatabase::new(backend).await, clock.clone(), |config| {
        config.challenge_expiry = Duration::from_secs(60);
    })
    .await;
    let ada = app.sign_up("ada").await;
    let bob = app.sign_up("bob").await;
    let created = challenge(&app, &ada, &["bob"]).await;
    clock.advance(Duration::from_secs(61));
    let path = format!("/v1/challenges/{}", created["id"].as_str().unwrap());
    let (_, read) = app.send_json(Method::GET, &path, None, Some(&bob)).await;
    assert_eq!(read["status"], "expired");
    let (status, problem) = answer(&app, created["id"].as_str().unwrap(), &bob, "accept").await;
    assert_eq!(
        (status, &problem["code"]),
        (409, &json!("challenge_closed"))
    );
    let (_, listed) = app
        .send_json(Method::GET, "/v1/account/challenges", None, Some(&bob))
        .await;
    assert_eq!(listed["challenges"], json!([]));
}

async fn a_rematch_with_a_bot_starts_at_once(backend: Backend) {
    // Ada played the greedy bot: her rematch before the end is 409 not_finished; after it, the
    // new game starts at once with Ada at seat 0 and the greedy bot again.
    let app = spawn_app(backend).await;
    let ada = app.sign_up("ada").await;
    let body = json!({"seats": 2, "holes": 1});
    let (_, created) = app
        .send_json(Method::POST, "/v1/games", Some(&body), Some(&ada))
        .await;
    let id = created["id"].as_str().unwrap();
    let players = format!("/v1/games/{id}/players");
    app.send_json(Method::POST, &players, Some(&json!({})), Some(&ada))
        .await;
    let bot = json!({"name": "Greedy", "bot": "greedy"});
    app.send_json(Method::POST, &players, Some(&bot), Some(&ada))
        .await;
    let rematch = format!("/v1/games/{id}/rematch");
    let (status, problem) = app
        .send_json(Method::POST, &rematch, None, Some(&ada))
        .await;
    assert_eq!((status, &problem["code"]), (409, &json!("not_finished")));
    app.send_json(
        Method::POST,
        &format!("/v1/games/{id}/leave"),
        None,
        Some(&ada),
    )
    .await;
    let (status, offered) = app
        .send_json(Method::POST, &rematch, None, Some(&ada))
        .await;
    assert_eq!(
        (status, &offered["status"]),
        (201, &json!("accepted")),
        "{offered}"
    );
    assert_eq!(
        (&offered["to"], &offered["bots"]),
        (&json!([]), &json!(["greedy"]))
    );
    let game = offered["game_id"].as_str().unwrap();
    let view = app.view(game, Some(&ada)).await;
    assert_eq!(
        (&view["status"], &view["you"]),
        (&json!("playing"), &json!(0))
    );
    assert_eq!(view["players"][1]["bot"], "greedy");
}

async fn a_rematch_between_accounts_is_a_challenge(backend: Backend) {
    // Bob offers a rematch of his game with Ada: she is challenged with the same settings, and
    // her acceptance seats Bob at seat 0.
    let app = spawn_app(backend).await;
    let (ada, bob) = (app.sign_up("ada").await, app.sign_up("bob").await);
    let body = json!({"seats": 2, "holes": 1, "rated": true});
    let (_, created) = app
        .send_json(Method::POST, "/v1/games", Some(&body), Some(&ada))
        .await;
    let id = created["id"].as_str().unwrap();
    for token in [&ada, &bob] {
        let path = format!("/v1/games/{id}/players");
        app.send_json(Method::POST, &path, Some(&json!({})), Some(token))
            .await;
    }
    for token in [&ada, &bob] {
        app.send_json(
            Method::POST,
            &format!("/v1/games/{id}/leave"),
            None,
            Some(token),
        )
        .await;
    }
    let (status, offered) = app
        .send_json(
            Method::POST,
            &format!("/v1/games/{id}/rematch"),
            None,
            Some(&bob),
        )
        .await;
    assert_eq!(status, 201, "{offered}");
    assert_eq!(
        (&offered["from"], &offered["rated"], &offered["holes"]),
        (&json!("bob"), &json!(true), &json!(1))
    );
    let (_, done) = answer(&app, offered["id"].as_str().unwrap(), &ada, "accept").await;
    let view = app
        .view(done["game_id"].as_str().unwrap(), Some(&bob))
        .await;
    assert_eq!(view["you"], 0);
}

on_both_backends!(
    accepted_by_all_creates_the_game_with_every_seat,
    a_decline_closes_it_and_later_answers_are_refused,
    its_author_cancels_it_and_strangers_never_see_it,
    a_challenge_names_other_existing_accounts,
    a_challenge_expires,
    a_rematch_with_a_bot_starts_at_once,
    a_rematch_between_accounts_is_a_challenge,
);
