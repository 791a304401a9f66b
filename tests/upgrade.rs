//! Upgrades keep every game: a database written by an earlier release (the fixtures under
//! `tests/fixtures/upgrade/`, see its README) is served by this one as that release served it.

mod common;

use std::time::Duration;

use common::{Backend, TestApp, TestDatabase, open_store, spawn_app_on, spawn_app_with};
use golf_server::commands::check_db::check_database;
use golf_server::service::Clock;
use serde_json::{Value, json};
use sqlx::Connection;
use sqlx::postgres::PgConnection;

/// The games the earlier release wrote, with the tokens and views it gave for them.
fn fixture(backend: Backend) -> Value {
    let text = match backend {
        Backend::Postgres => include_str!("fixtures/upgrade/postgres.json"),
        Backend::Sqlite => include_str!("fixtures/upgrade/sqlite.json"),
    };
    serde_json::from_str(text).expect("the fixture parses")
}

/// A fresh database holding what the earlier release wrote.
async fn restored(backend: Backend) -> TestDatabase {
    let database = TestDatabase::new(backend).await;
    match backend {
        Backend::Postgres => {
            let mut conn = PgConnection::connect(&database.url).await.expect("connect");
            sqlx::raw_sql(include_str!("fixtures/upgrade/postgres.sql"))
                .execute(&mut conn)
                .await
                .expect("the dump loads");
            conn.close().await.expect("close");
        }
        Backend::Sqlite => {
            let path = database.url.trim_start_matches("sqlite://");
            std::fs::copy("tests/fixtures/upgrade/sqlite.db", path).expect("copy the database");
        }
    }
    database
}

