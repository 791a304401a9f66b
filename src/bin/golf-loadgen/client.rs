//! The HTTP side of golf-loadgen: one request per call, counted and timed, and retried on what a
//! restarting or overloaded server answers (a transport error, 503, 429) until the run stops, so
//! a server restart in the middle of a run is survived.

use std::fs::File;
use std::io::{LineWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::{RequestBuilder, StatusCode};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::stats::Stats;

/// A game a run plays: its id and one token per seat, as `--games-file` writes it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Game {
    pub game: String,
    pub tokens: Vec<String>,
}

/// A server's answer to a request, once it is not a transport error, 503 or 429.
#[derive(Debug)]
pub enum Answer {
    Ok(Value),
    NotModified,
    Refused(StatusCode),
}

/// What a request is, for the counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A move chosen in this hole, if the view said.
    Move(Option<u64>),
    View,
    /// Setting games up; not measured.
    Setup,
    /// The audits after the run, sent after it stopped.
    Audit,
}

/// The first wait before a retry; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(50);
const MAX_BACKOFF: Duration = Duration::from_secs(2);
/// How long a request keeps being retried while the server does not answer (or answers 503)
/// before the game is given up.
const GIVE_UP_AFTER: Duration = Duration::from_secs(120);

pub struct Client {
    http: reqwest::Client,
    base: String,
    timeout: Duration,
    idempotency_keys: bool,
    pub stats: Arc<Stats>,
    pub stop: CancellationToken,
    acked_log: Option<Mutex<LineWriter<File>>>,
    games_file: Option<Mutex<LineWriter<File>>>,
}

/// How a client is set up.
pub struct Options<'a> {
    pub url: &'a str,
    pub timeout: Duration,
    pub idempotency_keys: bool,
    pub acked_log: Option<&'a Path>,
    pub games_file: Option<&'a Path>,
}

