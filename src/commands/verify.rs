//! `golf-server verify FILE|-`: audits an exported log with no database and no network, and
//! prints the report (text, or JSON with `--json`). Exit 0 when it verifies, 1 when it does not,
//! 2 when the input cannot be read.

use std::io::Read;
use std::process::ExitCode;

use crate::audit::ndjson::audit_text;

/// Reads the log at `path` (`-` for standard input), audits it and prints the report.
pub fn run(path: &str, json: bool) -> ExitCode {
    let text = match read(path) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("golf-server verify: cannot read {path}: {error}");
            return ExitCode::from(2);
        }
    };
    let report = audit_text(&text);
    if json {
        match serde_json::to_string_pretty(&report) {
            Ok(json) => println!("{json}"),
            Err(error) => {
                eprintln!("golf-server verify: {error}");
                return ExitCode::from(2);
            }
        }
    } else {
        print!("{}", report.render_text());
    }
    if report.verified {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The whole input as text: bytes that are not UTF-8 make it unreadable, since replacing them
/// would hide a change.
pub fn read(path: &str) -> std::io::Result<String> {
    let mut bytes = Vec::new();
    if path == "-" {
        std::io::stdin().read_to_end(&mut bytes)?;
    } else {
        bytes = std::fs::read(path)?;
    }
    String::from_utf8(bytes)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"))
}
