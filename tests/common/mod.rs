//! Test support: a real server on port 0 over a fresh database of either backend.

#![allow(dead_code)] // each test binary uses a different part of this module

pub mod citus;
pub mod cluster;
pub mod contract;
pub mod load;
pub mod openapi;
pub mod probe;
pub mod process;
pub mod sse;
pub mod webhooks;

use std::sync::Arc;
use std::time::Duration;

use golf_server::config::{Config, HttpSettings, LogFormat, WebhookSettings};
use golf_server::service::Clock;
use golf_server::startup::Application;
use golf_server::store::{self, EventStore, PoolOptions};
use serde_json::{Value, json};
use sqlx::Connection;
use sqlx::postgres::PgConnection;
use sqlx::sqlite::SqliteConnection;
use uuid::Uuid;

/// The backends every persistence test runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Postgres,
    Sqlite,
}

/// The PostgreSQL server that tests create their databases on: `DATABASE_URL` when it names a
/// PostgreSQL server, else the local one.
pub fn postgres_server_url() -> String {
    match std::env::var("DATABASE_URL") {
        Ok(url) if url.starts_with("postgres") => url,
        _ => "postgres://postgres@127.0.0.1:5432/postgres".to_owned(),
    }
}

/// Replaces the database name of a PostgreSQL URL.
pub fn with_database(server_url: &str, database: &str) -> String {
    let (base, query) = match server_url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (server_url, None),
    };
    let authority_end = base
        .find("://")
        .map(|scheme| scheme + 3)
        .and_then(|start| base[start..].find('/').map(|slash| start + slash))
        .unwrap_or(base.len());
    let mut url = format!("{}/{}", &base[..authority_end], database);
    if let Some(query) = query {
        url.push('?');
        url.push_str(query);
    }
    url
}

/// How long a test waits for the PostgreSQL server before it fails.
const SERVER_TIMEOUT: Duration = Duration::from_secs(5);

/// How long dropping a test database may take: `WITH (FORCE)` first ends the sessions still on
/// it, which may take a while on a busy machine.
const DROP_TIMEOUT: Duration = Duration::from_secs(60);

/// A connection to the PostgreSQL server of the tests. When none answers, fails saying how to
/// start one: the tests never skip it.
pub async fn admin_connection() -> PgConnection {
    let server = postgres_server_url();
    let reason = match tokio::time::timeout(SERVER_TIMEOUT, PgConnection::connect(&server)).await {
        Ok(Ok(connection)) => return connection,
        Ok(Err(error)) => error.to_string(),
        Err(_) => format!("no answer within {SERVER_TIMEOUT:?}"),
    };
    panic!(
        "PostgreSQL does not answer at {server} ({reason}). Start it with \
         `pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start` (or run \
         scripts/test, which does), or set DATABASE_URL to a PostgreSQL server where this user \
         may create databases."
    )
}

/// A fresh, empty database, dropped with the value (also when a test panics, or the store's
/// migrations fail); SQLite files live in a temporary directory kept alive by the value.
pub struct TestDatabase {
    pub backend: Backend,
    pub url: String,
    pub name: Option<String>,
    _dir: Option<tempfile::TempDir>,
}

impl TestDatabase {
    /// The sessions PostgreSQL counts on this database (PostgreSQL only).
    pub async fn sessions(&self) -> i64 {
        let name = self.name.as_deref().expect("a PostgreSQL database");
        let mut admin = admin_connection().await;
        sqlx::query_scalar("SELECT count(*) FROM pg_stat_activity WHERE datname = $1")
            .bind(name)
            .fetch_one(&mut admin)
            .await
            .expect("pg_stat_activity")
    }