impl Client {
    pub fn new(options: &Options) -> Result<Client, String> {
        let create = |path: Option<&Path>| {
            path.map(|path| {
                File::create(path)
                    .map(|file| Mutex::new(LineWriter::new(file)))
                    .map_err(|error| format!("cannot write {}: {error}", path.display()))
            })
            .transpose()
        };
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|error| format!("cannot build the HTTP client: {error}"))?;
        Ok(Client {
            http,
            base: options.url.trim_end_matches('/').to_owned(),
            timeout: options.timeout,
            idempotency_keys: options.idempotency_keys,
            stats: Arc::new(Stats::default()),
            stop: CancellationToken::new(),
            acked_log: create(options.acked_log)?,
            games_file: create(options.games_file)?,
        })
    }

    pub fn stopped(&self) -> bool {
        self.stop.is_cancelled()
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Creates the account `username` and returns its token. None when the server refused
    /// (counted) or the run stopped.
    pub async fn sign_up(&self, username: &str) -> Option<String> {
        let body = json!({"username": username});
        let created = self
            .send(Kind::Setup, || {
                self.http.post(self.url("/v1/accounts")).json(&body)
            })
            .await;
        let Some(Answer::Ok(created)) = created else {
            return None;
        };
        Some(created["token"].as_str()?.to_owned())
    }

    /// Creates a game and takes its seats, seat `i` as the account of `accounts[i]` when
    /// `accounts` is not empty; writes it to `--games-file`. None when the server refused
    /// (counted) or the run stopped.
    pub async fn set_up(&self, seats: u8, holes: u8, accounts: &[String]) -> Option<Game> {
        let key = self.idempotency_keys.then(|| Uuid::new_v4().to_string());
        let body = json!({"seats": seats, "holes": holes});
        let created = self
            .send(Kind::Setup, || {
                let request = self.http.post(self.url("/v1/games")).json(&body);
                with_key(request, key.as_deref())
            })
            .await;
        let Some(Answer::Ok(created)) = created else {
            return None;
        };
        let id = created["id"].as_str()?.to_owned();
        self.stats.game_started();
        let mut tokens = Vec::new();
        for seat in 0..seats {
            let path = format!("/v1/games/{id}/players");
            let body = json!({"name": format!("Load {seat}")});
            let account = accounts.get(usize::from(seat));
            let joined = self
                .send(Kind::Setup, || {
                    let request = self.http.post(self.url(&path)).json(&body);
                    match account {
                        Some(token) => request.bearer_auth(token),
                        None => request,
                    }
                })
                .await;
            let Some(Answer::Ok(joined)) = joined else {
                return None;
            };
            tokens.push(joined["token"].as_str()?.to_owned());
        }
        let game = Game { game: id, tokens };
        if let Some(file) = &self.games_file {
            write_line(file, &serde_json::to_value(&game).expect("a game is JSON"));
        }
        Some(game)
    }

    /// Seat `seat`'s view; with `if_none_match`, 304 when the game is still at that version.
    pub async fn view(
        &self,
        game: &Game,
        seat: usize,
        if_none_match: Option<i64>,
    ) -> Option<Answer> {
        let path = format!("/v1/games/{}/view", game.game);
        self.send(Kind::View, || {
            let request = self
                .http
                .get(self.url(&path))
                .bearer_auth(&game.tokens[seat]);
            match if_none_match {
                Some(version) => request.header("if-none-match", format!("\"{version}\"")),
                None => request,
            }
        })
        .await
    }

    /// Seat `seat` sends `body`, expecting the game at `version` (`If-Match`), chosen in `hole`
    /// (its latency is also counted by hole). An acknowledged move is written to `--acked-log`.
    pub async fn play(
        &self,
        game: &Game,
        seat: usize,
        body: &Value,
        version: Option<i64>,
        hole: Option<u64>,
    ) -> Option<Answer> {
        let path = format!("/v1/games/{}/moves", game.game);
        // The same key on every retry: a move the server applied before the connection broke
        // is answered as it was, not applied twice.
        let key = self.idempotency_keys.then(|| Uuid::new_v4().to_string());
        let answer = self
            .send(Kind::Move(hole), || {
                let mut request = self
                    .http
                    .post(self.url(&path))
                    .bearer_auth(&game.tokens[seat])
                    .json(body);
                if let Some(version) = version {
                    request = request.header("if-match", format!("\"{version}\""));
                }
                with_key(request, key.as_deref())
            })
            .await;
        if let (Some(Answer::Ok(view)), Some(log)) = (&answer, &self.acked_log) {
            let line = json!({
                "game": game.game,
                "seat": seat,
                "seq": view["version"],
                "move": body,
            });
            write_line(log, &line);
        }
        answer
    }

    /// Whether a finished game's audit says `verified: true`; sent after the run stopped.
    pub async fn verified(&self, id: &str) -> bool {
        let path = format!("/v1/games/{id}/audit");
        let answer = self
            .send(Kind::Audit, || self.http.get(self.url(&path)))
            .await;
        matches!(answer, Some(Answer::Ok(audit)) if audit["verified"] == true)
    }

    /// The request that opens seat `seat`'s stream of the log after entry `after`.
    pub fn stream(&self, game: &Game, seat: usize, after: i64) -> RequestBuilder {
        let path = format!("/v1/games/{}/stream?after={after}", game.game);
        self.http
            .get(self.url(&path))
            .bearer_auth(&game.tokens[seat])
    }

    /// The request that opens the stream of the events of the account of `token`, after event
    /// `after`.
    pub fn account_stream(&self, token: &str, after: i64) -> RequestBuilder {
        let path = format!("/v1/account/stream?after={after}");
        self.http.get(self.url(&path)).bearer_auth(token)
    }

    /// Sends the request `build` makes until the server answers it with something other than
    /// 503 or 429, waiting more and more between tries; None when the run stops first (audits
    /// excepted) or the server stays away for [`GIVE_UP_AFTER`].
    async fn send(&self, kind: Kind, build: impl Fn() -> RequestBuilder) -> Option<Answer> {
        let mut backoff = FIRST_BACKOFF;
        let first_try = Instant::now();
        loop {
            if kind != Kind::Audit && self.stopped() {
                return None;
            }
            let sent = Instant::now();
            match self.try_once(build().timeout(self.timeout)).await {
                Ok(answer) => {
                    let took = sent.elapsed();
                    match (&answer, kind) {
                        (Answer::Ok(_), Kind::Move(hole)) => self.stats.move_acked(hole, took),
                        (Answer::Ok(_) | Answer::NotModified, Kind::View) => {
                            self.stats.view_read(took)
                        }
                        _ => {}
                    }
                    return Some(answer);
                }
                Err(retry_after) => {
                    if first_try.elapsed() > GIVE_UP_AFTER {
                        return None;
                    }
                    let wait = retry_after.unwrap_or(backoff).min(MAX_BACKOFF);
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    if kind == Kind::Audit {
                        tokio::time::sleep(wait).await;
                    } else {
                        tokio::select! {
                            () = tokio::time::sleep(wait) => {}
                            () = self.stop.cancelled() => return None,
                        }
                    }
                }
            }
        }
    }

    /// One try: the answer, or Err with how long the server asked to wait (if it said) when the
    /// request is to be sent again. Every answer that is not a success is counted by status.
    async fn try_once(&self, request: RequestBuilder) -> Result<Answer, Option<Duration>> {
        let response = request.send().await.map_err(|_| {
            self.stats.error("connect");
            None
        })?;
        let status = response.status();
        if status == StatusCode::NOT_MODIFIED {
            return Ok(Answer::NotModified);
        }
        if status.is_success() {
            let body = response.bytes().await.ok();
            return match body.and_then(|body| serde_json::from_slice::<Read>(&body).ok()) {
                Some(read) => Ok(Answer::Ok(read.into_value())),
                None => {
                    self.stats.error("connect");
                    Err(None)
                }
            };
        }
        self.stats.error(status.as_str());
        if status == StatusCode::SERVICE_UNAVAILABLE || status == StatusCode::TOO_MANY_REQUESTS {
            let retry_after = response
                .headers()
                .get("retry-after")
                .and_then(|value| value.to_str().ok())
                .and_then(|value| value.parse().ok())
                .map(Duration::from_secs);
            return Err(retry_after);
        }
        Ok(Answer::Refused(status))
    }

    /// Flushes what the files hold (each line is written whole as it comes).
    pub fn flush(&self) {
        for file in [&self.acked_log, &self.games_file].into_iter().flatten() {
            if let Err(error) = file.lock().expect("file lock").flush() {
                eprintln!("golf-loadgen: cannot write: {error}");
            }
        }
    }
}

