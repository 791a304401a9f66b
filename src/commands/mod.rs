//! The entry points: the command line of `golf-server` and its commands, `serve` (the default),
//! `openapi`, `simulate`, `check-db`, `verify`, `analyze`, `fill` and `distribute`.
//!
//! - `mod.rs`: parsing the command line, and running the chosen command;
//! - [`check_db`]: the audit of every stored game;
//! - [`verify`]: the offline audit of an exported log;
//! - [`analyze`]: the offline analysis of an exported finished game;
//! - [`simulate`]: bot games played in-process;
//! - [`fill`]: a large database, for measuring requests on it.

pub mod analyze;
pub mod check_db;
pub mod fill;
pub mod simulate;
pub mod verify;

use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};

use crate::api;
use crate::commands::simulate::{BotRating, SimulateOptions};
use crate::config::Config;
use crate::engine::{BotKind, RulesInput};
use crate::ratings::bot_account;
use crate::startup::Application;
use crate::store::{self, EventStore, PoolOptions};
use crate::telemetry::{self, LogOutput};

/// The command line of `golf-server`.
#[derive(Parser)]
#[command(version, about = "Six-card Golf over a REST/JSON API")]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the API (the default). Configured by GOLF_BIND, DATABASE_URL, GOLF_LOG, RUST_LOG.
    Serve,
    /// Print the OpenAPI document as pretty JSON.
    Openapi,
    /// Play bot games in-process (through the same rules engine as the server) and report
    /// games per second, mean totals, win shares and turns per hole.
    Simulate(SimulateArgs),
    /// Verify every stored game: its hash chain, and its log replayed through the rules against
    /// the stored projection. Exits with 1 if any game does not check out.
    CheckDb,
    /// Audit an exported game log (GET /v1/games/{id}/export) with no database and no network:
    /// the hash chain, the seed against the commitment, every deal and reshuffle, every move,
    /// score and winner re-decided. Exits 0 when it verifies, 1 when not, 2 when unreadable.
    Verify(VerifyArgs),
    /// Analyse a finished game from its export (GET /v1/games/{id}/export) with no database and no
    /// network: every decision's expected points lost and its label, each seat's summary, as
    /// GET /v1/games/{id}/analysis gives them. Exits 0 when analysed, 1 when the game is not
    /// finished, 2 when unreadable.
    Analyze(VerifyArgs),
    /// Fill the database named by DATABASE_URL with games written as the API writes them, to
    /// measure requests on a large database: one-hole games finished by bots (a tenth with an
    /// account's seat), games in progress of accounts, and waiting games in the lobby.
    Fill(FillArgs),
    /// Distribute the PostgreSQL database named by DATABASE_URL, the coordinator of a Citus
    /// cluster, after migrating it: the game tables by game, the account tables by account,
    /// seeks and challenges as reference tables (docs/SCALING.md). Says each step it takes; a
    /// second run has none left.
    Distribute,
}

#[derive(Args)]
struct FillArgs {
    /// Finished games.
    #[arg(long, default_value_t = 1_000_000)]
    finished: u64,
    /// Games in progress (an account's seat and an anonymous one, at their initial reveal).
    #[arg(long, default_value_t = 10_000)]
    playing: u64,
    /// Waiting public games, with one seat taken.
    #[arg(long, default_value_t = 10_000)]
    waiting: u64,
    /// Accounts that the games with account seats share.
    #[arg(long, default_value_t = 100)]
    accounts: u64,
    /// Games written at once.
    #[arg(long, default_value_t = 64)]
    concurrency: u64,
}

#[derive(Args)]
struct VerifyArgs {
    /// The exported NDJSON file, or - for standard input.
    file: String,
    /// Print the report as one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct SimulateArgs {
    /// Number of games.
    #[arg(long, default_value_t = 1000)]
    games: u64,
    /// Seats per game, 2 to 4.
    #[arg(long, default_value_t = 4)]
    seats: u8,
    /// Holes per game, 1 to 18.
    #[arg(long, default_value_t = 9)]
    holes: u8,
    /// Bots of seats 0, 1, ... (a shorter list repeats): greedy, random, expert.
    #[arg(long, value_delimiter = ',', default_value = "greedy")]
    bots: Vec<BotKind>,
    /// Rule options as JSON, e.g. '{"final_turns": true, "flip_after_discard": "optional"}'.
    #[arg(long, value_parser = parse_rules, default_value = "{}")]
    rules: RulesInput,
    /// Master seed: the same seed plays the same games.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Threads playing games side by side (default: one a core). The results do not depend on
    /// it; decision times are per thread.
    #[arg(long)]
    threads: Option<usize>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Store the bots' ratings these games give as the ratings of the built-in bots' accounts
    /// (`bot-greedy`, ...) in the database named by DATABASE_URL, so that the leaderboard
    /// starts with them. Their counts of rated games stay.
    #[arg(long)]
    seed_ratings: bool,
}

fn parse_rules(text: &str) -> Result<RulesInput, String> {
    serde_json::from_str(text).map_err(|error| format!("not rule options: {error}"))
}

/// Runs the command `cli` names (serving when it names none).
pub fn run(cli: Cli) -> ExitCode {
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => serve(),
        Command::Openapi => {
            println!("{}", api::openapi_json());
            ExitCode::SUCCESS
        }
        Command::Simulate(args) => simulate(args),
        Command::CheckDb => check_db(),
        Command::Verify(args) => verify::run(&args.file, args.json),
        Command::Analyze(args) => analyze::run(&args.file, args.json),
        Command::Fill(args) => fill(args),
        Command::Distribute => distribute(),
    }
}

