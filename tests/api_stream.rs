//! The live log, `GET /v1/games/{id}/stream`: Server-Sent Events read from a second server
//! instance over the same database (on PostgreSQL) while moves go through the first, resumption,
//! a dropped listening connection, cancellation, refusals, and what 1,000 idle streams cost.

mod common;

use std::time::{Duration, Instant};

use common::contract::problem;
use common::probe::Probe;
use common::{
    Backend, Seat, TestApp, TestDatabase, pick_move, spawn_app, spawn_app_on, spawn_app_over,
    test_config,
};
use golf_server::store;
use serde_json::{Value, json};

/// How long a test waits for a stream to show something that should come at once.
const PROMPT: Duration = Duration::from_secs(5);

/// What a stream shows next.
#[derive(Debug)]
enum Frame {
    /// A message: its `id:` and its `data:` parsed as JSON.
    Message(i64, Value),
    /// A comment (keep-alive).
    Comment,
    /// The server ended the response.
    End,
    /// Nothing within the wait.
    Silent,
}

/// A Server-Sent Events response read frame by frame.
struct EventStream {
    response: reqwest::Response,
    buffer: String,
}

impl EventStream {
    /// Opens the stream of game `id` on `app` with `query` (e.g. `?after=3`), a bearer token
    /// and a `Last-Event-ID` if given; it must answer 200 `text/event-stream`.
    async fn open(
        app: &TestApp,
        id: &str,
        query: &str,
        token: Option<&str>,
        last_event_id: Option<i64>,
    ) -> EventStream {
        let response = request(app, id, query, token, last_event_id).await;
        assert_eq!(response.status(), 200, "stream {id}{query}");
        assert_eq!(
            response.headers()["content-type"],
            "text/event-stream",
            "stream {id}{query}"
        );
        EventStream {
            response,
            buffer: String::new(),
        }
    }

    /// The next frame, waiting up to `wait`.
    async fn next(&mut self, wait: Duration) -> Frame {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                return parse_block(&block);
            }
            match tokio::time::timeout_at(deadline, self.response.chunk()).await {
                Err(_) => return Frame::Silent,
                Ok(Ok(Some(bytes))) => self.buffer.push_str(std::str::from_utf8(&bytes).unwrap()),
                Ok(Ok(None)) => {
                    assert!(self.buffer.is_empty(), "a partial frame: {:?}", self.buffer);
                    return Frame::End;
                }
                Ok(Err(error)) => panic!("the stream failed: {error}"),
            }
        }
    }

    /// The messages up to and including `seq`, each within [`PROMPT`]; comments are skipped.
    async fn messages_through(&mut self, seq: i64) -> Vec<(i64, Value)> {
        let mut messages: Vec<(i64, Value)> = Vec::new();
        while messages.last().is_none_or(|(last, _)| *last < seq) {
            match self.next(PROMPT).await {
                Frame::Message(id, data) => messages.push((id, data)),
                Frame::Comment => {}
                other => panic!("waiting for entry {seq} after {messages:?}: {other:?}"),
            }
        }
        messages
    }
}

/// One frame: comments only, or a message with exactly one `id:` and one `data:` line (and no
/// `event:` field, so that `EventSource.onmessage` gets every entry).
fn parse_block(block: &str) -> Frame {
    let (mut id, mut data) = (None, None);
    for line in block.lines().filter(|line| !line.is_empty()) {
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = line.split_once(": ").expect("field: value");
        match field {
            "id" => {
                assert!(id.is_none(), "two ids in {block:?}");
                id = Some(value.parse::<i64>().expect("a numeric id"));
            }
            "data" => {
                assert!(data.is_none(), "two data lines in {block:?}");
                data = Some(serde_json::from_str::<Value>(value).expect("JSON data"));
            }
            other => panic!("unexpected field {other:?} in {block:?}"),
        }
    }
    match (id, data) {
        (Some(id), Some(data)) => Frame::Message(id, data),
        (None, None) => Frame::Comment,
        _ => panic!("a message needs both id and data: {block:?}"),
    }
}

