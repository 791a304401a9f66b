//! The `golf-server` binary: parses the command line and runs the chosen command.

use std::process::ExitCode;

use clap::Parser;
use golf_server::commands::{Cli, run};

fn main() -> ExitCode {
    run(Cli::parse())
}
