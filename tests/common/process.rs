//! The `golf-server` binary run as a process of its own, for tests that kill it, cut its
//! database off, or run two of it on one database.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{TestApp, TestDatabase};

/// How long a test waits for a server to say where it listens.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a client waits for any answer: longer than any request may rightly take here, so
/// that a request that hangs is seen as one.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(15);

/// A running `golf-server serve` on 127.0.0.1; killed when dropped, so a failing test leaves no
/// server behind.
pub struct ServerProcess {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub address: String,
    /// Everything it printed so far (standard output and error), for failure messages.
    output: Arc<Mutex<String>>,
}

impl ServerProcess {
    /// Starts the binary on `database_url` and a free port, with `settings` (environment
    /// variables) on top of quiet logs, and waits until it listens.
    pub fn start(database_url: &str, settings: &[(&str, &str)]) -> ServerProcess {
        let mut command = Command::new(env!("CARGO_BIN_EXE_golf-server"));
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("DATABASE_URL", database_url)
            .env("GOLF_BIND", "127.0.0.1:0")
            .env("RUST_LOG", "warn,golf_server::commands=info")
            // Its clients, golf-loadgen among them, all come from 127.0.0.1.
            .env("GOLF_RATE_LIMIT_PER_MIN", "0")
            .env("GOLF_READ_RATE_LIMIT_PER_MIN", "0")
            .envs(settings.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("the binary starts");
        let output = Arc::new(Mutex::new(String::new()));
        let (sender, lines) = mpsc::channel();
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        for pipe in [Box::new(stdout) as Box<dyn Read + Send>, Box::new(stderr)] {
            let (sender, output) = (sender.clone(), Arc::clone(&output));
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    let mut output = output.lock().unwrap();
                    output.push_str(&line);
                    output.push('\n');
                    // Nobody listens once the address is known.
                    let _ = sender.send(line);
                }
            });
        }
        drop(sender);
        let deadline = Instant::now() + START_TIMEOUT;
        let address = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(rest) = line.split("listening on http://").nth(1) {
                        let address = rest.split_whitespace().next().unwrap_or_default();
                        break format!("http://{address}");
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!(
                    "the server did not listen within {START_TIMEOUT:?}:\n{}",
                    output.lock().unwrap()
                ),
                Err(RecvTimeoutError::Disconnected) => panic!(
                    "the server exited before it listened:\n{}",
                    output.lock().unwrap()
                ),
            }
        };
        ServerProcess {
            child,
            address,
            output,
        }
    }

    /// A [`TestApp`] that sends its requests to this server (over `database`, which it does not
    /// own), with a client that gives up after [`CLIENT_TIMEOUT`].
    pub fn app(&self, database: &TestDatabase) -> TestApp {
        TestApp {
            address: self.address.clone(),
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(CLIENT_TIMEOUT)
                .build()
                .expect("HTTP client"),
            database: database.shared(),
        }
    }

    /// Kills the server with SIGKILL (no chance to finish anything) and waits until it is gone.
    pub fn kill(&mut self) {
        self.child.kill().expect("SIGKILL reaches the server");
        self.child.wait().expect("the killed server is reaped");
    }

    /// What the server printed so far.
    pub fn output(&self) -> String {
        self.output.lock().unwrap().clone()
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `golf-server check-db` on `database_url`; returns whether it passed and what it printed.
pub fn check_db(database_url: &str) -> (bool, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_golf-server"))
        .arg("check-db")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("DATABASE_URL", database_url)
        .env("RUST_LOG", "warn")
        .output()
        .expect("check-db runs");
    let printed = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    (output.status.success(), printed)
}