    pub async fn new(backend: Backend) -> Self {
        match backend {
            Backend::Postgres => Self::postgres(true).await,
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("temporary directory");
                let url = format!("sqlite://{}", dir.path().join("golf.db").display());
                TestDatabase {
                    backend,
                    url,
                    name: None,
                    _dir: Some(dir),
                }
            }
        }
    }

    /// A fresh PostgreSQL database; on a Citus coordinator, made on every node with the workers
    /// added, and distributed if `distributed` (else left as a new release finds an old one).
    async fn postgres(distributed: bool) -> Self {
        let name = format!("golf_test_{}", Uuid::new_v4().simple());
        let mut admin = admin_connection().await;
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut admin)
            .await
            .expect("create a test database");
        let url = with_database(&postgres_server_url(), &name);
        let workers = citus::workers(&mut admin).await;
        if !workers.is_empty() {
            // Adding the workers to two databases at once fails now and then (Citus updates a
            // catalog that the databases share): the tests take turns, held until `admin` ends.
            sqlx::query("SELECT pg_advisory_lock(1735355494, 0)")
                .execute(&mut admin)
                .await
                .expect("wait for the other tests' databases");
            citus::prepare(&url, &name, &workers).await;
            if distributed {
                golf_server::store::distribute::distribute(&url)
                    .await
                    .expect("distribute the test database");
            }
        }
        TestDatabase {
            backend: Backend::Postgres,
            url,
            name: Some(name),
            _dir: None,
        }
    }

    /// A fresh, empty database on the Citus cluster of the tests, with the workers added but
    /// nothing distributed.
    pub async fn on_citus_undistributed() -> Self {
        Self::postgres(false).await
    }

    /// A database the test manages itself (on a throwaway cluster): dropping the value drops
    /// nothing.
    pub fn external(backend: Backend, url: String) -> Self {
        TestDatabase {
            backend,
            url,
            name: None,
            _dir: None,
        }
    }

    /// Opens a transaction of its own that holds `game_id` against every writer until it is
    /// released: on PostgreSQL the game row `FOR UPDATE`, on SQLite the database's write lock.
    pub async fn hold(&self, game_id: Uuid) -> Holder {
        match self.backend {
            Backend::Postgres => {
                let mut conn = PgConnection::connect(&self.url).await.expect("connect");
                sqlx::raw_sql("BEGIN")
                    .execute(&mut conn)
                    .await
                    .expect("begin");
                sqlx::query("SELECT version FROM games WHERE id = $1 FOR UPDATE")
                    .bind(game_id)
                    .execute(&mut conn)
                    .await
                    .expect("lock the game row");
                Holder::Postgres(conn)
            }
            Backend::Sqlite => {
                let mut conn = SqliteConnection::connect(&self.url).await.expect("connect");
                sqlx::raw_sql("BEGIN IMMEDIATE")
                    .execute(&mut conn)
                    .await
                    .expect("take the write lock");
                Holder::Sqlite(conn)
            }
        }
    }

    /// The same database for another server instance: the value returned owns nothing, so the
    /// database is dropped (and a SQLite file's directory removed) once, with `self`.
    pub fn shared(&self) -> TestDatabase {
        TestDatabase {
            backend: self.backend,
            url: self.url.clone(),
            name: None,
            _dir: None,
        }
    }

    /// Drops a PostgreSQL test database, closing the server's connections to it.
    pub async fn drop_postgres(&self) {
        if let Some(name) = &self.name {
            drop_database(name)
                .await
                .unwrap_or_else(|error| panic!("{error}"));
        }
    }
}

async fn drop_database(name: &str) -> Result<(), String> {
    let dropping = async {
        let mut admin = PgConnection::connect(&postgres_server_url()).await?;
        let statement = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
        sqlx::query(sqlx::AssertSqlSafe(statement.clone()))
            .execute(&mut admin)
            .await?;
        for worker in citus::workers(&mut admin).await {
            worker.drop_database(name).await?;
        }
        Ok::<(), sqlx::Error>(())
    };
    match tokio::time::timeout(DROP_TIMEOUT, dropping).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(error)) => Err(format!("the test database {name} was not dropped: {error}")),
        Err(_) => Err(format!(
            "the test database {name} was not dropped within {DROP_TIMEOUT:?}"
        )),
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let Some(name) = self.name.take() else {
            return;
        };
        // Drop runs inside the test's runtime, which cannot block: clean up on a thread.
        let dropped = std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|error| error.to_string())
                .and_then(|runtime| runtime.block_on(drop_database(&name)))
        })
        .join()
        .unwrap_or_else(|_| Err("the cleanup thread panicked".to_owned()));
        match dropped {
            Ok(()) => {}
            // A test that already fails keeps its own panic; a database left behind is said.
            Err(error) if std::thread::panicking() => eprintln!("{error}"),
            Err(error) => panic!("{error}"),
        }
    }
}

