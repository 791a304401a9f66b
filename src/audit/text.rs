//! The short human report of an audit: the game, one line per check, then the verdict.

use std::fmt::Write;

use super::{AuditReport, Check, CheckOutcome, Outcome};

/// Renders `report` as a few lines of text.
pub fn render(report: &AuditReport) -> String {
    let mut out = header(report);
    for outcome in &report.checks {
        out += &check_line(report, outcome);
    }
    for finding in &report.findings {
        let at = finding
            .seq
            .map_or(String::new(), |seq| format!("seq {seq}: "));
        let _ = writeln!(out, "  {at}{}", finding.message);
    }
    out += &final_verdict(report);
    out
}

/// The first line: the game and its size.
fn header(report: &AuditReport) -> String {
    let known = |value: Option<u8>| value.map_or("?".to_owned(), |v| v.to_string());
    format!(
        "game {}: {} seats, {} holes{}\n",
        report.game_id.as_deref().unwrap_or("?"),
        known(report.seats),
        known(report.holes),
        if report.stacked { ", stacked" } else { "" }
    )
}

/// A check's line: its name, its outcome and what it covered.
fn check_line(report: &AuditReport, outcome: &CheckOutcome) -> String {
    format!(
        "{:<15} {:<7} {}\n",
        label(outcome.check),
        verdict(outcome.outcome),
        match outcome.outcome {
            Outcome::Skipped => "not checked to the end: an earlier check failed".to_owned(),
            _ => detail(report, outcome.check),
        }
    )
}

/// The last line: VERIFIED, or FAILED with the first finding (the one at the first bad seq).
fn final_verdict(report: &AuditReport) -> String {
    match (
        report.verified,
        report.first_bad_seq,
        report.findings.first(),
    ) {
        (true, _, _) => "VERIFIED\n".to_owned(),
        (false, Some(seq), _) => {
            let first = report
                .findings
                .iter()
                .find(|finding| finding.seq == Some(seq))
                .map_or("", |finding| finding.message.as_str());
            format!("FAILED at seq {seq}: {first}\n")
        }
        (false, None, Some(finding)) => format!("FAILED: {}\n", finding.message),
        (false, None, None) => "FAILED\n".to_owned(),
    }
}

fn label(check: Check) -> &'static str {
    match check {
        Check::Format => "format",
        Check::Complete => "complete",
        Check::Chain => "hash chain",
        Check::Salts => "salts",
        Check::Commitment => "commitment",
        Check::EffectiveSeed => "effective seed",
        Check::Deals => "deals",
        Check::Reshuffles => "reshuffles",
        Check::Moves => "moves",
        Check::Scores => "scores",
        Check::Winners => "winners",
    }
}

fn verdict(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Ok => "OK",
        Outcome::Failed => "FAILED",
        Outcome::Skipped => "skipped",
    }
}

/// What the check covered.
fn detail(report: &AuditReport, check: Check) -> String {
    let short = |hex: &Option<String>| {
        hex.as_deref()
            .map_or("?".to_owned(), |hex| hex.chars().take(16).collect())
    };
    match check {
        Check::Format => format!("{} entries", report.entries),
        Check::Complete => "game_created ... game_ended".to_owned(),
        Check::Chain => match &report.head_hash {
            Some(_) => format!("head {}", short(&report.head_hash)),
            None => "broken".to_owned(),
        },
        Check::Salts => "from the revealed seed".to_owned(),
        Check::Commitment => format!("SHA-256(seed) = {}", short(&report.commitment)),
        Check::EffectiveSeed => format!("S = {}", short(&report.effective_seed)),
        Check::Deals => {
            let stacked = match report.stacked_holes.as_slice() {
                [] => String::new(),
                holes => format!(
                    ", {} stacked (holes {})",
                    holes.len(),
                    holes
                        .iter()
                        .map(u8::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            format!("{} fair{stacked}", report.fair_deals)
        }
        Check::Reshuffles => format!("{} re-derived", report.reshuffles),
        Check::Moves => format!("{} re-decided through the rules", report.moves),
        Check::Scores => format!("{} holes re-scored", report.holes_scored),
        Check::Winners => match (&report.totals, &report.winners) {
            (Some(totals), Some(winners)) => format!("totals {totals:?}, winners {winners:?}"),
            _ => "totals and winners".to_owned(),
        },
    }
}