/// The fields of an answer that golf-loadgen reads (a view's, a created game's `id`, a seat's
/// `token`, an audit's `verified`), parsed alone: the parser skips the rest of the body without
/// building it. Parsing whole views into [`Value`]s and dropping them was about a third of the
/// load generator's CPU, on the machine it shares with the server it measures.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Read {
    id: Value,
    token: Value,
    verified: Value,
    version: Value,
    status: Value,
    stage: Value,
    hole: Value,
    current_seat: Value,
    you: Value,
    legal_moves: Value,
    players: Option<Vec<ReadPlayer>>,
}

/// The fields of a view's player that golf-loadgen reads.
#[derive(Deserialize, Default)]
#[serde(default)]
struct ReadPlayer {
    revealed_count: Value,
    grid: Value,
}

impl Read {
    /// The fields read, as an object of those fields (one absent from the answer is null).
    fn into_value(self) -> Value {
        let object = |fields: Vec<(&str, Value)>| {
            Value::Object(
                fields
                    .into_iter()
                    .map(|(name, value)| (name.to_owned(), value))
                    .collect(),
            )
        };
        let players = self.players.map_or(Value::Null, |players| {
            players
                .into_iter()
                .map(|player| {
                    object(vec![
                        ("revealed_count", player.revealed_count),
                        ("grid", player.grid),
                    ])
                })
                .collect()
        });
        object(vec![
            ("id", self.id),
            ("token", self.token),
            ("verified", self.verified),
            ("version", self.version),
            ("status", self.status),
            ("stage", self.stage),
            ("hole", self.hole),
            ("current_seat", self.current_seat),
            ("you", self.you),
            ("legal_moves", self.legal_moves),
            ("players", players),
        ])
    }
}

fn with_key(request: RequestBuilder, key: Option<&str>) -> RequestBuilder {
    match key {
        Some(key) => request.header("idempotency-key", key),
        None => request,
    }
}

fn write_line(file: &Mutex<LineWriter<File>>, line: &Value) {
    let mut file = file.lock().expect("file lock");
    if let Err(error) = writeln!(file, "{line}") {
        eprintln!("golf-loadgen: cannot write: {error}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::picker::next_action;

    /// A seat's view as the server writes it, in `stage` with `legal_moves`.
    fn view(stage: &str, current: Value, legal: Value) -> Value {
        let player = |seat: u8, grid: Value| {
            json!({"seat": seat, "name": "Load", "bot": null, "client_seed": "", "grid": grid,
                   "revealed_count": 2, "hole_scores": [3, -2], "total": 1})
        };
        json!({
            "id": "3d806f68-611b-4ff9-8326-58a43832b229", "version": 41, "status": "playing",
            "stacked": false, "commitment": "96921f95", "rules": {"final_turns": false},
            "grid_shape": {"rows": 2, "columns": 3}, "seats": 2, "holes": 18, "hole": 3,
            "dealer": 0, "current_seat": current, "stage": stage, "discard_top": "2D",
            "discard_count": 1, "stock_count": 30, "drawn": "KH", "last_hole": null,
            "turn_started_at": null, "turn_deadline": null, "winners": null, "you": 0,
            "legal_moves": legal,
            "players": [
                player(0, json!(["4S", "QH", null, null, "7C", null])),
                player(1, json!([null, "AD", null, "5S", null, null])),
            ],
        })
    }

    #[test]
    fn the_fields_read_lead_to_the_moves_the_whole_view_leads_to() {
        let swaps: Vec<Value> = (0..6)
            .map(|position| json!({"type": "swap", "position": position}))
            .chain([json!({"type": "discard"})])
            .collect();
        let views = [
            view("place", json!(0), Value::Array(swaps)),
            view("draw", json!(1), json!([])),
            view("place", json!(1), json!([])),
        ];
        for whole in views {
            let read: Read = serde_json::from_slice(whole.to_string().as_bytes()).expect("a view");
            let lean = read.into_value();
            for turn in 0..4 {
                assert_eq!(next_action(&lean, turn), next_action(&whole, turn));
            }
            for field in ["id", "version", "hole", "stage", "legal_moves"] {
                assert_eq!(lean[field], whole[field]);
            }
        }
    }
}
