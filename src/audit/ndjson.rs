//! The export format: one entry a line, each line the RFC 8785 canonical JSON of the entry in the
//! public log format. [`line`] writes one (the export uses it); [`audit_text`] checks every line
//! byte for byte before [`audit`](super::audit) checks the entries.

use serde_json::Value;

use super::{AuditReport, Check, Finding, audit};
use crate::engine::LoggedEvent;
use crate::store::Entry;
use crate::store::codec::logged_event;

/// The export line of `entry`: its canonical JSON and a newline.
pub fn line(entry: &Entry) -> String {
    let mut line = serde_jcs::to_string(&entry.to_json()).expect("log entries serialize to JCS");
    line.push('\n');
    line
}

/// Audits an exported log. Each line must be exactly the canonical JSON of its entry, so that no
/// byte can change unnoticed (a line that parses but is not canonical is a finding, and its entry
/// is still audited); a line that is no log entry is a finding and is left out.
pub fn audit_text(text: &str) -> AuditReport {
    let (entries, findings) = read_lines(text);
    let mut report = audit(&entries);
    if !findings.is_empty() {
        add_format_findings(&mut report, findings);
    }
    report
}

/// The events of an exported log, for tools that read a log without auditing it (`golf-server
/// analyze`): fails on the first line that is no log entry, naming it.
pub fn logged_events(text: &str) -> Result<Vec<LoggedEvent>, String> {
    let (entries, findings) = read_lines(text);
    // A line that is not canonical JSON ("... of its entry") still holds its entry: only lines
    // that hold none fail.
    if let Some(finding) = findings
        .iter()
        .find(|f| !f.message.ends_with("of its entry"))
    {
        return Err(finding.message.clone());
    }
    entries.iter().map(logged_event).collect()
}

/// The entries of an exported log's lines, and the format findings about the lines.
fn read_lines(text: &str) -> (Vec<Entry>, Vec<Finding>) {
    let mut findings = Vec::new();
    let mut entries = Vec::new();
    // The last line's newline may be missing: that changes no entry.
    let body = text.strip_suffix('\n').unwrap_or(text);
    for (number, line) in (1..).zip(body.split('\n')) {
        if body.is_empty() {
            break;
        }
        let mut bad = |message: String| {
            findings.push(Finding {
                seq: Some(number),
                check: Check::Format,
                message,
            })
        };
        let Ok(json) = serde_json::from_str::<Value>(line) else {
            bad(format!("line {number} is not JSON"));
            continue;
        };
        let Some(entry) = entry_of(&json) else {
            bad(format!("line {number} is not a log entry"));
            continue;
        };
        if serde_jcs::to_string(&json).ok().as_deref() != Some(line) {
            bad(format!(
                "line {number} (entry {}) is not the canonical JSON of its entry",
                entry.seq
            ));
        }
        entries.push(entry);
    }
    (entries, findings)
}

/// Puts the format `findings` before the entries' own and fails the report's format check.
fn add_format_findings(report: &mut AuditReport, mut findings: Vec<Finding>) {
    findings.append(&mut report.findings);
    report.findings = findings;
    report.first_bad_seq = report.findings.iter().filter_map(|f| f.seq).min();
    report.verified = false;
    for outcome in &mut report.checks {
        if outcome.check == Check::Format {
            outcome.outcome = super::Outcome::Failed;
        }
    }
}

/// The entry a line holds: exactly the six fields of the public format, with their types.
fn entry_of(json: &Value) -> Option<Entry> {
    let object = json.as_object()?;
    let text = |key: &str| object.get(key)?.as_str().map(str::to_owned);
    let data = object.get("data").filter(|data| data.is_object())?;
    (object.len() == 6).then_some(())?;
    Some(Entry {
        seq: object.get("seq")?.as_i64()?,
        at: text("at")?,
        kind: text("type")?,
        data: data.clone(),
        salt: text("salt")?,
        hash: text("hash")?,
    })
}
