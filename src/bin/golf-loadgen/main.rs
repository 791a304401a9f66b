//! golf-loadgen: plays many games of Golf at once over HTTP against a running golf-server and
//! reports moves, view reads and games per second, latency percentiles and errors by status.
//!
//! `client` sends the requests (retrying through a server restart), `picker` chooses each move
//! from the last answer, `modes` are the ways of playing (`--mode`, `--resume`), `stats` counts
//! and reports.

mod client;
mod deliveries;
mod modes;
mod picker;
mod stats;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use tokio::sync::Barrier;
use tokio::task::JoinHandle;
use uuid::Uuid;

use client::{Client, Game, Options};
use modes::Plan;
use stats::{Check, Report};

// The load generator shares the machine with the server it measures: every cycle it spends is
// taken from the server. glibc's allocator was a tenth of its time, for the JSON of the answers.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Plays games of Golf concurrently against a running golf-server and reports its throughput.
///
/// A server holds each client to budgets of creations and joins and of audits by default (60 and
/// 600 a minute): start the server to be measured with GOLF_RATE_LIMIT_PER_MIN=0 and
/// GOLF_READ_RATE_LIMIT_PER_MIN=0, as scripts/bench does. A refused request is sent again after
/// its Retry-After.
#[derive(Debug, Parser)]
#[command(name = "golf-loadgen", version)]
struct Args {
    /// The server's base URL.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    url: String,
    /// What to do: play whole games, one task per game (moves); only read seats' views of games
    /// in progress (views); one client per seat following its game's stream (players); or only
    /// hold every seat's stream open, idle, for the duration (streams).
    #[arg(long, value_enum, default_value_t = Mode::Moves)]
    mode: Mode,
    /// Games played at once.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    games: u32,
    /// Seats of each game.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(2..=4))]
    seats: u8,
    /// Holes of each game.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=18))]
    holes: u8,
    /// Views mode: play each game into this hole (past its initial reveal) before reading its
    /// views, to compare the cost of a view late in a game with one early in it. At most --holes.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=18))]
    view_hole: u8,
    /// Seconds to run (views and streams modes: once every game is set up). Default 10 unless
    /// --total-games or --resume is given.
    #[arg(long)]
    duration: Option<f64>,
    /// Stop once this many games were started and played to their end.
    #[arg(long)]
    total_games: Option<u64>,
    /// Print the report as JSON on stdout (the summary goes to stderr).
    #[arg(long)]
    json: bool,
    /// After the run, check that every finished game's audit says `verified: true`; exit 1 if not.
    #[arg(long)]
    check: bool,
    /// Write one NDJSON line per acknowledged move: `{game, seat, seq, move}` (seq: the version
    /// after it).
    #[arg(long, value_name = "FILE")]
    acked_log: Option<PathBuf>,
    /// Write one NDJSON line per game set up: `{game, tokens}`, for `--resume`.
    #[arg(long, value_name = "FILE")]
    games_file: Option<PathBuf>,
    /// Play the games of a `--games-file` to their ends (moves mode), instead of creating games.
    #[arg(long, value_name = "FILE")]
    resume: Option<PathBuf>,
    /// Send an `Idempotency-Key` with every move and creation, so that a retry after a broken
    /// connection never applies a move twice and gets the first answer.
    #[arg(long)]
    idempotency_keys: bool,
    /// Sign up one account per seat of each concurrent game before the run, and take every seat
    /// with its account's token, so that each write also keeps the accounts' games and events.
    #[arg(long)]
    accounts: bool,
    /// Players mode: each seat thinks this many milliseconds before each move, `MIN-MAX` (the
    /// same for the same game, seat and move in every run).
    #[arg(long, value_name = "MIN-MAX", value_parser = parse_think)]
    think_ms: Option<(u64, u64)>,
    /// Start the concurrent games one after another, evenly over this many seconds, as players
    /// who arrive over time rather than all in the same instant (moves, players and streams
    /// modes).
    #[arg(long, value_name = "SECONDS")]
    ramp_s: Option<f64>,
    /// Seconds one request may take before it counts as a transport error and is retried.
    #[arg(long, default_value_t = 30.0)]
    timeout: f64,
    /// No progress line on stderr.
    #[arg(long)]
    quiet: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Mode {
    Moves,
    Views,
    Players,
    Streams,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Err(problem) = validate(&args) {
        eprintln!("golf-loadgen: {problem}");
        return ExitCode::from(2);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("the async runtime starts");
    match runtime.block_on(run(&args)) {
        Ok(code) => code,
        Err(problem) => {
            eprintln!("golf-loadgen: {problem}");
            ExitCode::from(2)
        }
    }
}

/// `--think-ms`: `MIN-MAX` milliseconds, MIN at most MAX.
fn parse_think(text: &str) -> Result<(u64, u64), String> {
    let (min, max) = text
        .split_once('-')
        .ok_or("expected MIN-MAX milliseconds, such as 1000-3000")?;
    let parse = |n: &str| n.trim().parse::<u64>().map_err(|e| format!("{n:?}: {e}"));
    let (min, max) = (parse(min)?, parse(max)?);
    if min > max {
        return Err(format!("{min} is more than {max}"));
    }
    Ok((min, max))
}

/// Whether `mode` sets every game up before it measures.
fn set_up_first(mode: Mode) -> bool {
    matches!(mode, Mode::Views | Mode::Streams)
}

fn validate(args: &Args) -> Result<(), String> {
    let positive = |value: f64| value.is_finite() && value > 0.0;
    if args.duration.is_some_and(|seconds| !positive(seconds)) {
        return Err("--duration must be a positive number of seconds".to_owned());
    }
    if args.ramp_s.is_some_and(|seconds| !positive(seconds)) {
        return Err("--ramp-s must be a positive number of seconds".to_owned());
    }
    if args.ramp_s.is_some() && (args.mode == Mode::Views || args.resume.is_some()) {
        return Err("--ramp-s is for games created in moves, players and streams modes".to_owned());
    }
    if !positive(args.timeout) {
        return Err("--timeout must be a positive number of seconds".to_owned());
    }
    if args.view_hole > args.holes {
        return Err("--view-hole must be a hole of the game: at most --holes".to_owned());
    }
    if set_up_first(args.mode) && (args.total_games.is_some() || args.resume.is_some()) {
        return Err("views and streams modes run for a --duration only".to_owned());
    }
    if args.resume.is_some() && (args.mode != Mode::Moves || args.total_games.is_some()) {
        return Err("--resume plays the file's games in moves mode".to_owned());
    }
    if args.think_ms.is_some() && args.mode != Mode::Players {
        return Err(
            "--think-ms is for players mode, whose seats are clients of their own".to_owned(),
        );
    }
    if args.resume.is_some() && args.accounts {
        return Err("--resume plays the file's games with the seat tokens it holds".to_owned());
    }
    Ok(())
}

async fn run(args: &Args) -> Result<ExitCode, String> {
    let client = Arc::new(Client::new(&client_options(args))?);
    let resumed = args.resume.as_deref().map(read_games).transpose()?;
    let duration = args
        .duration
        .or((args.total_games.is_none() && resumed.is_none()).then_some(10.0))
        .map(Duration::from_secs_f64);
    let progress = (!args.quiet).then(|| tokio::spawn(stats::progress(client.stats.clone())));

    let accounts = if args.accounts {
        sign_up(&client, args).await?
    } else {
        Vec::new()
    };
    let workers = spawn_workers(args, &client, resumed, accounts);
    if !set_up_first(args.mode) {
        client.stats.start_measuring();
    }
    let elapsed = time_workers(&client, workers, duration).await?;
    client.stop.cancel();
    if let Some(progress) = progress {
        progress.abort();
    }
    client.flush();

    let mut report = client.stats.report(elapsed);
    if args.check {
        report.check = Some(check(&client).await);
    }
    print_report(args, &report);
    Ok(exit_code(&report))
}

fn client_options(args: &Args) -> Options<'_> {
    Options {
        url: &args.url,
        timeout: Duration::from_secs_f64(args.timeout),
        idempotency_keys: args.idempotency_keys,
        acked_log: args.acked_log.as_deref(),
        games_file: args.games_file.as_deref(),
    }
}

/// One worker per concurrent game (`--games`), playing the way `--mode` or `--resume` says.
fn spawn_workers(
    args: &Args,
    client: &Arc<Client>,
    resumed: Option<VecDeque<Game>>,
    accounts: Vec<Arc<[String]>>,
) -> Vec<JoinHandle<()>> {
    let plan = Arc::new(Plan {
        seats: args.seats,
        holes: args.holes,
        view_hole: args.view_hole,
        left: args.total_games.map(AtomicU64::new),
        think_ms: args.think_ms,
    });
    let ready = Arc::new(Barrier::new(args.games as usize));
    let resumed = resumed.map(|games| Arc::new(Mutex::new(games)));
    (0..args.games as usize)
        .map(|worker| {
            let (client, plan) = (client.clone(), plan.clone());
            let accounts = accounts
                .get(worker)
                .cloned()
                .unwrap_or_else(|| Arc::new([]));
            let start = Duration::from_secs_f64(
                args.ramp_s.unwrap_or(0.0) * worker as f64 / f64::from(args.games),
            );
            match (&resumed, args.mode) {
                (Some(games), _) => tokio::spawn(modes::resume(client, games.clone())),
                (None, Mode::Moves) => {
                    tokio::spawn(after(start, modes::moves(client, plan, accounts)))
                }
                (None, Mode::Views) => {
                    tokio::spawn(modes::views(client, plan, accounts, ready.clone()))
                }
                (None, Mode::Players) => {
                    tokio::spawn(after(start, modes::players(client, plan, accounts)))
                }
                (None, Mode::Streams) => tokio::spawn(after(
                    start,
                    modes::streams(client, plan, accounts, ready.clone()),
                )),
            }
        })
        .collect()
}

/// `work`, begun after `start` (`--ramp-s`).
async fn after(start: Duration, work: impl Future<Output = ()>) {
    tokio::time::sleep(start).await;
    work.await;
}

/// `--accounts`: one account per seat of each worker's games, signed up a few dozen at a time
/// under names of this run's own, and their tokens by worker.
async fn sign_up(client: &Arc<Client>, args: &Args) -> Result<Vec<Arc<[String]>>, String> {
    let run = &Uuid::new_v4().simple().to_string()[..8];
    let names: Vec<String> = (0..u64::from(args.games) * u64::from(args.seats))
        .map(|index| format!("load-{run}-{index}"))
        .collect();
    let mut tokens = Vec::with_capacity(names.len());
    for chunk in names.chunks(32) {
        let signed: Vec<_> = chunk
            .iter()
            .map(|name| {
                let (client, name) = (client.clone(), name.clone());
                tokio::spawn(async move { client.sign_up(&name).await })
            })
            .collect();
        for answer in signed {
            let token = answer
                .await
                .map_err(|error| format!("a sign-up failed: {error}"))?;
            tokens.push(token.ok_or("the server refused to sign an account up")?);
        }
    }
    Ok(tokens
        .chunks(usize::from(args.seats))
        .map(Arc::from)
        .collect())
}

/// Waits for the workers to end, stopping them once `duration` has passed since they began
/// measuring, and returns how long they measured.
async fn time_workers(
    client: &Client,
    workers: Vec<JoinHandle<()>>,
    duration: Option<Duration>,
) -> Result<Duration, String> {
    let started = wait_until_measuring(client).await;
    if let Some(duration) = duration {
        let stop = client.stop.clone();
        tokio::spawn(async move {
            tokio::time::sleep(duration).await;
            stop.cancel();
        });
    }
    for worker in workers {
        worker
            .await
            .map_err(|error| format!("a worker failed: {error}"))?;
    }
    Ok(started.elapsed())
}

/// The report on stdout: the summary a person reads, or with `--json` the JSON (and the summary
/// on stderr).
fn print_report(args: &Args, report: &Report) {
    if args.json {
        let json = serde_json::to_string_pretty(report).expect("a report is JSON");
        println!("{json}");
        eprint!("{}", report.human());
    } else {
        print!("{}", report.human());
    }
}

/// Success when the run did something and every audit checked (`--check`) was verified.
fn exit_code(report: &Report) -> ExitCode {
    let checked_out = report.check.is_none_or(|check| check.failed == 0);
    let did_something =
        report.moves_acked + report.views_read + report.games_finished + report.streams_opened > 0;
    if checked_out && did_something {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Waits until the workers are measuring (views and streams modes set their games up first) and
/// returns when that began.
async fn wait_until_measuring(client: &Client) -> Instant {
    while !client.stats.is_measuring() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Instant::now()
}

/// The games of a `--games-file`.
fn read_games(path: &Path) -> Result<VecDeque<Game>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .enumerate()
        .map(|(number, line)| {
            serde_json::from_str(line)
                .map_err(|error| format!("{} line {}: {error}", path.display(), number + 1))
        })
        .collect()
}

/// Reads the audit of every game that finished, a few at a time.
async fn check(client: &Arc<Client>) -> Check {
    let ids = client.stats.finished_ids();
    let mut result = Check::default();
    for batch in ids.chunks(16) {
        let audits: Vec<_> = batch
            .iter()
            .map(|id| {
                let (client, id) = (client.clone(), id.clone());
                tokio::spawn(async move { client.verified(&id).await })
            })
            .collect();
        for audit in audits {
            result.checked += 1;
            if audit.await.unwrap_or(false) {
                result.verified += 1;
            } else {
                result.failed += 1;
            }
        }
    }
    result
}
