//! Load for the fault tests: several games played at once through HTTP, as clients would play
//! them (reload and retry when a move is refused or gets no answer), recording every answer and
//! every move the server acknowledged.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{Seat, TestApp, pick_move};

/// A started game and the tokens of its seats.
#[derive(Debug, Clone)]
pub struct Game {
    pub id: String,
    pub seats: Vec<Seat>,
}

/// Creates and starts `count` two-seat games of `holes` holes.
pub async fn start_games(app: &TestApp, count: usize, holes: u8) -> Vec<Game> {
    let mut games = Vec::new();
    for _ in 0..count {
        let (id, _) = app.create_game(json!({"seats": 2, "holes": holes})).await;
        let seats = vec![app.join(&id, "Ada").await, app.join(&id, "Bo").await];
        games.push(Game { id, seats });
    }
    games
}

/// A move the server answered with a 2xx: sent with `If-Match: "before"`, its entries are those
/// after `before` up to `version`.
#[derive(Debug, Clone)]
pub struct AckedMove {
    pub game: String,
    pub seat: u8,
    pub before: i64,
    pub version: i64,
    pub mv: Value,
}

/// One request and what came of it.
#[derive(Debug, Clone)]
pub struct Answer {
    pub sent: Instant,
    pub took: Duration,
    /// `None`: no answer (refused connection, reset, or no answer within the client's timeout).
    pub status: Option<u16>,
    pub content_type: Option<String>,
    /// The `code` of a problem+json answer.
    pub code: Option<String>,
}

/// What the players saw.
#[derive(Debug, Default)]
pub struct Record {
    pub acked: Vec<AckedMove>,
    pub answers: Vec<Answer>,
}

/// The record the players of a test share.
pub type SharedRecord = Arc<Mutex<Record>>;

/// How long a player waits before it tries again after a failed request.
const PAUSE: Duration = Duration::from_millis(50);

/// How a player stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Finished,
    Stopped,
}

/// Sends one request, records what came of it, and returns the status and JSON body if any.
async fn send(
    app: &TestApp,
    record: &SharedRecord,
    method: Method,
    path: &str,
    token: &str,
    body: Option<(&Value, i64)>,
) -> Option<(u16, Value)> {
    let mut request = app.client.request(method, app.url(path)).bearer_auth(token);
    if let Some((body, version)) = body {
        request = request
            .json(body)
            .header("If-Match", format!("\"{version}\""));
    }
    let sent = Instant::now();
    let response = request.send().await;
    let (status, content_type, json) = match response {
        Ok(response) => {
            let status = response.status().as_u16();
            let content_type = response
                .headers()
                .get("content-type")
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned);
            (
                Some(status),
                content_type,
                response.json::<Value>().await.ok(),
            )
        }
        Err(_) => (None, None, None),
    };
    let code = json
        .as_ref()
        .and_then(|body| body["code"].as_str())
        .map(str::to_owned);
    record.lock().unwrap().answers.push(Answer {
        sent,
        took: sent.elapsed(),
        status,
        content_type,
        code,
    });
    Some((status?, json?))
}

/// Plays `game` on `app` until it is finished or `stop` is cancelled: each seat in turn loads its
/// view and, when it may move, sends a move with `If-Match`; a refused move (409, 412) is
/// reloaded and decided again, a failed request (no answer, 5xx) tried again after a pause.
pub async fn play(
    app: &TestApp,
    game: &Game,
    record: &SharedRecord,
    stop: &CancellationToken,
) -> Outcome {
    let mut turn = 0;
    loop {
        for seat in &game.seats {
            if stop.is_cancelled() {
                return Outcome::Stopped;
            }
            let path = format!("/v1/games/{}/view", game.id);
            let view = match send(app, record, Method::GET, &path, &seat.token, None).await {
                Some((200, view)) => view,
                _ => {
                    pause(stop).await;
                    continue;
                }
            };
            if view["status"] == "finished" {
                return Outcome::Finished;
            }
            let Some(mv) = pick_move(&view, turn) else {
                continue;
            };
            let before = view["version"].as_i64().expect("a view has a version");
            let path = format!("/v1/games/{}/moves", game.id);
            let answer = send(
                app,
                record,
                Method::POST,
                &path,
                &seat.token,
                Some((&mv, before)),
            )
            .await;
            match answer {
                Some((200, after)) => {
                    turn += 1;
                    record.lock().unwrap().acked.push(AckedMove {
                        game: game.id.clone(),
                        seat: seat.seat,
                        before,
                        version: after["version"].as_i64().expect("a view has a version"),
                        mv,
                    });
                }
                Some((409 | 412, _)) => {}
                Some((status, body)) if status < 500 => {
                    panic!(
                        "seat {} move {mv} on {}: {status} {body}",
                        seat.seat, game.id
                    )
                }
                _ => pause(stop).await,
            }
        }
    }
}

/// Waits [`PAUSE`], or less if `stop` comes first.
async fn pause(stop: &CancellationToken) {
    tokio::select! {
        _ = stop.cancelled() => {}
        _ = tokio::time::sleep(PAUSE) => {}
    }
}

/// Plays every game of `games` on `app` at once, each on a task of its own, until all are
/// finished or `stop` is cancelled.
pub fn play_all(
    app: &TestApp,
    games: &[Game],
    record: &SharedRecord,
    stop: &CancellationToken,
) -> tokio::task::JoinSet<(String, Outcome)> {
    let mut players = tokio::task::JoinSet::new();
    for game in games {
        let (app, game) = (handle(app), game.clone());
        let (record, stop) = (Arc::clone(record), stop.clone());
        players.spawn(async move {
            let outcome = play(&app, &game, &record, &stop).await;
            (game.id, outcome)
        });
    }
    players
}

/// Another handle on the server `app` talks to, for a task of its own.
fn handle(app: &TestApp) -> TestApp {
    TestApp {
        address: app.address.clone(),
        client: app.client.clone(),
        database: app.database.shared(),
    }
}

/// Waits until `record` holds at least `count` acknowledged moves, for at most `within`.
pub async fn wait_for_acks(record: &SharedRecord, count: usize, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let acked = record.lock().unwrap().acked.len();
        if acked >= count {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "only {acked} moves acknowledged within {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Whether `entry` is the log entry that `mv` by `seat` records.
pub fn records(entry: &Value, seat: u8, mv: &Value) -> bool {
    let data = &entry["data"];
    let kind = match mv["type"].as_str() {
        Some("reveal") => "cards_revealed",
        Some("draw") => "card_drawn",
        Some("swap") => "card_swapped",
        Some("discard") => "card_discarded",
        Some("flip") => "card_flipped",
        Some("pass") => "flip_declined",
        _ => return false,
    };
    let same = |field: &str| mv.get(field).is_none_or(|value| &data[field] == value);
    entry["type"] == kind
        && data["seat"] == seat
        && same("positions")
        && same("source")
        && same("position")
}

/// How many times each acknowledged move is recorded in its game's `log` (the complete log of
/// `game`, in order from seq 1), among the entries after its `before` up to its `version`.
pub fn times_logged(log: &[Value], acked: &AckedMove) -> usize {
    log.iter()
        .filter(|entry| {
            let seq = entry["seq"].as_i64().unwrap_or_default();
            seq > acked.before && seq <= acked.version
        })
        .filter(|entry| records(entry, acked.seat, &acked.mv))
        .count()
}

/// The lines of an NDJSON file written so far (none if it does not exist yet).
pub fn ndjson(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        // The line being written when the writer was killed may be cut short.
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}
