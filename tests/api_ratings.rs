//! Ratings through real HTTP on both backends: rated games and their refusals, the update of
//! every seat's rating by the end of a rated game (compared with the `skillratings` crate called
//! here directly), the bots as fixed anchors, histories, the leaderboard and its pages, and the
//! update applied exactly once after a failure, after a SIGKILL between a game's end and its
//! update, and by two instances at once (PostgreSQL).

mod common;

use std::time::Duration;

use common::openapi::{assert_valid, spec};
use common::process::ServerProcess;
use common::{
    Backend, Seat, TestApp, TestDatabase, open_store, play_to_the_end, spawn_app, spawn_app_on,
};
use golf_server::ratings::Rating;
use reqwest::Method;
use serde_json::{Value, json};
use skillratings::MultiTeamOutcome;
use skillratings::weng_lin::{WengLinConfig, WengLinRating, weng_lin_multi_team};
use sqlx::Connection;

/// Creates account `username` and answers its token.
async fn account(app: &TestApp, username: &str) -> String {
    let response = app
        .send(
            Method::POST,
            "/v1/accounts",
            Some(&json!({"username": username})),
            None,
        )
        .await;
    assert_eq!(response.status(), 201);
    let body: Value = response.json().await.unwrap();
    body["token"].as_str().unwrap().to_owned()
}

