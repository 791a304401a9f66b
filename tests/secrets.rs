//! No secret reaches the server's log: the binary, at debug level, in both log formats, serves a
//! whole game (views, moves, streams authenticated by `Authorization`, `?token=` and
//! `?%74oken=`, refusals), and its captured output holds no seat or host token, not even in
//! part, and no card code at all (so no card can be logged while it is hidden).

mod common;

use std::fs::File;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{Backend, Seat, TestApp, TestDatabase, play_to_the_end};
use reqwest::Method;
use serde_json::{Value, json};

/// A `golf-server serve` whose output goes to a file; killed when dropped.
struct Server {
    child: Child,
    log: tempfile::NamedTempFile,
}

impl Server {
    fn start(database_url: &str, format: &str) -> Server {
        let log = tempfile::NamedTempFile::new().unwrap();
        let output = File::options().append(true).open(log.path()).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_golf-server"))
            .env("GOLF_BIND", "127.0.0.1:0")
            .env("DATABASE_URL", database_url)
            .env("GOLF_LOG", format)
            .env("RUST_LOG", "debug")
            .stdout(Stdio::from(output.try_clone().unwrap()))
            .stderr(Stdio::from(output))
            .spawn()
            .expect("the binary starts");
        Server { child, log }
    }

    fn output(&self) -> String {
        std::fs::read_to_string(self.log.path()).unwrap()
    }

    /// The address it logs once it listens.
    async fn address(&self) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let output = self.output();
            if let Some(rest) = output.split("listening on http://").nth(1) {
                let end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ':'));
                return rest[..end.unwrap_or(rest.len())].to_owned();
            }
            assert!(
                Instant::now() < deadline,
                "the server did not start:\n{output}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Stops it (SIGTERM, so that it logs its way out) and returns all it printed.
    fn stop(mut self) -> String {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
        self.output()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The 52 card codes, as the API writes them (`AS`, `10H`, `QD`, ...).
fn card_codes() -> Vec<String> {
    let ranks = [
        "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K",
    ];
    let suits = ["C", "D", "H", "S"];
    ranks
        .iter()
        .flat_map(|rank| suits.iter().map(move |suit| format!("{rank}{suit}")))
        .collect()
}

/// The fields in which sqlx logs a statement's SQL: the source's text (`AS` is a keyword
/// there), never a bound value.
const SQL_FIELDS: [&str; 4] = [
    "db.statement=\"",
    "summary=\"",
    "\"db.statement\":\"",
    "\"summary\":\"",
];

/// `line` without the SQL text of [`SQL_FIELDS`].
fn without_sql(line: &str) -> String {
    let mut rest = line.to_owned();
    for field in SQL_FIELDS {
        while let Some(start) = rest.find(field) {
            let value = start + field.len();
            let mut escaped = false;
            let end = rest[value..]
                .char_indices()
                .find(|&(_, c)| {
                    let closes = c == '"' && !escaped;
                    escaped = c == '\\' && !escaped;
                    closes
                })
                .map_or(rest.len(), |(at, _)| value + at + 1);
            rest.replace_range(start..end, "");
        }
    }
    rest
}

/// The words of `line` that are card codes: a card code delimited by anything but a letter or
/// a digit, as it would stand in JSON, a debug dump or a sentence (SQL text aside).
fn cards_in(line: &str, cards: &[String]) -> Vec<String> {
    without_sql(line)
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| cards.iter().any(|card| card == word))
        .map(str::to_owned)
        .collect()
}

async fn open_stream(
    app: &TestApp,
    id: &str,
    query: &str,
    bearer: Option<&str>,
) -> reqwest::Response {
    let mut request = app
        .client
        .get(app.url(&format!("/v1/games/{id}/stream{query}")));
    if let Some(token) = bearer {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), 200, "stream{query}");
    response
}

