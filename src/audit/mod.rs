//! The audit of a finished game's log, with nothing but the log: [`audit`] checks the hash chain,
//! the salts, the revealed server seed against the commitment, the effective seed from the
//! players' client seeds, every deal against the fair-shuffle protocol (a stacked game's explicit
//! decks are reported as such), and re-decides every move through the rules, which re-checks
//! every reshuffle, hole score, total and winner. Pure: no I/O, no clock.
//!
//! # Layout
//! - `mod.rs`: [`audit`] over the store's [`Entry`]s, and the [`AuditReport`] it returns;
//! - [`ndjson`]: the exported NDJSON text, each line checked to be its entry's canonical JSON;
//! - `text.rs`: the short human report.

pub mod ndjson;
pub mod replay;
mod text;

use serde::Serialize;

use crate::engine::{self, Card, Event, LoggedEvent, ReplayError, Secrets, State, shuffle};
use crate::store::Entry;
use crate::store::chain::{self, GENESIS};
use crate::store::codec::entry_event;

/// What the audit checks, in the order it checks them and the report lists them.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// Every line is the canonical JSON of a log entry of the public format.
    Format,
    /// The log starts with `game_created` and ends with `game_ended`.
    Complete,
    /// Entries are numbered 1, 2, ... and each hash chains the previous one and the entry.
    Chain,
    /// Every salt is the one the revealed server seed gives for its seq.
    Salts,
    /// SHA-256 of the revealed server seed is the commitment of `game_created`.
    Commitment,
    /// One `player_joined` per seat, in seat order: the client seeds of the effective seed.
    EffectiveSeed,
    /// Every deal is the fair shuffle of its hole (or one of the leading explicit decks of a
    /// stacked game).
    Deals,
    /// Every reshuffle of the stock, re-derived by the rules.
    Reshuffles,
    /// Every move, re-decided by the rules from the state the log leads to.
    Moves,
    /// Every hole's end and scores, recomputed by the rules.
    Scores,
    /// The totals and winners of `game_ended`, recomputed by the rules.
    Winners,
}

impl Check {
    /// Every check, in order.
    pub const ALL: [Check; 11] = [
        Check::Format,
        Check::Complete,
        Check::Chain,
        Check::Salts,
        Check::Commitment,
        Check::EffectiveSeed,
        Check::Deals,
        Check::Reshuffles,
        Check::Moves,
        Check::Scores,
        Check::Winners,
    ];

    /// The checks that re-decide the log through the rules.
    const REPLAYED: [Check; 4] = [
        Check::Reshuffles,
        Check::Moves,
        Check::Scores,
        Check::Winners,
    ];
}

/// How one check came out.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Checked, and right.
    Ok,
    /// A finding names what is wrong.
    Failed,
    /// Not checked, or not to the end: an earlier check failed (e.g. without a seed that matches
    /// the commitment nothing that depends on it can be checked).
    Skipped,
}

/// One thing found wrong.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct Finding {
    /// The entry where it is wrong (for a missing entry, the seq it should have had).
    pub seq: Option<i64>,
    /// The check that found it.
    pub check: Check,
    /// What is wrong, in a short sentence.
    pub message: String,
}

/// The outcome of one check in the report.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct CheckOutcome {
    /// The check.
    pub check: Check,
    /// How it came out.
    pub outcome: Outcome,
}

/// What [`audit`] found: the verdict, where the log first goes wrong, and what was checked.
#[derive(Clone, PartialEq, Eq, Debug, Default, Serialize)]
pub struct AuditReport {
    /// Every check passed: the log is a fair, complete game played by the rules.
    pub verified: bool,
    /// `game_created` marks the game stacked (explicit decks for its first holes).
    pub stacked: bool,
    /// The smallest seq of any finding.
    pub first_bad_seq: Option<i64>,
    /// Everything found wrong, in the order the checks ran.
    pub findings: Vec<Finding>,
    /// Each check and how it came out, in [`Check::ALL`] order.
    pub checks: Vec<CheckOutcome>,
    /// The game, as `game_created` names it.
    pub game_id: Option<String>,
    /// Seats of the game.
    pub seats: Option<u8>,
    /// Holes of the game.
    pub holes: Option<u8>,
    /// Entries audited.
    pub entries: usize,
    /// The hash of the last entry, when the chain verifies.
    pub head_hash: Option<String>,
    /// The commitment of `game_created`, lowercase hex.
    pub commitment: Option<String>,
    /// The server seed `game_ended` reveals, as logged.
    pub seed: Option<String>,
    /// The effective seed `S` the deals and reshuffles read, lowercase hex.
    pub effective_seed: Option<String>,
    /// Deals that are the fair shuffle of their hole.
    pub fair_deals: usize,
    /// Holes dealt from an explicit deck of a stacked game.
    pub stacked_holes: Vec<u8>,
    /// Reshuffles of the stock in the log.
    pub reshuffles: usize,
    /// Moves in the log (reveals, draws, swaps, discards, flips, passes).
    pub moves: usize,
    /// Holes ended and scored in the log.
    pub holes_scored: usize,
    /// The totals the rules compute, when the replay reaches the end.
    pub totals: Option<Vec<i32>>,
    /// The winners the rules compute, when the replay reaches the end.
    pub winners: Option<Vec<u8>>,
}