async fn request(
    app: &TestApp,
    id: &str,
    query: &str,
    token: Option<&str>,
    last_event_id: Option<i64>,
) -> reqwest::Response {
    let mut request = app
        .client
        .get(app.url(&format!("/v1/games/{id}/stream{query}")));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(last) = last_event_id {
        request = request.header("Last-Event-ID", last.to_string());
    }
    request.send().await.expect("request reaches the server")
}

/// The instance that takes the moves, and on PostgreSQL a second one over the same database
/// that serves the streams (SQLite serves one instance: both are the same).
struct Instances {
    second: Option<TestApp>,
    writer: TestApp,
}

impl Instances {
    async fn start(backend: Backend) -> Instances {
        let writer = spawn_app(backend).await;
        let second = match backend {
            Backend::Postgres => Some(spawn_app_on(writer.database.shared()).await),
            Backend::Sqlite => None,
        };
        Instances { second, writer }
    }

    fn reader(&self) -> &TestApp {
        self.second.as_ref().unwrap_or(&self.writer)
    }
}

/// A started two-seat game of one hole: its id, host token and seats.
async fn started_game(app: &TestApp) -> (String, String, Vec<Seat>) {
    let (id, created) = app.create_game(json!({"seats": 2, "holes": 1})).await;
    let seats = vec![app.join(&id, "Ada").await, app.join(&id, "Bo").await];
    let host = created["host_token"].as_str().unwrap().to_owned();
    (id, host, seats)
}

/// The game's version as `seat` sees it.
async fn version(app: &TestApp, id: &str, seat: &Seat) -> i64 {
    app.view(id, Some(&seat.token)).await["version"]
        .as_i64()
        .unwrap()
}

/// Makes the next move of whoever may move; returns false once the game is finished.
async fn one_move(app: &TestApp, id: &str, seats: &[Seat], turn: usize) -> bool {
    for seat in seats {
        let view = app.view(id, Some(&seat.token)).await;
        if view["status"] == "finished" {
            return false;
        }
        if let Some(mv) = pick_move(&view, turn) {
            let response = app.play(id, &seat.token, &mv).await;
            assert_eq!(response.status(), 200, "seat {} move {mv}", seat.seat);
            return true;
        }
    }
    panic!("nobody could move in a game that is not finished");
}

/// The entries of `events` as `(seq, entry)`.
fn numbered(events: Vec<Value>) -> Vec<(i64, Value)> {
    events
        .into_iter()
        .map(|entry| (entry["seq"].as_i64().unwrap(), entry))
        .collect()
}