/// Plays a whole game on a server that logs at debug level in `format`; returns the log and
/// every secret the game had.
async fn a_whole_game_logged(backend: Backend, format: &str) -> (String, Vec<String>) {
    let database = TestDatabase::new(backend).await;
    let server = Server::start(&database.url, format);
    let app = TestApp {
        address: format!("http://{}", server.address().await),
        client: reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap(),
        database,
    };
    let (id, created) = app.create_game(json!({"seats": 3, "holes": 1})).await;
    let host = created["host_token"].as_str().unwrap().to_owned();
    let seats: Vec<Seat> = vec![
        app.join(&id, "Ada").await,
        app.join(&id, "Bob").await,
        app.join(&id, "Cy").await,
    ];
    let mut secrets: Vec<String> = seats.iter().map(|seat| seat.token.clone()).collect();
    secrets.push(host.clone());

    let mut streams = vec![
        open_stream(&app, &id, &format!("?token={}", seats[0].token), None).await,
        open_stream(
            &app,
            &id,
            &format!("?%74oken={}&after=0", seats[1].token),
            None,
        )
        .await,
        open_stream(&app, &id, "", Some(&seats[2].token)).await,
        open_stream(&app, &id, "?after=1", Some(&host)).await,
    ];
    // Refusals carry tokens too: of another game, misspelt, in the wrong place.
    let (other, _) = app.create_game(json!({"seats": 2})).await;
    let refused = app
        .send(
            Method::GET,
            &format!("/v1/games/{other}/view"),
            None,
            Some(&seats[0].token),
        )
        .await;
    assert_eq!(refused.status(), 401);
    let misspelt = app
        .get(&format!("/v1/games/{id}/stream?TOKEN={}", seats[1].token))
        .await;
    assert_eq!(misspelt.status(), 400);
    let query = app
        .get(&format!("/v1/games/{id}/view?token={}", seats[2].token))
        .await;
    assert!(query.status().is_client_error());

    let moves = play_to_the_end(&app, &id, &seats).await;
    assert!(moves > 6, "a whole hole was played ({moves} moves)");
    let view = app.view(&id, Some(&seats[0].token)).await;
    assert_eq!(view["status"], "finished");
    for stream in &mut streams {
        let first = tokio::time::timeout(Duration::from_secs(10), stream.chunk()).await;
        assert!(matches!(first, Ok(Ok(Some(_)))), "the stream was served");
    }
    let events: Value = app
        .send(
            Method::GET,
            &format!("/v1/games/{id}/events"),
            None,
            Some(&host),
        )
        .await
        .json()
        .await
        .unwrap();
    assert!(events["events"].as_array().is_some_and(|e| e.len() > moves));
    drop(streams);
    (server.stop(), secrets)
}

fn assert_no_secret(log: &str, secrets: &[String], format: &str) {
    let lines: Vec<&str> = log.lines().collect();
    assert!(
        lines
            .iter()
            .filter(|line| line.contains("request finished"))
            .count()
            > 20,
        "the requests are logged ({format}):\n{log}"
    );
    assert!(
        log.contains("DEBUG") || log.contains("\"DEBUG\""),
        "debug lines are there"
    );
    if format == "json" {
        for line in lines.iter().filter(|line| !line.trim().is_empty()) {
            assert!(
                serde_json::from_str::<Value>(line).is_ok(),
                "not a JSON line: {line}"
            );
        }
    }
    for secret in secrets {
        // Any 12 characters of a token would narrow a guess: no piece of one may show.
        for piece in secret.as_bytes().windows(12) {
            let piece = std::str::from_utf8(piece).unwrap();
            assert!(
                !log.contains(piece),
                "a piece of a token ({piece}) is in the {format} log:\n{}",
                lines.iter().find(|line| line.contains(piece)).unwrap()
            );
        }
    }
    let cards = card_codes();
    for line in &lines {
        let found = cards_in(line, &cards);
        assert!(
            found.is_empty(),
            "card codes {found:?} in the {format} log: {line}"
        );
    }
}

#[tokio::test]
async fn the_text_log_of_a_whole_game_holds_no_token_and_no_card() {
    let (log, secrets) = a_whole_game_logged(Backend::Sqlite, "text").await;
    assert_no_secret(&log, &secrets, "text");
}

#[tokio::test]
async fn the_json_log_of_a_whole_game_holds_no_token_and_no_card() {
    let (log, secrets) = a_whole_game_logged(Backend::Postgres, "json").await;
    assert_no_secret(&log, &secrets, "json");
}

#[test]
fn the_card_scan_finds_cards_as_any_log_would_write_them() {
    // The scan is only as good as what it catches.
    let cards = card_codes();
    assert_eq!(cards.len(), 52);
    for line in [
        r#"{"card":"10H"}"#,
        "drew Card(QS) from the stock",
        "grid=[AS, 2C, ?, ?]",
        "deck: KD 7H",
        r#"sqlx::query: db.statement="SELECT 1" card=JH"#,
    ] {
        assert!(!cards_in(line, &cards).is_empty(), "{line}");
    }
    for line in [
        "2026-12-03T15:21:23.842743Z DEBUG request finished http.status_code=200",
        r#"sqlx::query: summary="SELECT id AS x" db.statement="SELECT \"a\" AS b" rows=1"#,
        r#"{"summary":"SELECT id AS x","db.statement":"SELECT \"a\" AS b","rows":1}"#,
        "hash=cdf9741722c9ab498196979d28efabbadd7c665642e6a5f645def2ef08e275f5",
        "GET /v1/games/43906c80-5f2c-4a8e-9d0b-1c2d3e4f5a6b/view HTTP/1.1",
    ] {
        assert!(cards_in(line, &cards).is_empty(), "{line}");
    }
}