impl AuditReport {
    /// The short human report (one line per check, then the verdict).
    pub fn render_text(&self) -> String {
        text::render(self)
    }
}

/// Audits a game's complete log, as the store holds it or an export lists it (entries 1..=n in
/// order). Derives the secrets from the log itself: the server seed from `game_ended`, and for a
/// stacked game the explicit decks from the leading deals that are not the fair shuffle.
pub fn audit(entries: &[Entry]) -> AuditReport {
    let mut audit = AuditUnderWay {
        report: AuditReport {
            entries: entries.len(),
            ..AuditReport::default()
        },
        skipped: Vec::new(),
    };
    let log = audit.decode(entries);
    audit.summarize(&log);
    audit.chain(entries);
    if let Some(seed) = audit.seed(entries, &log) {
        audit.salts(&seed, entries);
        match audit.effective_seed(&seed, &log) {
            Some(effective) => {
                let decks = audit.deals(&effective, &log);
                if log.len() == entries.len() {
                    audit.replay(&log, seed, decks);
                } else {
                    audit.replay_prefix(&log, seed, decks);
                }
            }
            None => {
                audit.skip(&[Check::Deals]);
                audit.skip(&Check::REPLAYED);
            }
        }
    }
    audit.finish()
}

/// An audit under way: the report so far, and the checks that could not run.
struct AuditUnderWay {
    report: AuditReport,
    skipped: Vec<Check>,
}

impl AuditUnderWay {
    fn found(&mut self, seq: Option<i64>, check: Check, message: impl Into<String>) {
        self.report.findings.push(Finding {
            seq,
            check,
            message: message.into(),
        });
    }

    fn skip(&mut self, checks: &[Check]) {
        self.skipped.extend_from_slice(checks);
    }

    /// The entries as engine events, up to the first that is no log event (each of those is a
    /// finding): the replay needs an unbroken prefix.
    fn decode(&mut self, entries: &[Entry]) -> Vec<LoggedEvent> {
        let mut log = Vec::with_capacity(entries.len());
        let mut broken = false;
        for entry in entries {
            match entry_event(entry) {
                Ok((event, at)) if !broken => log.push(LoggedEvent {
                    seq: entry.seq,
                    event,
                    at,
                }),
                Ok(_) => {}
                Err(message) => {
                    broken = true;
                    self.found(Some(entry.seq), Check::Format, message);
                }
            }
        }
        log
    }

    /// The facts the report shows, from the events as logged.
    fn summarize(&mut self, log: &[LoggedEvent]) {
        let report = &mut self.report;
        for logged in log {
            match &logged.event {
                Event::GameCreated {
                    game_id,
                    seats,
                    holes,
                    commitment,
                    stacked,
                    ..
                } => {
                    report.game_id = Some(game_id.to_string());
                    report.seats = Some(*seats);
                    report.holes = Some(*holes);
                    report.commitment = Some(commitment.clone());
                    report.stacked = *stacked;
                }
                Event::StockReshuffled { .. } => report.reshuffles += 1,
                Event::HoleEnded { .. } => report.holes_scored += 1,
                Event::GameEnded { seed, .. } => report.seed = Some(seed.clone()),
                Event::CardsRevealed { .. }
                | Event::CardDrawn { .. }
                | Event::CardSwapped { .. }
                | Event::CardDiscarded { .. }
                | Event::CardFlipped { .. }
                | Event::FlipDeclined { .. }
                | Event::Knocked { .. } => report.moves += 1,
                Event::PlayerJoined { .. }
                | Event::HoleDealt { .. }
                | Event::BotTookSeat { .. } => {}
            }
        }
    }