async fn get_json(app: &TestApp, path: &str, token: Option<&str>) -> (u16, Value) {
    let mut request = app.client.get(app.url(path));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.expect("the server answers");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// A view as the earlier release gave it: this one adds `turn_deadline`, null for every game of
/// that release, which had no turn timeouts, `grid_shape`, the original 2 × 3 for every game of
/// that release, which had only six-card grids, `rated`, false for every game of that release,
/// which had no ratings, and each player's `account`, null for the same reason.
fn as_before((status, mut view): (u16, Value)) -> (u16, Value) {
    if let Some(fields) = view.as_object_mut() {
        assert_eq!(fields.remove("turn_deadline"), Some(Value::Null), "{view}");
        let shape = fields.remove("grid_shape");
        assert_eq!(shape, Some(json!({"rows": 2, "columns": 3})), "{view}");
        assert_eq!(fields.remove("rated"), Some(json!(false)), "{view}");
        for player in fields["players"].as_array_mut().unwrap() {
            let account = player.as_object_mut().unwrap().remove("account");
            assert_eq!(account, Some(Value::Null));
        }
    }
    (status, view)
}

fn token(seat: &Value) -> &str {
    seat["token"].as_str().expect("a seat token")
}

async fn an_earlier_release_database_keeps_serving_its_games(backend: Backend) {
    // Every view and log page of every game is what the earlier release answered; the running
    // game goes on, the waiting one still seats players, and every log still checks out.
    let games = fixture(backend);
    let app = spawn_app_on(restored(backend).await).await;
    for name in ["bots_finished", "people_finished", "playing", "waiting"] {
        let game = &games[name];
        let id = game["id"].as_str().unwrap();
        let public = as_before(get_json(&app, &format!("/v1/games/{id}"), None).await);
        assert_eq!(public, (200, game["public_view"].clone()), "{name}");
        for (seat, view) in game["seats"]
            .as_array()
            .unwrap()
            .iter()
            .zip(game["seat_views"].as_array().unwrap())
        {
            let own =
                as_before(get_json(&app, &format!("/v1/games/{id}/view"), Some(token(seat))).await);
            assert_eq!(own, (200, view.clone()), "{name}, seat {}", seat["seat"]);
        }
        let (status, page) =
            get_json(&app, &format!("/v1/games/{id}/events?limit=1000"), None).await;
        assert_eq!((status, &page["events"]), (200, &game["events"]), "{name}");
    }
    let cancelled = games["cancelled"]["id"].as_str().unwrap();
    assert_eq!(
        get_json(&app, &format!("/v1/games/{cancelled}"), None)
            .await
            .0,
        404
    );

    let finished = games["people_finished"]["id"].as_str().unwrap();
    let (status, replayed) = get_json(&app, &format!("/v1/games/{finished}/replay/5"), None).await;
    assert_eq!((status, &replayed["version"]), (200, &json!(5)));

    let playing = &games["playing"];
    let id = playing["id"].as_str().unwrap();
    let version = playing["public_view"]["version"].as_u64().unwrap();
    let (seat, view) = playing["seats"]
        .as_array()
        .unwrap()
        .iter()
        .zip(playing["seat_views"].as_array().unwrap())
        .find(|(_, view)| !view["legal_moves"].as_array().unwrap().is_empty())
        .expect("a seat to play");
    let played = app
        .client
        .post(app.url(&format!("/v1/games/{id}/moves")))
        .bearer_auth(token(seat))
        .json(&view["legal_moves"][0])
        .send()
        .await
        .expect("the server answers");
    assert_eq!(played.status(), 200);
    let after: Value = played.json().await.unwrap();
    assert!(after["version"].as_u64().unwrap() > version, "{after}");

    let waiting = games["waiting"]["id"].as_str().unwrap();
    let (_, lobby) = get_json(&app, "/v1/games", None).await;
    assert!(
        lobby["games"]
            .as_array()
            .unwrap()
            .iter()
            .any(|game| game["id"] == waiting)
    );
    let joined = app
        .client
        .post(app.url(&format!("/v1/games/{waiting}/players")))
        .json(&json!({"name": "Hal"}))
        .send()
        .await
        .expect("the server answers");
    assert_eq!(joined.status(), 201);

    // Their audits were never stored: each is checked when first asked for.
    for name in ["bots_finished", "people_finished"] {
        let id = games[name]["id"].as_str().unwrap();
        let (status, audit) = get_json(&app, &format!("/v1/games/{id}/audit"), None).await;
        assert_eq!((status, &audit["verified"]), (200, &json!(true)), "{name}");
    }

    let report = check_database(open_store(&app.database.url).await.as_ref())
        .await
        .expect("the check runs");
    assert_eq!(report.games, 4, "{report:?}");
    assert!(report.problems.is_empty(), "{report:?}");
}

async fn after_the_upgrade_old_games_have_no_timeout_and_new_ones_do(backend: Backend) {
    // The migration leaves every earlier game without a deadline: years later the running one
    // is still nobody's to take, while a game created after the upgrade is taken on time and
    // the old waiting game expires like any other.
    let games = fixture(backend);
    let clock = Clock::system();
    let app = spawn_app_with(restored(backend).await, clock.clone(), |config| {
        config.sweep_interval = Duration::from_millis(25);
        config.waiting_expiry = Duration::from_secs(30 * 24 * 60 * 60);
    })
    .await;
    let (id, _) = app
        .create_game(json!({"seats": 2, "holes": 1, "rules": {"turn_timeout_s": 10}}))
        .await;
    app.join(&id, "Ada").await;
    app.join(&id, "Bob").await;
    clock.advance(Duration::from_secs(10 * 365 * 24 * 60 * 60));

    let started = std::time::Instant::now();
    loop {
        let (status, view) = get_json(&app, &format!("/v1/games/{id}"), None).await;
        assert_eq!(status, 200);
        if view["status"] == "finished" {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(15), "{view}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let (_, page) = get_json(&app, &format!("/v1/games/{id}/events?limit=1000"), None).await;
    let taken = page["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|entry| entry["type"] == "bot_took_seat")
        .count();
    assert_eq!(taken, 2);

    let playing = &games["playing"];
    let old = playing["id"].as_str().unwrap();
    let public = as_before(get_json(&app, &format!("/v1/games/{old}"), None).await);
    assert_eq!(public, (200, playing["public_view"].clone()));
    let waiting = games["waiting"]["id"].as_str().unwrap();
    let started = std::time::Instant::now();
    while get_json(&app, &format!("/v1/games/{waiting}"), None)
        .await
        .0
        != 404
    {
        assert!(started.elapsed() < Duration::from_secs(15), "still waiting");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let report = check_database(open_store(&app.database.url).await.as_ref())
        .await
        .expect("the check runs");
    assert!(report.problems.is_empty(), "{report:?}");
}

on_both_backends!(
    an_earlier_release_database_keeps_serving_its_games,
    after_the_upgrade_old_games_have_no_timeout_and_new_ones_do,
);
