//! A throwaway PostgreSQL cluster that a test may stop and start at will, so that the shared
//! server is never touched: `initdb` in a temporary directory, a port of 18750-18799, run as the
//! `postgres` user since `initdb` and `pg_ctl` refuse to run as root.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Command;

/// Where the PostgreSQL programs may be, first found first used.
const PROGRAM_DIRECTORIES: &[&str] = &["/usr/local/bin", "/usr/lib/postgresql"];

/// The ports a throwaway cluster may listen on.
const PORTS: std::ops::RangeInclusive<u16> = 18750..=18799;

/// A running cluster of its own; stopped, and its files removed, when dropped.
pub struct Cluster {
    dir: tempfile::TempDir,
    programs: PathBuf,
    /// Whether the programs run through `runuser -u postgres` (the test runs as root).
    as_root: bool,
    /// Settings added to the server's command line.
    settings: String,
    pub port: u16,
}

/// The directory holding both `initdb` and `pg_ctl`, the newest version first.
fn programs() -> Option<PathBuf> {
    let mut candidates = vec![PathBuf::from(PROGRAM_DIRECTORIES[0])];
    if let Ok(versions) = std::fs::read_dir(PROGRAM_DIRECTORIES[1]) {
        let mut versions: Vec<PathBuf> = versions
            .filter_map(Result::ok)
            .map(|version| version.path().join("bin"))
            .collect();
        versions.sort();
        candidates.extend(versions.into_iter().rev());
    }
    candidates
        .into_iter()
        .find(|dir| dir.join("initdb").exists() && dir.join("pg_ctl").exists())
}

/// The name of the user the test runs as.
fn user() -> String {
    let output = Command::new("id").arg("-un").output().expect("id runs");
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// A port of [`PORTS`] that nothing listens on now.
fn free_port() -> u16 {
    PORTS
        .into_iter()
        .find(|port| TcpListener::bind(("127.0.0.1", *port)).is_ok())
        .expect("a free port in 18750-18799")
}

impl Cluster {
    /// Creates and starts a cluster (trust authentication, superuser `postgres`), or says why it
    /// cannot and returns `None` when the test runs neither as root nor as `postgres`. Missing
    /// programs fail the test: CI must not skip it unnoticed.
    pub fn start() -> Option<Cluster> {
        Self::start_with("")
    }

    /// [`Cluster::start`] with `settings` (`-c name=value ...`) added to the server's command
    /// line.
    pub fn start_with(settings: &str) -> Option<Cluster> {
        let programs = programs().unwrap_or_else(|| {
            panic!("no initdb and pg_ctl in {PROGRAM_DIRECTORIES:?} (install PostgreSQL's server)")
        });
        let as_root = match user().as_str() {
            "root" => true,
            "postgres" => false,
            other => {
                eprintln!(
                    "skipped: initdb and pg_ctl must run as postgres, and the test runs as \
                     {other}, which can neither be postgres nor become it"
                );
                return None;
            }
        };
        let dir = tempfile::tempdir().expect("a temporary directory");
        if as_root {
            let owned = Command::new("chown")
                .args(["postgres:", &dir.path().display().to_string()])
                .status()
                .expect("chown runs");
            assert!(owned.success(), "the cluster's directory goes to postgres");
        }
        let cluster = Cluster {
            dir,
            programs,
            as_root,
            settings: settings.to_owned(),
            port: free_port(),
        };
        let data = cluster.data();
        cluster.run(
            "initdb",
            &[
                "-D",
                &data,
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
                "--no-instructions",
            ],
        );
        cluster.start_again();
        Some(cluster)
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    /// `program` of the cluster's PostgreSQL, to run as the `postgres` user.
    fn command(&self, program: &str) -> Command {
        let path = self.programs.join(program);
        let mut command = if self.as_root {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(path);
            command
        } else {
            Command::new(path)
        };
        command.current_dir(self.dir.path());
        command
    }

    /// Runs `program` of the cluster's PostgreSQL as the `postgres` user; panics with its output
    /// when it fails.
    fn run(&self, program: &str, args: &[&str]) {
        let output = self
            .command(program)
            .args(args)
            .output()
            .unwrap_or_else(|error| panic!("{program} runs: {error}"));
        assert!(
            output.status.success(),
            "{program} {args:?} failed:\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// The URL of the cluster's `postgres` database.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Starts the (stopped) cluster and waits until it accepts connections.
    pub fn start_again(&self) {
        // Its socket in its own directory, so that it never meets the shared server's.
        let options = format!(
            "-p {} -c listen_addresses=127.0.0.1 -k {} -c fsync=off {}",
            self.port,
            self.dir.path().display(),
            self.settings
        );
        let log = self.dir.path().join("log").display().to_string();
        let data = self.data();
        self.run(
            "pg_ctl",
            &["-D", &data, "-o", &options, "-l", &log, "-w", "start"],
        );
    }

    /// Stops the cluster at once, as a crash would: every connection is cut, nothing is shut
    /// down cleanly (the next start recovers from the WAL).
    pub fn stop_immediately(&self) {
        let data = self.data();
        self.run("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"]);
    }

    /// The server's log, for failure messages.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.data();
        // Already stopped is fine: only a running cluster must not outlive the test.
        let _ = self
            .command("pg_ctl")
            .args(["-D", &data, "-m", "immediate", "-w", "stop"])
            .output();
    }
}