async fn streams_follow_the_moves_in_order_redacted_for_their_seat(backend: Backend) {
    // Moves through one instance reach streams held on another (on PostgreSQL) promptly, in
    // order, with id = seq, each entry exactly as `/events` shows it to the stream's caller at
    // that moment: a seat's own drawn card shown, the other seat's hidden, the deck hidden; a
    // finished game's stream stays open.
    let instances = Instances::start(backend).await;
    let (writer, reader) = (&instances.writer, instances.reader());
    let (id, _, seats) = started_game(writer).await;
    let viewers = [
        Some(seats[0].token.as_str()),
        Some(seats[1].token.as_str()),
        None,
    ];
    let mut streams = Vec::new();
    for (viewer, token) in viewers.iter().enumerate() {
        // Seat 1 presents its token as browsers' EventSource does, in the query.
        streams.push(match (viewer, token) {
            (1, Some(token)) => {
                EventStream::open(reader, &id, &format!("?token={token}"), None, None).await
            }
            _ => EventStream::open(reader, &id, "", *token, None).await,
        });
    }
    let mut last = 0;
    let mut slowest = Duration::ZERO;
    let mut seen = Vec::new();
    for turn in 0.. {
        let current = version(writer, &id, &seats[0]).await;
        for (stream, token) in streams.iter_mut().zip(viewers) {
            let started = Instant::now();
            let messages = stream.messages_through(current).await;
            slowest = slowest.max(started.elapsed());
            let expected = numbered(writer.events(&id, token, last).await);
            assert_eq!(messages, expected, "entries after {last} for {token:?}");
            if token == viewers[0] {
                seen.extend(messages);
            }
        }
        last = current;
        if !one_move(writer, &id, &seats, turn).await {
            break;
        }
    }
    eprintln!("slowest arrival of a move's entries on a stream: {slowest:?}");
    assert!(slowest < Duration::from_secs(2), "{slowest:?}");
    let ids: Vec<i64> = seen.iter().map(|(seq, _)| *seq).collect();
    assert_eq!(
        ids,
        (1..=last).collect::<Vec<_>>(),
        "every entry once, in order"
    );
    let draws = |seat: u64| {
        seen.iter()
            .map(|(_, entry)| entry)
            .filter(|entry| {
                entry["type"] == "card_drawn"
                    && entry["data"]["source"] == "stock"
                    && entry["data"]["seat"] == seat
            })
            .collect::<Vec<_>>()
    };
    let (own, other) = (draws(0), draws(1));
    assert!(
        !own.is_empty() && !other.is_empty(),
        "both seats drew from the stock"
    );
    assert!(
        own.iter().all(|entry| entry["data"]["card"].is_string()),
        "{own:?}"
    );
    assert!(
        other.iter().all(|entry| entry["data"]["card"].is_null()),
        "{other:?}"
    );
    let deal = seen
        .iter()
        .find(|(_, entry)| entry["type"] == "hole_dealt")
        .unwrap();
    assert!(
        deal.1["data"]["deck"].is_null() && deal.1["salt"].is_null(),
        "{deal:?}"
    );
    // Finished: nothing more comes, and the stream stays open until the client leaves.
    match streams[0].next(Duration::from_secs(1)).await {
        Frame::Silent | Frame::Comment => {}
        other => panic!("a finished game's stream goes on: {other:?}"),
    }
}

async fn a_stream_resumes_after_last_event_id_without_gap_or_duplicate(backend: Backend) {
    // A client that reconnects with Last-Event-ID (which wins over `after`) or `?after=N` gets
    // exactly the entries after it, including those appended while it was away.
    let instances = Instances::start(backend).await;
    let (writer, reader) = (&instances.writer, instances.reader());
    let (id, _, seats) = started_game(writer).await;
    let token = Some(seats[0].token.as_str());
    for turn in 0..4 {
        assert!(one_move(writer, &id, &seats, turn).await);
    }
    let first = version(writer, &id, &seats[0]).await;
    let mut stream = EventStream::open(reader, &id, "", token, None).await;
    let received = stream.messages_through(first).await;
    drop(stream);
    for turn in 4..8 {
        assert!(one_move(writer, &id, &seats, turn).await);
    }
    let now = version(writer, &id, &seats[0]).await;
    let resume_at = received[received.len() - 3].0;
    for (query, last_event_id, after) in [
        ("?after=1", Some(resume_at), resume_at),
        ("", Some(resume_at), resume_at),
        (&format!("?after={first}") as &str, None, first),
    ] {
        let mut stream = EventStream::open(reader, &id, query, token, last_event_id).await;
        let messages = stream.messages_through(now).await;
        assert_eq!(
            messages,
            numbered(writer.events(&id, token, after).await),
            "resumed with {query:?} {last_event_id:?}"
        );
    }
}