/// A transaction that holds a game against every writer (see [`TestDatabase::hold`]).
pub enum Holder {
    Postgres(PgConnection),
    Sqlite(SqliteConnection),
}

impl Holder {
    pub async fn release(self) {
        match self {
            Holder::Postgres(mut conn) => {
                sqlx::raw_sql("ROLLBACK").execute(&mut conn).await.map(drop)
            }
            Holder::Sqlite(mut conn) => {
                sqlx::raw_sql("ROLLBACK").execute(&mut conn).await.map(drop)
            }
        }
        .expect("release");
    }
}

/// A running server and a client for it.
pub struct TestApp {
    pub address: String,
    pub client: reqwest::Client,
    pub database: TestDatabase,
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.address, path)
    }

    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.client
            .get(self.url(path))
            .send()
            .await
            .expect("request reaches the server")
    }

    /// The audit of game `id` (`GET .../audit`), as JSON.
    pub async fn audit(&self, id: &str) -> Value {
        self.get(&format!("/v1/games/{id}/audit"))
            .await
            .json()
            .await
            .expect("an audit")
    }
}

/// A small store of its own on a test database, as check-db or an auditor opens it.
pub async fn open_store(url: &str) -> Arc<dyn EventStore> {
    let options = PoolOptions {
        max_connections: 2,
        acquire_timeout: Duration::from_secs(5),
        ..PoolOptions::default()
    };
    store::connect(url, &options)
        .await
        .expect("open the test database")
}

/// Starts the real server on 127.0.0.1:0 over a fresh database.
pub async fn spawn_app(backend: Backend) -> TestApp {
    spawn_app_on(TestDatabase::new(backend).await).await
}

/// Starts the real server on 127.0.0.1:0 over `database`, as it is.
pub async fn spawn_app_on(database: TestDatabase) -> TestApp {
    spawn_app_with(database, Clock::system(), |_| {}).await
}

/// The settings of a test server: those of [`spawn_app_on`].
pub fn test_config(database: &TestDatabase) -> Config {
    Config {
        bind: "127.0.0.1:0".parse().expect("socket address"),
        database_url: database.url.clone(),
        log_format: LogFormat::Text,
        log_filter: "warn".to_owned(),
        db_max_connections: 5,
        db_acquire_timeout: Duration::from_secs(1),
        db_statement_timeout: Duration::from_secs(5),
        turn_timeout_s: None,
        match_turn_timeout_s: golf_server::service::DEFAULT_MATCH_TURN_TIMEOUT_S,
        // Waiting games are not cancelled behind a test's back (the fixtures of older databases
        // hold some): the tests of the expiry set it.
        waiting_expiry: Duration::from_secs(10 * 365 * 24 * 60 * 60),
        challenge_expiry: Duration::from_secs(24 * 60 * 60),
        seek_expiry: Duration::from_secs(600),
        sweep_interval: Duration::from_secs(1),
        analysis_threads: 1,
        cached_games: golf_server::service::DEFAULT_CACHED_GAMES,
        // Every test client comes from 127.0.0.1: one test holds a thousand streams, others
        // create, export and replay games by the hundred. tests/api_limits checks the defaults.
        http: HttpSettings {
            max_streams_per_client: 10_000,
            writes_per_min: None,
            expensive_reads_per_min: None,
            expert_seats_per_min: None,
            ..HttpSettings::default()
        },
        // Tests deliver webhooks to receivers on 127.0.0.1, and retry them within moments.
        webhooks: WebhookSettings {
            allow_private: true,
            retry_delays: vec![Duration::from_millis(200); 3],
            ports: vec![443],
        },
    }
}

/// Starts the real server on 127.0.0.1:0 over `database`, on `clock` (keep a clone to move its
/// time), with the settings of [`test_config`] as `configure` changes them.
pub async fn spawn_app_with(
    database: TestDatabase,
    clock: Clock,
    configure: impl FnOnce(&mut Config),
) -> TestApp {
    let mut config = test_config(&database);
    configure(&mut config);
    let app = Application::build_with_clock(&config, clock)
        .await
        .expect("the server starts");
    running(app, database)
}

