//! The `golf-server` binary: parses the command line and runs the chosen command.

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use golf_server::config::Config;
use golf_server::engine::{BotKind, RulesInput};
use golf_server::simulate::SimulateOptions;
use golf_server::startup::Application;
use golf_server::{api, telemetry};

#[derive(Parser)]
#[command(version, about = "Six-card Golf over a REST/JSON API")]
struct Cli {
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
    /// Bots of seats 0, 1, ... (a shorter list repeats): greedy, random.
    #[arg(long, value_delimiter = ',', default_value = "greedy")]
    bots: Vec<BotKind>,
    /// Rule options as JSON, e.g. '{"final_turns": true, "flip_after_discard": "optional"}'.
    #[arg(long, value_parser = parse_rules, default_value = "{}")]
    rules: RulesInput,
    /// Master seed: the same seed plays the same games.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

fn parse_rules(text: &str) -> Result<RulesInput, String> {
    serde_json::from_str(text).map_err(|error| format!("not rule options: {error}"))
}

fn main() -> ExitCode {
    match Cli::parse().command.unwrap_or(Command::Serve) {
        Command::Serve => serve(),
        Command::Openapi => {
            println!("{}", api::openapi_json());
            ExitCode::SUCCESS
        }
        Command::Simulate(args) => simulate(args),
    }
}

fn simulate(args: SimulateArgs) -> ExitCode {
    let options = SimulateOptions {
        games: args.games,
        seats: args.seats,
        holes: args.holes,
        bots: args.bots,
        rules: args.rules,
        seed: args.seed,
    };
    match golf_server::simulate::run(&options) {
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

fn serve() -> ExitCode {
    let config = match Config::from_env() {
        Ok(config) => config,
        Err(error) => {
            eprintln!("golf-server: {error}");
            return ExitCode::FAILURE;
        }
    };
    telemetry::init(config.log_format, &config.log_filter);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("golf-server: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
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
