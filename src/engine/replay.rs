//! Replaying a log through the rules: each entry that starts a command gives back that command,
//! which is decided again with the game's secrets, and the events the rules decide must be the
//! log's next entries exactly ([`replay`], [`replay_prefix`]). It needs no database: `check-db`,
//! a replay and an offline verifier all hand it the log as [`LoggedEvent`]s.

use serde_json::Value;
use uuid::Uuid;

use super::apply::apply;
use super::decide::decide;
use super::event::{Event, TakeoverReason};
use super::moves::{Command, Move, Source};
use super::rules::Rules;
use super::secrets::Secrets;
use super::shuffle;
use super::stage::Seat;
use super::state::State;
use super::time::Timestamp;

/// One entry of a game's log, decoded.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct LoggedEvent {
    /// The entry's number in the log, from 1.
    pub seq: i64,
    /// What the entry records.
    pub event: Event,
    /// When it was logged.
    pub at: Timestamp,
}

/// Why a log does not replay. Each names the entry by `seq` and type, and what is wrong by a
/// rule's code, field names or event types: never by a card or a seed, since it goes to the
/// server's logs.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum ReplayError {
    /// The command the entry starts is refused by the rules.
    #[error("entry {seq} ({kind}) is refused by the rules: {code}")]
    Refused {
        /// The entry.
        seq: i64,
        /// Its type.
        kind: &'static str,
        /// The [`RuleError`](super::RuleError) code.
        code: &'static str,
    },
    /// The entry has the type the rules log there, with other values.
    #[error("entry {seq} ({kind}) is not what the rules decide: {} differs", .fields.join(", "))]
    Differs {
        /// The entry.
        seq: i64,
        /// Its type.
        kind: &'static str,
        /// The names of the fields whose values differ.
        fields: Vec<String>,
    },
    /// The rules log an event of another type there.
    #[error("entry {seq} ({kind}) is where the rules log {expected}")]
    OtherType {
        /// The entry.
        seq: i64,
        /// Its type.
        kind: &'static str,
        /// The type the rules log.
        expected: &'static str,
    },
    /// The log ends inside the events of a command.
    #[error("the log ends with entry {seq} ({kind}) where the rules log {next} next")]
    Truncated {
        /// The last entry.
        seq: i64,
        /// Its type.
        kind: &'static str,
        /// The type of the event the rules log next.
        next: &'static str,
    },
    /// A reshuffle starts a command while nobody is to draw.
    #[error("entry {seq} ({kind}) is a reshuffle on nobody's turn")]
    ReshuffleOffTurn {
        /// The entry.
        seq: i64,
        /// Its type.
        kind: &'static str,
    },
    /// An event that only follows others of its command (a deal, the end of a hole or of the
    /// game) comes where a command should start.
    #[error(
        "entry {seq} ({kind}) starts no command, yet comes where the next command should start"
    )]
    StartsNoCommand {
        /// The entry.
        seq: i64,
        /// Its type.
        kind: &'static str,
    },
}

impl ReplayError {
    /// The `seq` of the entry the error is about.
    pub const fn seq(&self) -> i64 {
        match self {
            ReplayError::Refused { seq, .. }
            | ReplayError::Differs { seq, .. }
            | ReplayError::OtherType { seq, .. }
            | ReplayError::Truncated { seq, .. }
            | ReplayError::ReshuffleOffTurn { seq, .. }
            | ReplayError::StartsNoCommand { seq, .. } => *seq,
        }
    }
}

/// Replays a whole log from the empty state, re-deciding every command it records; the events
/// of the last command must all be there. Returns the state the log leads to.
pub fn replay(log: &[LoggedEvent], secrets: &Secrets) -> Result<State, ReplayError> {
    replay_commands(State::default(), log, secrets, true)
}

/// As [`replay`], for the first entries of a log cut after any entry: the events of the last
/// command may be cut short.
pub fn replay_prefix(log: &[LoggedEvent], secrets: &Secrets) -> Result<State, ReplayError> {
    replay_commands(State::default(), log, secrets, false)
}

/// As [`replay_prefix`], for the entries that follow `start`: the state of the same game after
/// an earlier entry where a command's events end (a snapshot), so that a replay need not start
/// from the first entry.
pub fn replay_prefix_from(
    start: State,
    log: &[LoggedEvent],
    secrets: &Secrets,
) -> Result<State, ReplayError> {
    replay_commands(start, log, secrets, false)
}