async fn send_json(
    app: &TestApp,
    method: Method,
    path: &str,
    body: Option<&Value>,
    token: Option<&str>,
) -> (u16, Value) {
    let response = app.send(method, path, body, token).await;
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// A rated game of one hole created by `host`'s account, every seat taken in order by an account
/// token or, for `"bot-random"` and `"bot-greedy"`, by the host seating that bot.
async fn rated_game(app: &TestApp, host: &str, seats: &[&str]) -> String {
    let body = json!({"seats": seats.len(), "holes": 1, "rated": true});
    let (status, created) =
        send_json(app, Method::POST, "/v1/games", Some(&body), Some(host)).await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    for seat in seats {
        let (body, token) = match seat.strip_prefix("bot-") {
            Some(bot) => (json!({"name": "Bot", "bot": bot}), host),
            None => (json!({}), *seat),
        };
        let path = format!("/v1/games/{id}/players");
        let (status, joined) = send_json(app, Method::POST, &path, Some(&body), Some(token)).await;
        assert_eq!(status, 201, "{joined}");
    }
    id
}

/// The account seats of game `id` (their tokens) play it to its end with the tests' simple
/// player, the bots theirs; answers the finished game's totals. (A seat left to the bot would
/// rank last: docs/API.md, "Rated games".)
async fn play_out(app: &TestApp, id: &str, tokens: &[&str]) -> Vec<i64> {
    let mut seats = Vec::new();
    for token in tokens {
        let you = app.view(id, Some(token)).await["you"].as_u64().unwrap();
        let token = (*token).to_owned();
        seats.push(Seat {
            seat: you as u8,
            token,
        });
    }
    play_to_the_end(app, id, &seats).await;
    let view = app.view(id, None).await;
    assert_eq!(view["status"], "finished");
    view["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|player| player["total"].as_i64().unwrap())
        .collect()
}

/// The rating of `username`'s profile.
async fn rating(app: &TestApp, username: &str) -> Value {
    let (status, profile) = send_json(
        app,
        Method::GET,
        &format!("/v1/accounts/{username}"),
        None,
        None,
    )
    .await;
    assert_eq!(status, 200, "{profile}");
    profile["rating"].clone()
}

/// What the crate says seats of 1500/500 ratings with these totals become (value, deviation).
fn expected_by_the_crate(totals: &[i64]) -> Vec<(f64, f64)> {
    let start = WengLinRating {
        rating: 25.0,
        uncertainty: 25.0 / 3.0,
    };
    let teams: Vec<[WengLinRating; 1]> = totals.iter().map(|_| [start]).collect();
    let ranked: Vec<(&[WengLinRating], MultiTeamOutcome)> = teams
        .iter()
        .zip(totals)
        .map(|(team, total)| {
            let better = totals.iter().filter(|other| *other < total).count();
            (team.as_slice(), MultiTeamOutcome::new(better + 1))
        })
        .collect();
    weng_lin_multi_team(&ranked, &WengLinConfig::new())
        .iter()
        .map(|team| (team[0].rating * 60.0, team[0].uncertainty * 60.0))
        .collect()
}

fn assert_close(actual: &Value, expected: f64, what: &str) {
    let actual = actual.as_f64().unwrap();
    assert!(
        (actual - expected).abs() < 1e-6,
        "{what}: {actual} != {expected}"
    );
}

async fn a_two_seat_rated_game_rates_as_the_crate_computes(backend: Backend) {
    // The winner goes up and the loser down by exactly what Weng-Lin gives; each history has it.
    let app = spawn_app(backend).await;
    let (ada, bob) = (account(&app, "ada").await, account(&app, "bob").await);
    let id = rated_game(&app, &ada, &[&ada, &bob]).await;
    let totals = play_out(&app, &id, &[&ada, &bob]).await;
    let expected = expected_by_the_crate(&totals);
    for (seat, name) in ["ada", "bob"].into_iter().enumerate() {
        // The ratings job applies the end just after the move that ended the game.
        let rating = rating_after_games(&app, name, 1).await;
        assert_close(&rating["value"], expected[seat].0, name);
        assert_close(&rating["deviation"], expected[seat].1, name);
        assert_eq!(
            (&rating["games"], &rating["provisional"]),
            (&json!(1), &json!(true))
        );
        let path = format!("/v1/accounts/{name}/ratings");
        let (status, history) = send_json(&app, Method::GET, &path, None, None).await;
        assert_eq!(status, 200);
        let history = history["history"].as_array().unwrap();
        assert_eq!(history.len(), 1, "{history:?}");
        assert_eq!(history[0]["game_id"], json!(id));
        assert_eq!(history[0]["before"]["value"], json!(1500.0));
        assert_eq!(history[0]["after"], rating);
    }
    let (ada_after, bob_after) = (expected[0].0, expected[1].0);
    match totals[0].cmp(&totals[1]) {
        std::cmp::Ordering::Less => assert!(ada_after > 1500.0 && bob_after < 1500.0),
        std::cmp::Ordering::Greater => assert!(ada_after < 1500.0 && bob_after > 1500.0),
        std::cmp::Ordering::Equal => assert_close(&json!(ada_after), 1500.0, "a tie"),
    }
    let (_, games) = send_json(&app, Method::GET, "/v1/account/games", None, Some(&ada)).await;
    assert_eq!(games["games"][0]["rated"], true);

    // Each account hears of its new rating, after the game's end, with what the history holds.
    for (token, name) in [(&ada, "ada"), (&bob, "bob")] {
        let (_, page) = send_json(&app, Method::GET, "/v1/account/events", None, Some(token)).await;
        let events = page["events"].as_array().unwrap();
        let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        let ended = types.iter().position(|t| *t == "game_ended").unwrap();
        let changed = types.iter().position(|t| *t == "rating_changed");
        assert!(changed.is_some_and(|at| at > ended), "{name}: {types:?}");
        let changed = &events[changed.unwrap()];
        assert_eq!(changed["game_id"], json!(id));
        assert_eq!(changed["before"]["value"], json!(1500.0));
        assert_eq!(changed["after"], rating_after_games(&app, name, 1).await);
        assert_valid(&spec(), "AccountEventsPage", &page);
    }
}

async fn four_seats_with_bots_rate_the_accounts_against_the_bots(backend: Backend) {
    // Two accounts and two built-in bots: the accounts are rated by rank among all four seats,
    // ties sharing a rank; the bots' ratings are anchors that no game moves.
    let app = spawn_app(backend).await;
    let (ada, bob) = (account(&app, "ada").await, account(&app, "bob").await);
    let id = rated_game(&app, &ada, &[&ada, "bot-random", &bob, "bot-greedy"]).await;
    let totals = play_out(&app, &id, &[&ada, &bob]).await;
    let expected = expected_by_the_crate(&totals);
    for (seat, name) in [(0, "ada"), (2, "bob")] {
        let rating = rating_after_games(&app, name, 1).await;
        assert_close(&rating["value"], expected[seat].0, name);
        assert_close(&rating["deviation"], expected[seat].1, name);
        assert_eq!(rating["games"], 1, "{name}");
    }
    for bot in ["bot-random", "bot-greedy"] {
        assert_eq!(
            rating(&app, bot).await,
            serde_json::to_value(Rating::initial()).unwrap()
        );
    }
}

async fn an_unrated_game_changes_no_rating(backend: Backend) {
    // Accounts finishing a game created without rated keep their 1500 and an empty history.
    let app = spawn_app(backend).await;
    let (ada, bob) = (account(&app, "ada").await, account(&app, "bob").await);
    let body = json!({"seats": 2, "holes": 1});
    let (_, created) = send_json(&app, Method::POST, "/v1/games", Some(&body), Some(&ada)).await;
    let id = created["id"].as_str().unwrap().to_owned();
    for token in [&ada, &bob] {
        let path = format!("/v1/games/{id}/players");
        let (status, _) = send_json(&app, Method::POST, &path, Some(&json!({})), Some(token)).await;
        assert_eq!(status, 201);
    }
    play_out(&app, &id, &[&ada, &bob]).await;
    let initial = serde_json::to_value(Rating::initial()).unwrap();
    assert_eq!(rating(&app, "ada").await, initial);
    let (_, history) = send_json(&app, Method::GET, "/v1/accounts/ada/ratings", None, None).await;
    assert_eq!(history, json!({"history": []}));
}

async fn a_rated_game_refuses_anonymous_seats_and_decks(backend: Backend) {
    // An anonymous join is 422 account_required; a rated game with decks is 422
    // invalid_game_options; the host may still seat a built-in bot.
    let app = spawn_app(backend).await;
    let ada = account(&app, "ada").await;
    let deck = common::stacked_deck(1);
    let stacked = json!({"seats": 2, "rated": true, "decks": [deck]});
    let (status, problem) = send_json(&app, Method::POST, "/v1/games", Some(&stacked), None).await;
    assert_eq!(
        (status, &problem["code"]),
        (422, &json!("invalid_game_options"))
    );
    let body = json!({"seats": 2, "rated": true});
    let (status, created) =
        send_json(&app, Method::POST, "/v1/games", Some(&body), Some(&ada)).await;
    assert_eq!(status, 201);
    let id = created["id"].as_str().unwrap();
    let path = format!("/v1/games/{id}/players");
    let (status, problem) = send_json(
        &app,
        Method::POST,
        &path,
        Some(&json!({"name": "Eve"})),
        None,
    )
    .await;
    assert_eq!(
        (status, &problem["code"]),
        (422, &json!("account_required"))
    );
    let bot = json!({"name": "Bot", "bot": "greedy"});
    let (status, _) = send_json(&app, Method::POST, &path, Some(&bot), Some(&ada)).await;
    assert_eq!(status, 201);
}

async fn the_leaderboard_pages_established_ratings_best_first(backend: Backend) {
    // Provisional ratings are left out; ranks run on across pages; ties go by username.
    let app = spawn_app(backend).await;
    let store = open_store(&app.database.url).await;
    let names = ["cleo", "ada", "bob", "dan", "eve"];
    for name in names {
        account(&app, name).await;
    }
    let seeded = [
        ("cleo", 1700.0),
        ("ada", 1600.0),
        ("bob", 1600.0),
        ("dan", 1400.0),
    ];
    for (name, value) in seeded {
        let established = Rating::new(value, 100.0, 20);
        assert!(store.ratings().set_rating(name, established).await.unwrap());
    }
    let mut seen = Vec::new();
    let mut path = "/v1/leaderboard?limit=3".to_owned();
    loop {
        let (status, page) = send_json(&app, Method::GET, &path, None, None).await;
        assert_eq!(status, 200, "{page}");
        for place in page["accounts"].as_array().unwrap() {
            assert_eq!(place["rating"]["provisional"], false);
            seen.push((place["rank"].as_i64().unwrap(), place["username"].clone()));
        }
        match page["next_cursor"].as_str() {
            Some(cursor) => path = format!("/v1/leaderboard?limit=3&cursor={cursor}"),
            None => break,
        }
    }
    let expected: Vec<(i64, Value)> = ["cleo", "ada", "bob", "dan"]
        .into_iter()
        .zip(1..)
        .map(|(name, rank)| (rank, json!(name)))
        .collect();
    assert_eq!(seen, expected, "eve and the bots are provisional");
    let (status, problem) =
        send_json(&app, Method::GET, "/v1/leaderboard?cursor=zz", None, None).await;
    assert_eq!(
        (status, &problem["code"]),
        (400, &json!("malformed_request"))
    );
    let (status, problem) =
        send_json(&app, Method::GET, "/v1/leaderboard?limit=101", None, None).await;
    assert_eq!((status, &problem["code"]), (422, &json!("out_of_range")));
    let (status, _) = send_json(&app, Method::GET, "/v1/accounts/nobody/ratings", None, None).await;
    assert_eq!(status, 404);
}

on_both_backends!(
    a_two_seat_rated_game_rates_as_the_crate_computes,
    four_seats_with_bots_rate_the_accounts_against_the_bots,
    an_unrated_game_changes_no_rating,
    a_rated_game_refuses_anonymous_seats_and_decks,
    the_leaderboard_pages_established_ratings_best_first,
);

/// Polls `username`'s rating until it counts `games` rated games.
async fn rating_after_games(app: &TestApp, username: &str, games: i64) -> Value {
    for _ in 0..200 {
        let rating = rating(app, username).await;
        if rating["games"] == games {
            return rating;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{username}'s rating never counted {games} games");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_that_failed_after_the_end_is_applied_once_by_the_sweep() {
    // While another session holds the ratings' lock, the end of a rated game commits but its
    // update fails (as after a crash between the two); once the lock is gone, the sweep applies
    // it, once.
    let app = spawn_app(Backend::Postgres).await;
    let (ada, bob) = (account(&app, "ada").await, account(&app, "bob").await);
    let id = rated_game(&app, &ada, &[&ada, &bob]).await;
    let mut holder = sqlx::PgConnection::connect(&app.database.url)
        .await
        .unwrap();
    sqlx::query("SELECT pg_advisory_lock(7061729)")
        .execute(&mut holder)
        .await
        .unwrap();
    let totals = play_out(&app, &id, &[&ada, &bob]).await;
    assert_eq!(
        rating(&app, "ada").await["games"],
        0,
        "not applied while locked"
    );
    sqlx::query("SELECT pg_advisory_unlock(7061729)")
        .execute(&mut holder)
        .await
        .unwrap();
    let after = rating_after_games(&app, "ada", 1).await;
    assert_close(&after["value"], expected_by_the_crate(&totals)[0].0, "ada");
    // More sweeps find nothing left to apply.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let (_, history) = send_json(&app, Method::GET, "/v1/accounts/ada/ratings", None, None).await;
    assert_eq!(history["history"].as_array().unwrap().len(), 1);
    assert_eq!(rating(&app, "ada").await["games"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_between_a_rated_end_and_its_update_applies_it_once_after_restart() {
    // The real binary ends a rated game while another session holds the ratings' lock, so its
    // update waits; SIGKILL then stops it between the end (committed) and the update. Started
    // again on the same database, it applies the update once.
    let database = TestDatabase::new(Backend::Postgres).await;
    let mut server = ServerProcess::start(&database.url, &[]);
    let app = server.app(&database);
    let (ada, bob) = (account(&app, "ada").await, account(&app, "bob").await);
    let id = rated_game(&app, &ada, &[&ada, &bob]).await;
    let mut holder = sqlx::PgConnection::connect(&database.url).await.unwrap();
    sqlx::query("SELECT pg_advisory_lock(7061729)")
        .execute(&mut holder)
        .await
        .unwrap();
    let totals = play_out(&app, &id, &[&ada, &bob]).await;
    assert_eq!(
        rating(&app, "ada").await["games"],
        0,
        "not applied while locked"
    );
    server.kill();
    sqlx::query("SELECT pg_advisory_unlock(7061729)")
        .execute(&mut holder)
        .await
        .unwrap();
    let restarted = ServerProcess::start(&database.url, &[]);
    let app = restarted.app(&database);
    let after = rating_after_games(&app, "ada", 1).await;
    assert_close(&after["value"], expected_by_the_crate(&totals)[0].0, "ada");
    // More sweeps (one a second) find nothing left to apply.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let (_, history) = send_json(&app, Method::GET, "/v1/accounts/ada/ratings", None, None).await;
    assert_eq!(history["history"].as_array().unwrap().len(), 1);
    assert_eq!(rating(&app, "ada").await["games"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_account_ending_two_rated_games_at_once_on_two_instances_gets_both() {
    // Ada's two games are played at once, one on each instance: both updates are applied,
    // the second starting from the first's result. Which one is first is the order their ends
    // committed in; the times the two instances stamped on them need not follow it.
    let first = spawn_app(Backend::Postgres).await;
    let second = spawn_app_on(first.database.shared()).await;
    let ada = account(&first, "ada").await;
    let (bob, cleo) = (account(&first, "bob").await, account(&first, "cleo").await);
    let one = rated_game(&first, &ada, &[&ada, &bob]).await;
    let two = rated_game(&second, &ada, &[&ada, &cleo]).await;
    let (with_bob, with_cleo) = ([ada.as_str(), &bob], [ada.as_str(), &cleo]);
    tokio::join!(
        play_out(&first, &one, &with_bob),
        play_out(&second, &two, &with_cleo),
    );
    let rating = rating_after_games(&first, "ada", 2).await;
    let (_, history) = send_json(&first, Method::GET, "/v1/accounts/ada/ratings", None, None).await;
    let history = history["history"].as_array().unwrap();
    assert_eq!(history.len(), 2);
    assert_eq!(history[1]["before"], history[0]["after"], "no update lost");
    assert_eq!(history[1]["after"], rating);
    let mut games: Vec<&Value> = history.iter().map(|change| &change["game_id"]).collect();
    games.sort_by_key(|id| id.as_str());
    let mut expected = [json!(one), json!(two)];
    expected.sort_by_key(|id| id.as_str().map(str::to_owned));
    assert_eq!(games, expected.iter().collect::<Vec<_>>());
}
