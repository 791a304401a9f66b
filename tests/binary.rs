//! The `golf-server` binary as a newcomer runs it: no setup, embedded SQLite, clean logs.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

const SEAT_SECRET: &str = "seat-secret-5f1d2c";
const QUERY_SECRET: &str = "query-secret-8a7b6c";

fn golf_server() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_golf-server"));
    for variable in ["DATABASE_URL", "GOLF_BIND", "GOLF_LOG", "RUST_LOG"] {
        command.env_remove(variable);
    }
    command
}

/// A running `golf-server serve`; killed when dropped, so a failing test leaves no server behind.
struct Server {
    child: Child,
    /// The lines of its standard output, read on a thread of their own.
    lines: Receiver<String>,
    output: String,
}

/// How long a test waits for a line of the server's output.
const OUTPUT_TIMEOUT: Duration = Duration::from_secs(30);

impl Server {
    fn spawn(mut command: Command) -> Server {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Server {
            child,
            lines,
            output: String::new(),
        }
    }

    /// Reads the output up to the first line that contains `text`, and returns that line.
    fn wait_for_line(&mut self, text: &str) -> String {
        let deadline = Instant::now() + OUTPUT_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.output.push_str(&line);
                    self.output.push('\n');
                    if line.contains(text) {
                        return line;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!(
                        "no line with {text:?} within {OUTPUT_TIMEOUT:?}:\n{}",
                        self.output
                    )
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!(
                        "the server exited before it printed {text:?}:\n{}",
                        self.output
                    )
                }
            }
        }
    }

    /// Reads the output until the line that names the address the server listens on.
    fn address(&mut self) -> String {
        let line = self.wait_for_line("listening on http://");
        line.split("listening on http://")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_default()
            .to_owned()
    }

    /// Sends a signal (`"TERM"`, `"INT"`, ...) to the server.
    fn signal(&self, name: &str) {
        let sent = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(sent.success(), "SIG{name} reaches the server");
    }

    /// Sends SIGTERM and returns whether the server exited cleanly, with everything it printed.
    fn terminate(&mut self) -> (bool, String) {
        self.signal("TERM");
        self.wait_for_exit()
    }

    /// Waits for the server to exit; returns whether it exited cleanly, with everything it printed.
    fn wait_for_exit(&mut self) -> (bool, String) {
        let status = self.child.wait().expect("the server exits");
        for line in self.lines.iter() {
            self.output.push_str(&line);
            self.output.push('\n');
        }
        if let Some(mut stderr) = self.child.stderr.take() {
            stderr
                .read_to_string(&mut self.output)
                .expect("read stderr");
        }
        (status.success(), self.output.clone())
    }
}