    /// Numbering and hashes, each hash recomputed from the previous one and the entry as logged
    /// (its salt included, which [`AuditUnderWay::salts`] checks apart, so that a wrong seed does not
    /// hide where the content changed).
    fn chain(&mut self, entries: &[Entry]) {
        let mut head = GENESIS;
        for (expected, entry) in (1..).zip(entries) {
            if entry.seq != expected {
                let message = format!(
                    "entry {expected} is missing: seq {} is in its place",
                    entry.seq
                );
                return self.found(Some(expected), Check::Chain, message);
            }
            let hash = chain::entry_hash(
                &head,
                entry.seq,
                &entry.at,
                &entry.kind,
                &entry.data,
                &entry.salt,
            );
            match hash {
                Ok(hash) if hex::encode(hash) == entry.hash => head = hash,
                Ok(_) => {
                    let message = format!(
                        "entry {} ({}) has a wrong hash: its content or an entry before it changed",
                        entry.seq, entry.kind
                    );
                    return self.found(Some(entry.seq), Check::Chain, message);
                }
                Err(error) => return self.found(Some(entry.seq), Check::Chain, error.to_string()),
            }
        }
        self.report.head_hash = (!entries.is_empty()).then(|| hex::encode(head));
    }

    /// The server seed `game_ended` reveals, checked against the commitment of `game_created`;
    /// `None` when there is none to trust, every check that depends on it then skipped.
    fn seed(&mut self, entries: &[Entry], log: &[LoggedEvent]) -> Option<[u8; 32]> {
        let first = log.first().filter(|logged| logged.seq == 1);
        let Some(Event::GameCreated { commitment, .. }) = first.map(|logged| &logged.event) else {
            let message = "the log does not start with game_created";
            return self.no_seed(Some(1), Check::Complete, message.to_owned());
        };
        let last = entries.last().map_or(0, |entry| entry.seq);
        let ended = log.last().filter(|logged| logged.seq == last);
        let Some(Event::GameEnded { seed, .. }) = ended.map(|logged| &logged.event) else {
            let message = format!(
                "the log ends at entry {last} without game_ended: an unfinished game cannot be \
                 verified"
            );
            return self.no_seed(Some(last + 1), Check::Complete, message);
        };
        let decoded = hex::decode(seed)
            .ok()
            .and_then(|bytes| <[u8; 32]>::try_from(bytes).ok())
            .filter(|_| *seed == seed.to_lowercase());
        let Some(bytes) = decoded else {
            let message = "the seed is not 64 lowercase hex digits";
            return self.no_seed(Some(last), Check::Commitment, message.to_owned());
        };
        if shuffle::commitment(&bytes) != *commitment {
            let message = "SHA-256 of the revealed seed is not the commitment of entry 1";
            return self.no_seed(Some(last), Check::Commitment, message.to_owned());
        }
        Some(bytes)
    }

    /// Records why there is no seed to trust, and skips every check that reads it.
    fn no_seed(&mut self, seq: Option<i64>, check: Check, message: String) -> Option<[u8; 32]> {
        self.found(seq, check, message);
        self.skip(&[
            Check::Salts,
            Check::Commitment,
            Check::EffectiveSeed,
            Check::Deals,
        ]);
        self.skip(&Check::REPLAYED);
        None
    }

    /// Every salt against the seed.
    fn salts(&mut self, seed: &[u8; 32], entries: &[Entry]) {
        if let Some(entry) = entries
            .iter()
            .find(|entry| entry.salt != chain::salt(seed, entry.seq))
        {
            let message = format!("entry {} ({}) has a wrong salt", entry.seq, entry.kind);
            self.found(Some(entry.seq), Check::Salts, message);
        }
    }

    /// The effective seed from the client seeds of the seats, which must join one each in seat
    /// order; `None` (a finding) when they do not.
    fn effective_seed(&mut self, seed: &[u8; 32], log: &[LoggedEvent]) -> Option<[u8; 32]> {
        let seats = self.report.seats.unwrap_or_default();
        let mut client_seeds = Vec::new();
        for logged in log {
            match &logged.event {
                Event::PlayerJoined {
                    seat, client_seed, ..
                } if usize::from(*seat) == client_seeds.len() && *seat < seats => {
                    client_seeds.push(client_seed.as_str())
                }
                Event::PlayerJoined { seat, .. } => {
                    let message = format!(
                        "entry {} joins seat {seat} where seat {} of {seats} should join",
                        logged.seq,
                        client_seeds.len()
                    );
                    self.found(Some(logged.seq), Check::EffectiveSeed, message);
                    return None;
                }
                _ => {}
            }
        }
        if client_seeds.len() != usize::from(seats) {
            let message = format!("{} of {seats} seats joined", client_seeds.len());
            self.found(None, Check::EffectiveSeed, message);
            return None;
        }
        let effective = shuffle::effective_seed(seed, client_seeds);
        self.report.effective_seed = Some(hex::encode(effective));
        Some(effective)
    }