/// Walks the log a command at a time: `decide` runs the command that the entry starting it gives
/// back, and the events it decides must be the next entries exactly before `apply` takes them,
/// each at its own entry's time. So every check of the rules is the engine's own, deals and
/// reshuffles are checked against the server seed, and `apply`, which trusts its events, only
/// sees events `decide` made.
fn replay_commands(
    mut state: State,
    log: &[LoggedEvent],
    secrets: &Secrets,
    whole: bool,
) -> Result<State, ReplayError> {
    let mut next = 0;
    while let Some(first) = log.get(next) {
        let command = command_of(&state, first, secrets)?;
        let decided = decide(&state, &command, secrets).map_err(|error| ReplayError::Refused {
            seq: first.seq,
            kind: first.event.kind(),
            code: error.code(),
        })?;
        for expected in &decided {
            let Some(logged) = log.get(next) else {
                if whole {
                    let last = &log[next - 1];
                    return Err(ReplayError::Truncated {
                        seq: last.seq,
                        kind: last.event.kind(),
                        next: expected.kind(),
                    });
                }
                break;
            };
            if logged.event != *expected {
                return Err(difference(logged, expected));
            }
            apply(&mut state, expected, logged.at);
            next += 1;
        }
    }
    Ok(state)
}

/// The command whose events start with `first`, or why no command starts with it.
fn command_of(
    state: &State,
    first: &LoggedEvent,
    secrets: &Secrets,
) -> Result<Command, ReplayError> {
    let play = |seat: Seat, mv: Move| Ok(Command::Play { seat, mv });
    let (seq, kind) = (first.seq, first.event.kind());
    match first.event {
        Event::GameCreated {
            game_id,
            seats,
            holes,
            rules,
            rated,
            ..
        } => Ok(create_command(game_id, seats, holes, rules, rated, secrets)),
        Event::PlayerJoined {
            ref name,
            bot,
            ref client_seed,
            ref account,
            ..
        } => Ok(Command::Join {
            name: name.clone(),
            bot,
            client_seed: client_seed.clone(),
            account: account.clone(),
        }),
        Event::CardsRevealed {
            seat, positions, ..
        } => play(seat, Move::Reveal { positions }),
        // A reshuffle comes first in the events of the current seat's draw from an empty stock.
        Event::StockReshuffled { .. } => match state.current_seat {
            Some(seat) => play(
                seat,
                Move::Draw {
                    source: Source::Stock,
                },
            ),
            None => Err(ReplayError::ReshuffleOffTurn { seq, kind }),
        },
        Event::CardDrawn { seat, source, .. } => play(seat, Move::Draw { source }),
        Event::CardSwapped { seat, position, .. } => play(seat, Move::Swap { position }),
        Event::CardDiscarded { seat, .. } => play(seat, Move::Discard),
        Event::CardFlipped { seat, position, .. } => play(seat, Move::Flip { position }),
        Event::FlipDeclined { seat } => play(seat, Move::Pass),
        Event::Knocked { seat } => play(seat, Move::Knock),
        Event::BotTookSeat { seat, reason, .. } => Ok(takeover_command(seat, reason, first.at)),
        Event::HoleDealt { .. } | Event::HoleEnded { .. } | Event::GameEnded { .. } => {
            Err(ReplayError::StartsNoCommand { seq, kind })
        }
    }
}

/// The command that creates the game a `game_created` entry records. The service commits to its
/// server seed and marks a game stacked when it has explicit decks: both come from the secrets,
/// so that the log must say so too. Whether it is rated is the log's word.
fn create_command(
    game_id: Uuid,
    seats: u8,
    holes: u8,
    rules: Rules,
    rated: bool,
    secrets: &Secrets,
) -> Command {
    Command::Create {
        game_id,
        seats,
        holes,
        rules,
        commitment: shuffle::commitment(&secrets.server_seed),
        stacked: !secrets.decks.is_empty(),
        rated,
    }
}

/// The command by which the greedy bot took `seat` for `reason`, logged `at`. A timeout is
/// re-decided at the entry's time: the deadline must have passed by then.
fn takeover_command(seat: Seat, reason: TakeoverReason, at: Timestamp) -> Command {
    match reason {
        TakeoverReason::Left => Command::Leave { seat },
        TakeoverReason::TurnTimeout => Command::TimeOut { seat, now: at },
    }
}

/// How the logged event differs from the one the rules decide: by type, else by the names of
/// the fields whose values differ.
fn difference(logged: &LoggedEvent, expected: &Event) -> ReplayError {
    let (seq, kind) = (logged.seq, logged.event.kind());
    if kind != expected.kind() {
        return ReplayError::OtherType {
            seq,
            kind,
            expected: expected.kind(),
        };
    }
    // Compared as JSON, the log's own format, so that the names are the log's field names.
    let (stored, expected) = (data_of(&logged.event), data_of(expected));
    let fields = expected
        .as_object()
        .into_iter()
        .flatten()
        .filter(|&(field, value)| stored.get(field) != Some(value))
        .map(|(field, _)| field.clone())
        .collect();
    ReplayError::Differs { seq, kind, fields }
}

/// The `data` of an event as the log holds it.
fn data_of(event: &Event) -> Value {
    let mut json = serde_json::to_value(event).expect("events serialize to JSON");
    json["data"].take()
}
