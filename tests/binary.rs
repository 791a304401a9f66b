//! The `golf-server` binary as a newcomer runs it: no setup, embedded SQLite, clean logs.

use std::io::{BufRead, BufReader, Read};
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

    /// Sends SIGTERM and returns whether the server exited cleanly, with everything it printed.
    fn terminate(&mut self) -> (bool, String) {
        Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("send SIGTERM");
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