    /// Every deal against the fair shuffle of its hole. In a stacked game the leading deals that
    /// are not are its explicit decks, returned for the replay; any other is a finding.
    fn deals(&mut self, effective: &[u8; 32], log: &[LoggedEvent]) -> Vec<Vec<Card>> {
        let mut decks = Vec::new();
        let mut leading = self.report.stacked;
        let jokers = jokers_of(log);
        for logged in log {
            let Event::HoleDealt { hole, deck, .. } = &logged.event else {
                continue;
            };
            if *deck == shuffle::deal_order(effective, u32::from(*hole), jokers) {
                self.report.fair_deals += 1;
                leading = false;
            } else if leading && usize::from(*hole) == decks.len() + 1 && is_a_deck(deck, jokers) {
                self.report.stacked_holes.push(*hole);
                decks.push(deck.clone());
            } else {
                let message = format!(
                    "entry {} deals hole {hole} from a deck that is not its fair shuffle",
                    logged.seq
                );
                self.found(Some(logged.seq), Check::Deals, message);
                leading = false;
            }
        }
        // A game marks itself stacked by having explicit decks; one whose deals are all fair is
        // replayed with the fair deal of hole 1 as its explicit deck, which deals the same.
        if self.report.stacked && decks.is_empty() {
            decks.push(shuffle::deal_order(effective, 1, jokers));
        }
        decks
    }

    /// Re-decides the whole log through the rules with the secrets derived from it.
    fn replay(&mut self, log: &[LoggedEvent], server_seed: [u8; 32], decks: Vec<Vec<Card>>) {
        let secrets = Secrets { server_seed, decks };
        match engine::replay(log, &secrets) {
            Ok(state) => self.ended(&state),
            Err(error) => self.refused(log, &error),
        }
    }

    /// Re-decides the entries before one that is no log event, to find an earlier fault.
    fn replay_prefix(&mut self, log: &[LoggedEvent], server_seed: [u8; 32], decks: Vec<Vec<Card>>) {
        let secrets = Secrets { server_seed, decks };
        if let Err(error) = engine::replay_prefix(log, &secrets) {
            self.refused(log, &error);
        }
        self.skip(&Check::REPLAYED);
    }

    /// The totals and winners the rules reached.
    fn ended(&mut self, state: &State) {
        self.report.totals = Some(state.players.iter().map(|player| player.total).collect());
        self.report.winners = state.winners.clone();
    }

    /// A replay that stops at an entry: the check of that entry's kind fails, and those of the
    /// entries after it were not reached. A deal already found unfair is not found twice.
    fn refused(&mut self, log: &[LoggedEvent], error: &ReplayError) {
        let seq = error.seq();
        let kind = log
            .iter()
            .find(|logged| logged.seq == seq)
            .map(|logged| logged.event.kind());
        let check = match kind {
            Some("hole_dealt") => Check::Deals,
            Some("stock_reshuffled") => Check::Reshuffles,
            Some("hole_ended") => Check::Scores,
            Some("game_ended") => Check::Winners,
            _ => Check::Moves,
        };
        let known = self
            .report
            .findings
            .iter()
            .any(|f| f.seq == Some(seq) && f.check == check);
        if !known {
            self.found(Some(seq), check, error.to_string());
        }
        self.skip(&Check::REPLAYED);
    }

    fn finish(mut self) -> AuditReport {
        let report = &mut self.report;
        report.checks = Check::ALL
            .iter()
            .map(|&check| CheckOutcome {
                check,
                outcome: if report.findings.iter().any(|f| f.check == check) {
                    Outcome::Failed
                } else if self.skipped.contains(&check) {
                    Outcome::Skipped
                } else {
                    Outcome::Ok
                },
            })
            .collect();
        report.first_bad_seq = report.findings.iter().filter_map(|f| f.seq).min();
        report.verified = report.findings.is_empty() && self.skipped.is_empty();
        self.report
    }
}

/// The jokers of the game the log creates (0 without a `game_created` entry).
fn jokers_of(log: &[LoggedEvent]) -> u8 {
    log.iter()
        .find_map(|logged| match &logged.event {
            Event::GameCreated { rules, .. } => Some(rules.jokers),
            _ => None,
        })
        .unwrap_or(0)
}

/// Whether `deck` holds each card of the deck of a game with `jokers` jokers once.
fn is_a_deck(deck: &[Card], jokers: u8) -> bool {
    let mut sorted = deck.to_vec();
    sorted.sort_unstable();
    sorted == engine::game_deck(jokers)
}