/// Starts the real server on 127.0.0.1:0 over `database`, with the settings of [`test_config`]
/// as `configure` changes them, looking up webhook hosts with `resolver`.
pub async fn spawn_app_with_resolver(
    database: TestDatabase,
    configure: impl FnOnce(&mut Config),
    resolver: Arc<dyn golf_server::service::accounts::webhook_client::HostResolver>,
) -> TestApp {
    let mut config = test_config(&database);
    configure(&mut config);
    let app = Application::build_with_resolver(&config, Clock::system(), resolver)
        .await
        .expect("the server starts");
    running(app, database)
}

/// Starts the real server on 127.0.0.1:0 over `store`, which the test stands between the service
/// and `database`, with the settings of [`test_config`].
pub fn spawn_app_over(database: TestDatabase, store: Arc<dyn EventStore>) -> TestApp {
    let app = Application::build_over(&test_config(&database), Clock::system(), store)
        .expect("the server starts");
    running(app, database)
}

/// Runs `app` on a task of its own, with a client for it.
fn running(app: Application, database: TestDatabase) -> TestApp {
    let address = format!("http://{}", app.address());
    tokio::spawn(app.run_until_stopped());
    TestApp {
        address,
        client: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("HTTP client"),
        database,
    }
}

/// Generates one `#[tokio::test]` per backend for each listed async test function taking a
/// [`Backend`].
#[macro_export]
macro_rules! on_both_backends {
    ($($test:ident),* $(,)?) => {
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    super::$test($crate::common::Backend::Postgres).await;
                }
            )*
        }
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    super::$test($crate::common::Backend::Sqlite).await;
                }
            )*
        }
    };
}

/// A seat a test holds.
#[derive(Debug, Clone)]
pub struct Seat {
    pub seat: u8,
    pub token: String,
}

impl TestApp {
    /// Sends `method path` with an optional JSON body and bearer token; answers the status and
    /// the JSON body (null when there is none).
    pub async fn send_json(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
        token: Option<&str>,
    ) -> (u16, Value) {
        let response = self.send(method, path, body, token).await;
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// Creates account `username`; answers its token.
    pub async fn sign_up(&self, username: &str) -> String {
        let body = serde_json::json!({"username": username});
        let (status, created) = self
            .send_json(reqwest::Method::POST, "/v1/accounts", Some(&body), None)
            .await;
        assert_eq!(status, 201, "{created}");
        created["token"].as_str().unwrap().to_owned()
    }

    /// Sends `method path` with an optional JSON body and bearer token.
    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
        token: Option<&str>,
    ) -> reqwest::Response {
        let mut request = self.client.request(method, self.url(path));
        if let Some(body) = body {
            request = request.json(body);
        }
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send().await.expect("request reaches the server")
    }

    /// Creates a game and returns its id and the creation body (with `host_token`).
    pub async fn create_game(&self, body: Value) -> (String, Value) {
        let response = self
            .send(reqwest::Method::POST, "/v1/games", Some(&body), None)
            .await;
        assert_eq!(response.status(), 201, "create {body}");
        let created: Value = response.json().await.unwrap();
        (created["id"].as_str().unwrap().to_owned(), created)
    }

    /// Takes a seat as a person.
    pub async fn join(&self, id: &str, name: &str) -> Seat {
        let response = self
            .send(
                reqwest::Method::POST,
                &format!("/v1/games/{id}/players"),
                Some(&json!({"name": name})),
                None,
            )
            .await;
        assert_eq!(response.status(), 201, "join {name}");
        let joined: Value = response.json().await.unwrap();
        Seat {
            seat: joined["seat"].as_u64().unwrap() as u8,
            token: joined["token"].as_str().unwrap().to_owned(),
        }
    }

    /// The view of the holder of `token` (a spectator's without).
    pub async fn view(&self, id: &str, token: Option<&str>) -> Value {
        let path = match token {
            Some(_) => format!("/v1/games/{id}/view"),
            None => format!("/v1/games/{id}"),
        };
        let response = self.send(reqwest::Method::GET, &path, None, token).await;
        assert_eq!(response.status(), 200, "{path}");
        response.json().await.unwrap()
    }

    /// Sends a move.
    pub async fn play(&self, id: &str, token: &str, mv: &Value) -> reqwest::Response {
        self.send(
            reqwest::Method::POST,
            &format!("/v1/games/{id}/moves"),
            Some(mv),
            Some(token),
        )
        .await
    }