/// `golf-server` as a newcomer starts it, in a fresh directory (kept with the value), on a free
/// port.
fn serve_in_an_empty_directory() -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().unwrap();
    let mut command = golf_server();
    command
        .current_dir(dir.path())
        .env("GOLF_BIND", "127.0.0.1:0");
    (dir, Server::spawn(command))
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn serves_on_embedded_sqlite_with_no_setup_and_logs_no_secret() {
    let (dir, mut server) = serve_in_an_empty_directory();
    let address = server.address();

    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    for path in ["/healthz", "/readyz"] {
        let response = client
            .get(format!("http://{address}{path}"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{path}");
    }
    let response = client
        .get(format!(
            "http://{address}/v1/games/unknown/view?token={QUERY_SECRET}&after=1"
        ))
        .header("Authorization", format!("Bearer {SEAT_SECRET}"))
        .send()
        .await
        .unwrap();
    assert!(response.status().is_client_error());

    let (clean_exit, logs) = server.terminate();
    assert!(clean_exit, "SIGTERM stops the server cleanly:\n{logs}");
    assert!(
        dir.path().join("golf.db").exists(),
        "golf.db is created in the working directory"
    );
    assert!(
        logs.contains("request finished"),
        "requests are logged:\n{logs}"
    );
    assert!(
        logs.contains("/v1/games/unknown/view"),
        "paths are logged:\n{logs}"
    );
    assert!(
        !logs.contains(SEAT_SECRET),
        "the bearer token leaked:\n{logs}"
    );
    assert!(
        !logs.contains(QUERY_SECRET),
        "the token parameter leaked:\n{logs}"
    );
}

/// Reads one HTTP/1.1 response (head and a `Content-Length` body) from `connection`.
fn read_response(connection: &mut TcpStream) -> String {
    let mut bytes = Vec::new();
    let mut byte = [0u8; 1];
    while !bytes.ends_with(b"\r\n\r\n") {
        connection.read_exact(&mut byte).expect("a response head");
        bytes.push(byte[0]);
    }
    let head = String::from_utf8(bytes).expect("an ASCII head");
    let length = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    connection.read_exact(&mut body).expect("the response body");
    head + &String::from_utf8_lossy(&body)
}

#[test]
fn sigterm_and_sigint_let_an_in_flight_request_finish() {
    for signal in ["TERM", "INT"] {
        let (_dir, mut server) = serve_in_an_empty_directory();
        let address = server.address();

        let mut connection = TcpStream::connect(&address).unwrap();
        connection
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        // A request whose body is still on its way when the signal arrives: the server has read
        // its head once it asks for the body (100 Continue).
        let body = br#"{"seats": 2, "holes": 1}"#;
        write!(
            connection,
            "POST /v1/games HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .unwrap();
        assert!(read_response(&mut connection).starts_with("HTTP/1.1 100"));
        server.signal(signal);
        server.wait_for_line("received: finishing requests in flight");
        // The stop has begun once the server takes no new connection.
        let deadline = Instant::now() + OUTPUT_TIMEOUT;
        while TcpStream::connect(&address).is_ok() {
            assert!(
                Instant::now() < deadline,
                "the server still takes connections"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        connection.write_all(body).unwrap();
        let response = read_response(&mut connection);
        assert!(
            response.starts_with("HTTP/1.1 201"),
            "the request in flight when SIG{signal} came is answered:\n{response}"
        );
        assert!(response.contains("host_token"), "{response}");

        let (clean_exit, logs) = server.wait_for_exit();
        assert!(
            clean_exit,
            "after SIG{signal} the server exits cleanly:\n{logs}"
        );
    }
}

#[test]
fn a_bad_setting_stops_the_program_with_one_line_naming_it() {
    for (variable, value) in [
        ("GOLF_LOG", "yaml"),
        ("GOLF_BIND", "not-an-address"),
        ("DATABASE_URL", "mysql://localhost/golf"),
    ] {
        let output = golf_server().env(variable, value).output().unwrap();
        assert!(!output.status.success(), "{variable}={value} is refused");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(variable), "{stderr}");
    }
}

#[test]
fn openapi_subcommand_prints_the_committed_spec() {
    let output = golf_server().arg("openapi").output().unwrap();
    assert!(output.status.success());
    let printed: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let committed: serde_json::Value =
        serde_json::from_str(include_str!("../openapi/openapi.json")).unwrap();
    assert_eq!(printed, committed);
}

#[tokio::test]
async fn sigterm_ends_open_streams_at_once_and_their_token_is_never_logged() {
    // Streams open when SIGTERM comes end promptly (their clients resume elsewhere with
    // Last-Event-ID) instead of holding the server for its 30 s grace; a seat token sent as a
    // percent-encoded `token` parameter never reaches the logs.
    let (_dir, mut server) = serve_in_an_empty_directory();
    let address = server.address();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let base = format!("http://{address}/v1/games");
    let created: serde_json::Value = client
        .post(&base)
        .json(&serde_json::json!({"seats": 2}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = created["id"].as_str().unwrap().to_owned();
    let joined: serde_json::Value = client
        .post(format!("{base}/{id}/players"))
        .json(&serde_json::json!({"name": "Ada"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = joined["token"].as_str().unwrap().to_owned();
    // Names are case-sensitive: `TOKEN` is refused as an unknown parameter, and masked in logs.
    let refused = client
        .get(format!("{base}/{id}/stream?TOK%45N={token}"))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);
    let mut streams = Vec::new();
    for query in [format!("?%74oken={token}"), String::new()] {
        let response = client
            .get(format!("{base}/{id}/stream{query}"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{query}");
        streams.push(response);
    }
    // The first chunk (the log so far) shows each stream is being served.
    for stream in &mut streams {
        let first = tokio::time::timeout(OUTPUT_TIMEOUT, stream.chunk()).await;
        assert!(matches!(first, Ok(Ok(Some(_)))), "{first:?}");
    }
    let started = Instant::now();
    let (clean_exit, logs) = server.terminate();
    let stopped_in = started.elapsed();
    assert!(clean_exit, "SIGTERM stops the server cleanly:\n{logs}");
    assert!(
        stopped_in < Duration::from_secs(10),
        "open streams held the stop up for {stopped_in:?}"
    );
    for stream in &mut streams {
        let end = tokio::time::timeout(Duration::from_secs(5), stream.chunk()).await;
        assert!(matches!(end, Ok(Ok(None))), "the stream ends: {end:?}");
    }
    assert!(
        !logs.contains(&token),
        "the token parameter leaked:\n{logs}"
    );
    assert!(
        logs.contains("stream?%74oken=[redacted]") && logs.contains("stream?TOK%45N=[redacted]"),
        "streams are logged with their token masked:\n{logs}"
    );
}

#[test]
fn a_request_head_that_does_not_parse_writes_no_error_line() {
    // actix logs each request head it cannot parse: any client could fill the error log with
    // them, so they are DEBUG lines, not ERROR ones (off at the default level).
    let (_dir, mut server) = serve_in_an_empty_directory();
    let address = server.address();
    let heads: [&[u8]; 3] = [
        b"GET / HTTP/1.1\r\nHost: x\r\nBad\x01Header: y\r\n\r\n",
        b"GARBAGE\r\n\r\n",
        b"GET /\x1b[31m HTTP/1.1\r\nHost: x\r\n\r\n",
    ];
    for head in heads {
        let mut connection = TcpStream::connect(&address).unwrap();
        connection.write_all(head).unwrap();
        let answer = read_response(&mut connection);
        assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
        // The server closes the connection once it has logged what it could not parse.
        let mut rest = Vec::new();
        connection.read_to_end(&mut rest).unwrap();
    }
    let (clean_exit, logs) = server.terminate();
    assert!(clean_exit, "SIGTERM stops the server cleanly:\n{logs}");
    assert!(!logs.contains(" ERROR "), "an ERROR line:\n{logs}");
}

#[tokio::test]
async fn what_a_client_sends_reaches_the_text_log_escaped() {
    // A field name of a body, quoted in the error's message, holds a newline and an ANSI escape;
    // a path holds them percent-encoded: neither starts a line of its own in the text log nor
    // sends an escape sequence to the terminal that shows it.
    let (_dir, mut server) = serve_in_an_empty_directory();
    let address = server.address();
    let client = reqwest::Client::new();
    let forged = r#"{"seats": 2, "x\nERROR forged line\u001b[31m": 1}"#;
    let response = client
        .post(format!("http://{address}/v1/games"))
        .header("content-type", "application/json")
        .body(forged)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let response = client
        .get(format!(
            "http://{address}/v1/games/%1b[31m%0aERROR%20forged%20path"
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);

    let (clean_exit, logs) = server.terminate();
    assert!(clean_exit, "SIGTERM stops the server cleanly:\n{logs}");
    assert!(!logs.contains('\u{1b}'), "an escape character:\n{logs}");
    assert!(
        !logs.lines().any(|line| line.starts_with("ERROR forged")),
        "a forged line:\n{logs}"
    );
    assert!(
        logs.contains(r"x\nERROR forged line\u{1b}[31m"),
        "the field name, escaped:\n{logs}"
    );
    assert!(
        logs.contains("/v1/games/%1b[31m%0aERROR%20forged%20path"),
        "the path, as sent:\n{logs}"
    );
}

/// The obvious backup of the embedded database is a copy of `golf.db`: after SIGTERM it holds
/// every game, since a stopping server stops its jobs and closes its pool, which folds SQLite's
/// write-ahead log back into the file.
#[tokio::test]
async fn after_sigterm_golf_db_alone_holds_every_game() {
    use sqlx::Connection;

    const GAMES: usize = 23;
    let (dir, mut server) = serve_in_an_empty_directory();
    let address = server.address();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    for _ in 0..GAMES {
        let created = client
            .post(format!("http://{address}/v1/games"))
            .json(&serde_json::json!({"seats": 2, "holes": 1}))
            .send()
            .await
            .unwrap();
        assert_eq!(created.status(), 201);
    }

    let (clean_exit, logs) = server.terminate();
    assert!(clean_exit, "SIGTERM stops the server cleanly:\n{logs}");
    let wal = dir.path().join("golf.db-wal");
    let wal_bytes = std::fs::metadata(&wal).map_or(0, |meta| meta.len());
    assert_eq!(wal_bytes, 0, "the write-ahead log is folded in:\n{logs}");

    let backup = tempfile::tempdir().unwrap();
    std::fs::copy(dir.path().join("golf.db"), backup.path().join("golf.db")).unwrap();
    let url = format!("sqlite://{}", backup.path().join("golf.db").display());
    let mut copy = sqlx::SqliteConnection::connect(&url).await.unwrap();
    let (games,): (i64,) = sqlx::query_as("SELECT count(*) FROM games")
        .fetch_one(&mut copy)
        .await
        .unwrap();
    assert_eq!(
        games, GAMES as i64,
        "the copy of golf.db alone holds every game"
    );
}