fn fill(args: FillArgs) -> ExitCode {
    let Some((config, runtime)) = prepare(LogOutput::Stderr) else {
        return ExitCode::FAILURE;
    };
    let plan = fill::FillPlan {
        finished: args.finished,
        playing: args.playing,
        waiting: args.waiting,
        accounts: args.accounts,
        concurrency: args.concurrency,
    };
    runtime.block_on(async {
        let Some(store) = open_database(&config).await else {
            return ExitCode::FAILURE;
        };
        match fill::run(store, plan).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("golf-server: the fill stopped: {error}");
                ExitCode::FAILURE
            }
        }
    })
}

fn simulate(args: SimulateArgs) -> ExitCode {
    let options = SimulateOptions {
        games: args.games,
        seats: args.seats,
        holes: args.holes,
        bots: args.bots,
        rules: args.rules,
        seed: args.seed,
        threads: args.threads.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        }),
    };
    let report = simulate::run(&options);
    if let Ok(report) = &report
        && args.seed_ratings
        && !seed_ratings(&report.ratings)
    {
        return ExitCode::FAILURE;
    }
    match report {
        Ok(report) if args.json => match serde_json::to_string_pretty(&report) {
            Ok(json) => {
                println!("{json}");
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("golf-server: {error}");
                ExitCode::FAILURE
            }
        },
        Ok(report) => {
            print!("{}", report.render_text());
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("golf-server: {error}");
            ExitCode::FAILURE
        }
    }
}

/// The store at `DATABASE_URL` (migrated), or `None` after saying why it cannot be opened. A
/// command serves no stream: it does not listen for other instances' changes.
async fn open_database(config: &Config) -> Option<Arc<dyn EventStore>> {
    let options = PoolOptions {
        listen: false,
        ..config.pool_options()
    };
    match store::connect(&config.database_url, &options).await {
        Ok(store) => Some(store),
        Err(error) => {
            eprintln!("golf-server: cannot open the database named by DATABASE_URL: {error}");
            None
        }
    }
}

/// Stores `ratings` as the ratings of the bots' accounts; whether it did.
fn seed_ratings(ratings: &[BotRating]) -> bool {
    let Some((config, runtime)) = prepare(LogOutput::Stderr) else {
        return false;
    };
    runtime.block_on(async {
        let Some(store) = open_database(&config).await else {
            return false;
        };
        for rated in ratings {
            let account = bot_account(rated.bot.name());
            match store.ratings().set_rating(&account, rated.rating).await {
                Ok(true) => eprintln!("golf-server: seeded the rating of {account}"),
                Ok(false) => {
                    eprintln!("golf-server: no account {account} in this database");
                    return false;
                }
                Err(error) => {
                    eprintln!("golf-server: {error}");
                    return false;
                }
            }
        }
        true
    })
}

fn check_db() -> ExitCode {
    let Some((config, runtime)) = prepare(LogOutput::Stderr) else {
        return ExitCode::FAILURE;
    };
    runtime.block_on(async {
        let Some(store) = open_database(&config).await else {
            return ExitCode::FAILURE;
        };
        match check_db::check_database(store.as_ref()).await {
            Ok(report) => {
                for problem in &report.problems {
                    println!("game {}: {}", problem.game_id, problem.problem);
                }
                println!(
                    "{} games, {} log entries checked: {} problems",
                    report.games,
                    report.entries,
                    report.problems.len()
                );
                if report.problems.is_empty() {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::FAILURE
                }
            }
            Err(error) => {
                eprintln!("golf-server: {error}");
                ExitCode::FAILURE
            }
        }
    })
}

/// Reads the configuration, starts logging to `logs` and builds the async runtime; on failure
/// prints one line and returns `None`.
fn distribute() -> ExitCode {
    let Some((config, runtime)) = prepare(LogOutput::Stderr) else {
        return ExitCode::FAILURE;
    };
    match runtime.block_on(store::distribute::distribute(&config.database_url)) {
        Ok(steps) if steps.is_empty() => {
            println!("every table is distributed already");
            ExitCode::SUCCESS
        }
        Ok(steps) => {
            for step in steps {
                println!("{step}");
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("golf-server distribute: {error}");
            ExitCode::FAILURE
        }
    }
}

fn prepare(logs: LogOutput) -> Option<(Config, tokio::runtime::Runtime)> {
    let config = match Config::from_env() {
        Ok(config) => config,
        Err(error) => {
            eprintln!("golf-server: {error}");
            return None;
        }
    };
    telemetry::init(config.log_format, &config.log_filter, logs);
    match tokio::runtime::Runtime::new() {
        Ok(runtime) => Some((config, runtime)),
        Err(error) => {
            eprintln!("golf-server: cannot start the async runtime: {error}");
            None
        }
    }
}

fn serve() -> ExitCode {
    let Some((config, runtime)) = prepare(LogOutput::Stdout) else {
        return ExitCode::FAILURE;
    };
    runtime.block_on(async {
        let app = match Application::build(&config).await {
            Ok(app) => app,
            Err(error) => {
                eprintln!("golf-server: {error:#}");
                return ExitCode::FAILURE;
            }
        };
        tracing::info!(address = %app.address(), "listening on http://{}", app.address());
        match app.run_until_stopped().await {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("golf-server: {error}");
                ExitCode::FAILURE
            }
        }
    })
}
