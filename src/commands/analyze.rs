//! `golf-server analyze FILE|-`: the analysis of a finished game from its export, with no
//! database and no network: the same numbers as `GET /v1/games/{id}/analysis` (text, or the
//! endpoint's JSON with `--json`). Exit 0 when analysed, 1 when the game is not finished, 2 when
//! the input cannot be read.

use std::fmt::Write as _;
use std::process::ExitCode;

use crate::audit::ndjson::logged_events;
use crate::commands::verify::read;
use crate::engine::analysis::ANALYSIS_SAMPLES;
use crate::engine::{Analysis, analyze};

/// Reads the export at `path` (`-` for standard input), analyses it and prints the analysis.
pub fn run(path: &str, json: bool) -> ExitCode {
    let log = match read(path)
        .map_err(|e| e.to_string())
        .and_then(|t| logged_events(&t))
    {
        Ok(log) => log,
        Err(error) => {
            eprintln!("golf-server analyze: cannot read {path}: {error}");
            return ExitCode::from(2);
        }
    };
    let analysis = match analyze(&log, ANALYSIS_SAMPLES) {
        Ok(analysis) => analysis,
        Err(error) => {
            eprintln!("golf-server analyze: {error}");
            return ExitCode::FAILURE;
        }
    };
    if json {
        match serde_json::to_string_pretty(&analysis) {
            Ok(text) => println!("{text}"),
            Err(error) => {
                eprintln!("golf-server analyze: {error}");
                return ExitCode::from(2);
            }
        }
    } else {
        print!("{}", render_text(&analysis));
    }
    ExitCode::SUCCESS
}

/// The analysis for people: each seat's summary, then every labelled decision.
pub fn render_text(analysis: &Analysis) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "engine: {}", analysis.engine);
    let _ = writeln!(out, "seat  decisions  mean loss  mistakes  blunders");
    for seat in &analysis.seats {
        let _ = writeln!(
            out,
            "{:<4}  {:>9}  {:>9.2}  {:>8}  {:>8}",
            seat.seat, seat.decisions, seat.mean_loss, seat.mistakes, seat.blunders
        );
    }
    for decision in analysis.decisions.iter().filter(|d| d.label.is_some()) {
        let label = serde_json::to_value(decision.label).unwrap_or_default();
        let _ = writeln!(
            out,
            "seq {:>4}  seat {}  {}: played {} ({:.2}), best {} ({:.2}), loss {:.2}",
            decision.seq,
            decision.seat,
            label.as_str().unwrap_or_default(),
            serde_json::to_string(&decision.played).unwrap_or_default(),
            decision.expected_played,
            serde_json::to_string(&decision.best).unwrap_or_default(),
            decision.expected_best,
            decision.loss
        );
    }
    out
}
