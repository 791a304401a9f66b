//! The `golf-server` binary: parses the command line and runs the chosen command.

use std::process::ExitCode;

use clap::Parser;
use golf_server::commands::{Cli, run};

// glibc's allocator spent about a third of the server's CPU time under load (the bench's profile,
// docs/SCALING.md); mimalloc's per-thread heaps cost much less for the many short-lived JSON trees
// of a request.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    run(Cli::parse())
}
