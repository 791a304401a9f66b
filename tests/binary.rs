//! The `golf-server` binary as a newcomer runs it: no setup, embedded SQLite, clean logs.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

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
    output: String,
}

impl Server {
    fn spawn(mut command: Command) -> Server {
        Server {
            child: command
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("the binary starts"),
            output: String::new(),
        }
    }

    /// Reads the output until the line that names the address the server listens on.
    fn address(&mut self) -> String {
        let stdout = self.child.stdout.as_mut().expect("piped stdout");
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        loop {
            line.clear();
            let read = reader.read_line(&mut line).unwrap_or(0);
            assert!(read > 0, "the server exited before it listened");
            self.output.push_str(&line);
            if let Some(rest) = line.split("listening on http://").nth(1) {
                return rest
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_owned();
            }
        }
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
        for stream in [
            self.child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn Read>),
            self.child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn Read>),
        ]
        .into_iter()
        .flatten()
        {
            let mut rest = String::new();
            BufReader::new(stream)
                .read_to_string(&mut rest)
                .expect("read output");
            self.output.push_str(&rest);
        }
        (status.success(), self.output.clone())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn serves_on_embedded_sqlite_with_no_setup_and_logs_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = golf_server();
    command
        .current_dir(dir.path())
        .env("GOLF_BIND", "127.0.0.1:0");
    let mut server = Server::spawn(command);
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

#[test]
fn sigterm_and_sigint_let_an_in_flight_request_finish() {
    for signal in ["TERM", "INT"] {
        let dir = tempfile::tempdir().unwrap();
        let mut command = golf_server();
        command
            .current_dir(dir.path())
            .env("GOLF_BIND", "127.0.0.1:0");
        let mut server = Server::spawn(command);
        let address = server.address();

        // A request whose body is still on its way when the signal arrives.
        let body = br#"{"seats": 2, "holes": 1}"#;
        let (first, rest) = body.split_at(8);
        let mut connection = TcpStream::connect(&address).unwrap();
        connection
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        write!(
            connection,
            "POST /v1/games HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .unwrap();
        connection.write_all(first).unwrap();
        connection.flush().unwrap();
        std::thread::sleep(Duration::from_millis(300));

        server.signal(signal);
        std::thread::sleep(Duration::from_millis(300));
        connection.write_all(rest).unwrap();
        let mut response = String::new();
        connection.read_to_string(&mut response).unwrap();
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
