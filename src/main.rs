//! The `golf-server` binary: parses the command line and runs the chosen command.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use golf_server::config::Config;
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
}

fn main() -> ExitCode {
    match Cli::parse().command.unwrap_or(Command::Serve) {
        Command::Serve => serve(),
        Command::Openapi => {
            println!("{}", api::openapi_json());
            ExitCode::SUCCESS
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