async fn cancelling_a_waiting_game_ends_its_streams(backend: Backend) {
    // The host cancels a waiting game: its open streams (on any instance) end.
    let instances = Instances::start(backend).await;
    let (writer, reader) = (&instances.writer, instances.reader());
    let (id, created) = writer.create_game(json!({"seats": 2})).await;
    let seat = writer.join(&id, "Ada").await;
    let mut stream = EventStream::open(reader, &id, "", Some(&seat.token), None).await;
    let messages = stream.messages_through(2).await;
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(open_streams(reader).await, 1, "golf_open_streams counts it");
    let host = created["host_token"].as_str().unwrap();
    let cancelled = writer
        .send(
            reqwest::Method::DELETE,
            &format!("/v1/games/{id}"),
            None,
            Some(host),
        )
        .await;
    assert_eq!(cancelled.status(), 204);
    match stream.next(PROMPT).await {
        Frame::End => {}
        other => panic!("the stream of a cancelled game ends: {other:?}"),
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while open_streams(reader).await != 0 {
        assert!(Instant::now() < deadline, "golf_open_streams stays above 0");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The instance's `golf_open_streams` gauge.
async fn open_streams(app: &TestApp) -> i64 {
    let text = app.get("/metrics").await.text().await.unwrap();
    text.lines()
        .find_map(|line| line.strip_prefix("golf_open_streams ")?.parse().ok())
        .expect("golf_open_streams is exposed")
}

/// Game, query, bearer token, `Last-Event-ID`, the status and the code it answers.
type Refusal<'a> = (
    &'a str,
    &'a str,
    Option<&'a str>,
    Option<&'a str>,
    u16,
    &'a str,
);

async fn bad_requests_are_problems_in_the_order_of_events(backend: Backend) {
    // An unknown game is 404 and a bad token 401 (in the header or the query) before a parameter
    // that does not parse (400) or is out of range (422), as for `/events`.
    let app = spawn_app(backend).await;
    let (id, _, _) = started_game(&app).await;
    let unknown = "6f1c1a3e-0000-4000-8000-000000000000";
    let cases: [Refusal; 10] = [
        (unknown, "?after=x", None, None, 404, "not_found"),
        (&id, "?after=x", Some("nope"), None, 401, "unauthorized"),
        (&id, "?token=nope&after=x", None, None, 401, "unauthorized"),
        (&id, "?%74oken=nope", None, None, 401, "unauthorized"),
        (&id, "?after=x", None, None, 400, "malformed_request"),
        (&id, "?tokn=abc", None, None, 400, "malformed_request"),
        (&id, "", None, Some("seven"), 400, "malformed_request"),
        (&id, "?after=-1", None, None, 422, "out_of_range"),
        (&id, "", None, Some("-4"), 422, "out_of_range"),
        // Out of range even where Last-Event-ID wins, as the spec's `minimum` says.
        (&id, "?after=-1", None, Some("3"), 422, "out_of_range"),
    ];
    for (game, query, token, last_event_id, status, code) in cases {
        let mut request = app
            .client
            .get(app.url(&format!("/v1/games/{game}/stream{query}")));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(last) = last_event_id {
            request = request.header("Last-Event-ID", last);
        }
        let response = request.send().await.unwrap();
        let body = problem(response, status, code).await;
        assert!(!body.to_string().contains("nope"), "{body}");
    }
}

on_both_backends!(
    streams_follow_the_moves_in_order_redacted_for_their_seat,
    a_stream_resumes_after_last_event_id_without_gap_or_duplicate,
    cancelling_a_waiting_game_ends_its_streams,
    bad_requests_are_problems_in_the_order_of_events,
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instances_own_moves_reach_its_streams_without_a_read() {
    // PostgreSQL, two instances over one database, the first over a store that counts its
    // reads. Its own moves reach its streams of the game with no read of the game row or the log
    // (the entries are handed over at commit, and the append's notification, which says the
    // version, finds them there), each seat's as the log shows it to that seat. A move through
    // the other instance is read from the database, as ever.
    let database = TestDatabase::new(Backend::Postgres).await;
    let options = test_config(&database).pool_options();
    let probe = Probe::over(store::connect(&database.url, &options).await.unwrap());
    let first = spawn_app_over(database, probe.clone());
    let second = spawn_app_on(first.database.shared()).await;
    let (id, _, seats) = started_game(&first).await;
    let mut streams = Vec::new();
    for seat in &seats {
        streams.push(EventStream::open(&first, &id, "", Some(&seat.token), None).await);
    }
    assert!(one_move(&first, &id, &seats, 0).await);
    let warm = version(&first, &id, &seats[0]).await;
    for stream in &mut streams {
        stream.messages_through(warm).await;
    }
    // Whatever the streams' first reads were, they are over, and the notification came.
    tokio::time::sleep(Duration::from_millis(500)).await;

    let before = probe.reads();
    for turn in 1..5 {
        assert!(one_move(&first, &id, &seats, turn).await);
    }
    let last = version(&first, &id, &seats[0]).await;
    let mut streamed = Vec::new();
    for stream in &mut streams {
        streamed.push(stream.messages_through(last).await);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        probe.reads(),
        before,
        "no read for the instance's own moves"
    );
    for (seat, streamed) in seats.iter().zip(streamed) {
        let logged = numbered(first.events(&id, Some(&seat.token), warm).await);
        assert_eq!(streamed, logged, "seat {}", seat.seat);
    }

    let (game_reads, log_reads) = probe.reads();
    assert!(one_move(&second, &id, &seats, 5).await);
    let moved = version(&second, &id, &seats[0]).await;
    assert_eq!(streams[0].messages_through(moved).await.len(), 1);
    let (game_reads_after, log_reads_after) = probe.reads();
    assert!(game_reads_after > game_reads && log_reads_after > log_reads);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_stream_gets_a_keep_alive_comment_every_15_seconds() {
    // With nothing new, the stream sends a comment (no message) 15 s after it opened, and no
    // sooner.
    let app = spawn_app(Backend::Sqlite).await;
    let (id, _) = app.create_game(json!({"seats": 2})).await;
    let mut stream = EventStream::open(&app, &id, "?after=1", None, None).await;
    let opened = Instant::now();
    match stream.next(Duration::from_secs(20)).await {
        Frame::Comment => {}
        other => panic!("a keep-alive comment: {other:?}"),
    }
    let waited = opened.elapsed();
    assert!(
        waited > Duration::from_secs(14) && waited < Duration::from_secs(17),
        "{waited:?}"
    );
}

/// The listening connections of the instances on `app`'s database, by backend pid.
async fn listeners(app: &TestApp) -> Vec<i32> {
    let mut admin = common::admin_connection().await;
    sqlx::query_scalar(
        "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = $2",
    )
    .bind(golf_server::store::notify::LISTENER_APPLICATION_NAME)
    .bind(app.database.name.as_deref().unwrap())
    .fetch_all(&mut admin)
    .await
    .unwrap()
}

/// Waits until `app`'s database has `count` listening connections.
async fn wait_for_listeners(app: &TestApp, count: usize) -> Vec<i32> {
    let deadline = Instant::now() + PROMPT;
    loop {
        let pids = listeners(app).await;
        if pids.len() == count {
            return pids;
        }
        assert!(
            Instant::now() < deadline,
            "listeners: {pids:?}, expected {count}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Lets connections to `app`'s database in (or keeps every new one out, superusers included;
/// open sessions stay).
async fn allow_connections(app: &TestApp, allowed: bool) {
    let mut admin = common::admin_connection().await;
    let statement = format!(
        "ALTER DATABASE {} ALLOW_CONNECTIONS {allowed}",
        app.database.name.as_deref().unwrap()
    );
    sqlx::query(sqlx::AssertSqlSafe(statement))
        .execute(&mut admin)
        .await
        .unwrap();
}

/// Makes the next move while the database refuses new connections: a request that finds no idle
/// connection in the pool (one may be on its way back from the previous request) gets 503
/// `unavailable` with nothing applied, and is sent again, as a client would.
async fn move_while_new_connections_are_refused(app: &TestApp, id: &str, seats: &[Seat]) {
    for _ in 0..50 {
        for seat in seats {
            let path = format!("/v1/games/{id}/view");
            let response = app
                .send(reqwest::Method::GET, &path, None, Some(&seat.token))
                .await;
            if response.status() == 503 {
                break;
            }
            assert_eq!(response.status(), 200);
            let view: Value = response.json().await.unwrap();
            let Some(mv) = pick_move(&view, 0) else {
                continue;
            };
            match app.play(id, &seat.token, &mv).await.status().as_u16() {
                200 => return,
                503 => break,
                other => panic!("seat {} move {mv}: {other}", seat.seat),
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no move went through on the pool's open connections");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_listening_connection_costs_no_entry() {
    // The listening connections of both instances are killed and kept from reconnecting while a
    // move is made, so its notification reaches nobody: the stream on the second instance still
    // gets the move's entries once its listener is back, well before its safety re-check (a
    // minute), because a reconnected listener wakes every stream; the next move then arrives as
    // before.
    let instances = Instances::start(Backend::Postgres).await;
    let (writer, reader) = (&instances.writer, instances.reader());
    let (id, _, seats) = started_game(writer).await;
    let token = Some(seats[0].token.as_str());
    let mut stream = EventStream::open(reader, &id, "", token, None).await;
    let mut last = version(writer, &id, &seats[0]).await;
    stream.messages_through(last).await;
    let before = wait_for_listeners(writer, 2).await;
    allow_connections(writer, false).await;
    let mut admin = common::admin_connection().await;
    for pid in &before {
        sqlx::query("SELECT pg_terminate_backend($1)")
            .bind(pid)
            .execute(&mut admin)
            .await
            .unwrap();
    }
    wait_for_listeners(writer, 0).await;
    move_while_new_connections_are_refused(writer, &id, &seats).await;
    match stream.next(Duration::from_secs(1)).await {
        Frame::Silent => {}
        other => panic!("nothing can wake the stream while nobody listens: {other:?}"),
    }
    allow_connections(writer, true).await;
    for turn in 1..3 {
        let now = version(writer, &id, &seats[0]).await;
        let started = Instant::now();
        let messages = stream.messages_through(now).await;
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(messages, numbered(writer.events(&id, token, last).await));
        last = now;
        if turn == 1 {
            let after = wait_for_listeners(writer, 2).await;
            assert!(
                after.iter().all(|pid| !before.contains(pid)),
                "{before:?} {after:?}"
            );
        }
        assert!(one_move(writer, &id, &seats, turn).await);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement, not a check: cargo test --test api_stream -- --ignored --nocapture"]
async fn measure_database_connections_of_a_thousand_idle_streams() {
    // Opens 1,000 streams on one instance (pool of 5) and counts the sessions on its database;
    // then one move reaches all of them (through one shared read of the game).
    let app = spawn_app(Backend::Postgres).await;
    let (id, _, seats) = started_game(&app).await;
    let idle_before = app.database.sessions().await;
    let mut streams = Vec::new();
    for _ in 0..1000 {
        streams.push(EventStream::open(&app, &id, "", Some(&seats[0].token), None).await);
    }
    let version = version(&app, &id, &seats[0]).await;
    for stream in &mut streams {
        stream.messages_through(version).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let idle = app.database.sessions().await;
    assert!(one_move(&app, &id, &seats, 0).await);
    let started = Instant::now();
    for stream in &mut streams {
        stream.messages_through(version + 1).await;
    }
    let fan_out = started.elapsed();
    println!(
        "sessions on the database: {idle_before} before, {idle} with 1000 idle streams open; \
         one move reached all 1000 streams in {fan_out:?}"
    );
    assert!(idle <= 7, "{idle} sessions");
}