    /// Every log entry, as the holder of `token` sees it.
    pub async fn events(&self, id: &str, token: Option<&str>, after: i64) -> Vec<Value> {
        let mut entries = Vec::new();
        let mut after = after;
        loop {
            let path = format!("/v1/games/{id}/events?after={after}&limit=1000");
            let response = self.send(reqwest::Method::GET, &path, None, token).await;
            assert_eq!(response.status(), 200, "{path}");
            let page: Value = response.json().await.unwrap();
            entries.extend(page["events"].as_array().unwrap().iter().cloned());
            match page["next_after"].as_i64() {
                Some(next) => after = next,
                None => return entries,
            }
        }
    }
}

/// Plays every seat with [`pick_move`] until the game is finished; returns the number of moves
/// sent.
pub async fn play_to_the_end(app: &TestApp, id: &str, seats: &[Seat]) -> usize {
    let mut moves = 0;
    for _round in 0..10_000 {
        let mut moved = false;
        for seat in seats {
            let view = app.view(id, Some(&seat.token)).await;
            if view["status"] == "finished" {
                return moves;
            }
            if let Some(mv) = pick_move(&view, moves) {
                let response = app.play(id, &seat.token, &mv).await;
                let status = response.status();
                let body: Value = response.json().await.unwrap();
                assert_eq!(status, 200, "seat {} move {mv}: {body}", seat.seat);
                moves += 1;
                moved = true;
            }
        }
        assert!(moved, "nobody could move in a game that is not finished");
    }
    panic!("the game did not finish");
}

/// Scores a grid of six codes as docs/RULES.md says, independently of the engine.
pub fn score_grid(grid: &[Value]) -> i64 {
    let rank = |code: &Value| {
        let code = code.as_str().unwrap();
        code[..code.len() - 1].to_owned()
    };
    let points = |rank: &str| match rank {
        "A" => 1,
        "2" => -2,
        "J" | "Q" => 10,
        "K" => 0,
        number => number.parse().unwrap(),
    };
    (0..3)
        .map(|column| {
            let (top, bottom) = (rank(&grid[column]), rank(&grid[column + 3]));
            if top == bottom {
                0
            } else {
                points(&top) + points(&bottom)
            }
        })
        .sum()
}

/// A deterministic permutation of the 52 codes, different for each `n`.
pub fn stacked_deck(n: u64) -> Vec<String> {
    let mut deck: Vec<String> = ["S", "H", "D", "C"]
        .iter()
        .flat_map(|suit| {
            [
                "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K",
            ]
            .iter()
            .map(move |rank| format!("{rank}{suit}"))
        })
        .collect();
    let mut state = n
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    for i in (1..deck.len()).rev() {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let j = (state >> 33) as usize % (i + 1);
        deck.swap(i, j);
    }
    deck
}

/// A simple player: reveals, draws (now and then from the discard pile), fills face-down
/// positions, sometimes discards, and flips or passes: a hole ends within a few turns.
pub fn pick_move(view: &Value, turn: usize) -> Option<Value> {
    let legal = view["legal_moves"].as_array()?;
    if legal.is_empty() {
        return None;
    }
    let of_type = |kind: &'static str| legal.iter().filter(move |m| m["type"] == kind);
    let reveals = of_type("reveal").count();
    if let Some(reveal) = of_type("reveal").nth(turn % reveals.max(1)) {
        return Some(reveal.clone());
    }
    if turn % 7 == 6
        && let Some(knock) = of_type("knock").next()
    {
        return Some(knock.clone());
    }
    if of_type("draw").next().is_some() {
        let source = if turn % 5 == 4 { "discard" } else { "stock" };
        return Some(json!({"type": "draw", "source": source}));
    }
    if of_type("flip").next().is_some() {
        if turn.is_multiple_of(2)
            && let Some(pass) = of_type("pass").next()
        {
            return Some(pass.clone());
        }
        return of_type("flip").next().cloned();
    }
    let me = view["you"].as_u64()? as usize;
    let grid = view["players"][me]["grid"].as_array()?;
    if turn % 3 == 1
        && let Some(discard) = of_type("discard").next()
    {
        return Some(discard.clone());
    }
    let face_down = grid
        .iter()
        .position(Value::is_null)
        .unwrap_or(turn % grid.len());
    Some(json!({"type": "swap", "position": face_down}))
}
