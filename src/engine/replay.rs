//! Replaying a log through the rules: each entry that starts a command gives back that command,
//! which is decided again with the game's secrets, and the events the rules decide must be the
//! log's next entries exactly ([`replay`], [`replay_prefix`]). It needs no database: `check-db`,
//! a replay and an offline verifier all hand it the log as [`LoggedEvent`]s.

use serde_json::Value;

use super::apply::apply;
use super::decide::{Secrets, decide};
use super::event::Event;
use super::moves::{Command, Move, Source};
use super::shuffle;
use super::state::{Seat, State};
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
    match &first.event {
        // The service commits to its server seed and marks a game stacked when it has explicit
        // decks: both come from the secrets, so that the log must say so too.
        Event::GameCreated {
            game_id,
            seats,
            holes,
            rules,
            ..
        } => Ok(Command::Create {
            game_id: *game_id,
            seats: *seats,
            holes: *holes,
            rules: *rules,
            commitment: shuffle::commitment(&secrets.server_seed),
            stacked: !secrets.decks.is_empty(),
        }),
        Event::PlayerJoined {
            name,
            bot,
            client_seed,
            ..
        } => Ok(Command::Join {
            name: name.clone(),
            bot: *bot,
            client_seed: client_seed.clone(),
        }),
        Event::CardsRevealed {
            seat, positions, ..
        } => play(
            *seat,
            Move::Reveal {
                positions: *positions,
            },
        ),
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
        Event::CardDrawn { seat, source, .. } => play(*seat, Move::Draw { source: *source }),
        Event::CardSwapped { seat, position, .. } => play(
            *seat,
            Move::Swap {
                position: *position,
            },
        ),
        Event::CardDiscarded { seat, .. } => play(*seat, Move::Discard),
        Event::CardFlipped { seat, position, .. } => play(
            *seat,
            Move::Flip {
                position: *position,
            },
        ),
        Event::FlipDeclined { seat } => play(*seat, Move::Pass),
        Event::HoleDealt { .. } | Event::HoleEnded { .. } | Event::GameEnded { .. } => {
            Err(ReplayError::StartsNoCommand { seq, kind })
        }
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

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use serde_json::json;
    use uuid::Uuid;

    use super::*;
    use crate::engine::{
        BotKind, ClientSeed, EndReason, FlipRule, PlayerName, Position, Rules, Stage, Status,
        canonical_deck, choose, execute, legal_moves, observe,
    };

    /// Runs commands as the service does, recording the log.
    struct Game {
        secrets: Secrets,
        state: State,
        log: Vec<LoggedEvent>,
    }

    impl Game {
        fn new(server_seed: [u8; 32]) -> Game {
            Game {
                secrets: Secrets {
                    server_seed,
                    decks: Vec::new(),
                },
                state: State::default(),
                log: Vec::new(),
            }
        }

        fn run(&mut self, command: Command) {
            let at = Timestamp(self.log.len() as i64);
            for event in execute(&mut self.state, &command, &self.secrets, at).unwrap() {
                let seq = self.log.len() as i64 + 1;
                self.log.push(LoggedEvent { seq, event, at });
            }
        }

        fn create(&mut self, id: u128, seats: u8, holes: u8, rules: Rules) {
            self.run(Command::Create {
                game_id: Uuid::from_u128(id),
                seats,
                holes,
                rules,
                commitment: shuffle::commitment(&self.secrets.server_seed),
                stacked: false,
            });
        }

        fn join(&mut self, name: &str, bot: Option<BotKind>) {
            self.run(Command::Join {
                name: PlayerName::parse(name).unwrap(),
                bot,
                client_seed: ClientSeed::default(),
            });
        }
    }

    /// A two-seat game just dealt, with both seats revealed.
    fn dealt_game() -> Game {
        let mut game = Game::new([3; 32]);
        game.create(1, 2, 1, Rules::resolve(2, None, None, None).unwrap());
        game.join("Ada", None);
        game.join("Bob", None);
        for seat in 0..2 {
            let positions = [0, 1].map(|p| Position::new(p).unwrap());
            game.run(Command::Play {
                seat,
                mv: Move::Reveal { positions },
            });
        }
        game
    }

    /// `logged` with its `data` changed as JSON.
    fn edited(logged: &LoggedEvent, change: impl FnOnce(&mut Value)) -> LoggedEvent {
        let mut json = serde_json::to_value(&logged.event).unwrap();
        change(&mut json["data"]);
        LoggedEvent {
            event: serde_json::from_value(json).expect("still a log event"),
            ..logged.clone()
        }
    }

    /// `log` with the `data` of entry `seq` changed as JSON.
    fn with(log: &[LoggedEvent], seq: usize, change: impl FnOnce(&mut Value)) -> Vec<LoggedEvent> {
        let mut log = log.to_vec();
        log[seq - 1] = edited(&log[seq - 1], change);
        log
    }

    /// `log` numbered 1, 2, ... in its order.
    fn renumbered(mut log: Vec<LoggedEvent>) -> Vec<LoggedEvent> {
        for (i, logged) in log.iter_mut().enumerate() {
            logged.seq = i as i64 + 1;
        }
        log
    }

    /// Asserts that replaying `log` fails saying `expected`, in words that name no card.
    fn refused(log: &[LoggedEvent], secrets: &Secrets, expected: &str) {
        let error = replay(log, secrets).expect_err(expected).to_string();
        assert!(error.contains(expected), "{error}");
        let words: Vec<&str> = error.split(|c: char| !c.is_ascii_alphanumeric()).collect();
        for card in canonical_deck() {
            assert!(!words.contains(&card.code()), "{error} names {card}");
        }
    }

    #[test]
    fn a_legal_log_replays() {
        let game = dealt_game();
        let state = replay(&game.log, &game.secrets).expect("a legal log");
        assert_eq!(state, game.state);
        assert_eq!(state.version, 6);
        assert_eq!(state.stage, Some(Stage::Draw));
    }

    /// Moves that draw from the stock and discard, the first one legal being played, until the
    /// stock runs out and is reshuffled.
    const HOARD: [Move; 3] = [
        Move::Draw {
            source: Source::Stock,
        },
        Move::Discard,
        Move::Pass,
    ];

    /// Plays game `number` of a series that goes through every rule option, two to four seats,
    /// turn caps and reshuffles; bots choose the moves.
    fn play(number: u8) -> Game {
        let seats = 2 + number % 3;
        let flip = [FlipRule::Never, FlipRule::Optional, FlipRule::Always][usize::from(number % 3)];
        let cap = u32::from(seats) * if number.is_multiple_of(2) { 3 } else { 60 };
        let rules = Rules::resolve(seats, Some(number % 5 < 2), Some(flip), Some(cap)).unwrap();
        let mut game = Game::new([number; 32]);
        game.create(u128::from(number), seats, 3, rules);
        let bot = |seat: Seat| [BotKind::Random, BotKind::Greedy][usize::from((seat + number) % 2)];
        for seat in 0..seats {
            game.join("Bot", Some(bot(seat)));
        }
        // In every fourth game the seats hoard until the turn cap.
        let mut rng = rand::rngs::SmallRng::seed_from_u64(u64::from(number));
        while let Some(seat) = (0..seats).find(|&s| !legal_moves(&game.state, s).is_empty()) {
            let legal = legal_moves(&game.state, seat);
            let mv = match HOARD.iter().find(|mv| legal.contains(mv)) {
                Some(mv) if number % 4 == 3 => *mv,
                _ => choose(bot(seat), &observe(&game.state, seat), &mut rng),
            };
            game.run(Command::Play { seat, mv });
        }
        game
    }

    #[test]
    fn every_game_the_bots_play_replays_to_its_state() {
        // No false alarm: every command re-decides to the events logged, and the log replays to
        // the state that decide and apply reached.
        let (mut capped, mut reshuffled) = (false, false);
        for number in 0..24 {
            let game = play(number);
            assert_eq!(game.state.status, Status::Finished);
            for logged in &game.log {
                match logged.event {
                    Event::StockReshuffled { .. } => reshuffled = true,
                    Event::HoleEnded {
                        reason: EndReason::TurnCap,
                        ..
                    } => capped = true,
                    _ => {}
                }
            }
            assert_eq!(
                replay(&game.log, &game.secrets),
                Ok(game.state),
                "game {number}"
            );
        }
        assert!(
            capped && reshuffled,
            "turn caps: {capped}, reshuffles: {reshuffled}"
        );
    }

    #[test]
    fn a_log_cut_after_any_entry_replays_as_a_prefix_only() {
        // A replay asks for the state after any entry, even one inside the events of a command
        // (a reshuffle before its draw, a hole's end before the next deal): the prefix replays,
        // while as a whole log it lacks the rest of its command.
        let mut game = Game::new([5; 32]);
        game.create(5, 2, 1, Rules::resolve(2, None, None, Some(41)).unwrap());
        game.join("Ada", None);
        game.join("Bob", None);
        while let Some(seat) = (0..2).find(|&s| !legal_moves(&game.state, s).is_empty()) {
            let legal = legal_moves(&game.state, seat);
            let mv = HOARD.into_iter().find(|mv| legal.contains(mv));
            game.run(Command::Play {
                seat,
                mv: mv.unwrap_or(legal[0]),
            });
        }
        let log = &game.log;
        assert!(
            log.iter()
                .any(|logged| matches!(logged.event, Event::StockReshuffled { .. }))
        );
        // The state after each entry, as the game reached it event by event.
        let mut state = State::default();
        let mut cut_inside = Vec::new();
        for (n, logged) in log.iter().enumerate() {
            apply(&mut state, &logged.event, logged.at);
            let prefix = &log[..=n];
            assert_eq!(
                replay_prefix(prefix, &game.secrets).as_ref(),
                Ok(&state),
                "entry {}",
                n + 1
            );
            if replay(prefix, &game.secrets).is_err() {
                cut_inside.push(logged.event.kind());
            }
        }
        // The last join before its deal, the reshuffle before its draw, the last discard and
        // the hole's end before the end of the game.
        assert_eq!(
            cut_inside,
            [
                "player_joined",
                "stock_reshuffled",
                "card_discarded",
                "hole_ended"
            ]
        );
        let dealt = dealt_game();
        let error = replay(&dealt.log[..3], &dealt.secrets).expect_err("cut inside a join");
        assert_eq!(error.seq(), 3);
        refused(
            &dealt.log[..3],
            &dealt.secrets,
            "the log ends with entry 3 (player_joined) where the rules log hole_dealt next",
        );
    }

    #[test]
    fn a_corrupt_log_is_refused_before_it_reaches_apply() {
        // Each of these would make apply panic (an overflow, an index out of range) or
        // produce a state no game can be in.
        let game = dealt_game();
        let (log, secrets) = (&game.log, &game.secrets);
        refused(
            &with(log, 4, |data| data["dealer"] = json!(255)),
            secrets,
            "entry 4 (hole_dealt) is not what the rules decide: dealer differs",
        );
        refused(
            &with(log, 5, |data| data["seat"] = json!(200)),
            secrets,
            "entry 5 (cards_revealed) is refused by the rules: no_such_seat",
        );
        refused(
            &with(log, 5, |data| data["cards"][0] = json!("KH")),
            secrets,
            "entry 5 (cards_revealed) is not what the rules decide: cards differs",
        );
        let mut crowded = log[..3].to_vec();
        for seat in 2..10 {
            crowded.push(edited(&log[1], |data| data["seat"] = json!(seat)));
        }
        crowded.push(log[3].clone());
        refused(
            &renumbered(crowded),
            secrets,
            "entry 4 (player_joined) is where the rules log hole_dealt",
        );
        refused(
            &renumbered(log[1..].to_vec()),
            secrets,
            "entry 1 (player_joined) is refused by the rules: not_found",
        );
        let mut twice = log.clone();
        twice.insert(4, log[3].clone());
        refused(
            &renumbered(twice),
            secrets,
            "entry 5 (hole_dealt) starts no command",
        );
    }

    #[test]
    fn deals_reshuffles_and_the_commitment_are_checked_against_the_secrets() {
        // Cards that could be dealt, in an order the server seed does not give: only the seed
        // tells.
        let game = dealt_game();
        let (log, secrets) = (&game.log, &game.secrets);
        refused(
            &with(log, 4, |data| {
                data["deck"].as_array_mut().unwrap().swap(20, 30)
            }),
            secrets,
            "entry 4 (hole_dealt) is not what the rules decide: deck differs",
        );
        let other = Secrets {
            server_seed: [4; 32],
            decks: Vec::new(),
        };
        refused(
            log,
            &other,
            "entry 1 (game_created) is not what the rules decide: commitment differs",
        );
        let stacked = Secrets {
            server_seed: secrets.server_seed,
            decks: vec![canonical_deck()],
        };
        refused(
            log,
            &stacked,
            "entry 1 (game_created) is not what the rules decide: stacked differs",
        );

        let game = play(3);
        let seq = game
            .log
            .iter()
            .find(|logged| matches!(logged.event, Event::StockReshuffled { .. }))
            .expect("a reshuffle")
            .seq;
        let log = with(&game.log, seq as usize, |data| {
            let order = data["order"].as_array_mut().unwrap();
            let last = order.len() - 1;
            order.swap(1, last);
        });
        refused(
            &log,
            &game.secrets,
            &format!("entry {seq} (stock_reshuffled) is not what the rules decide: order differs"),
        );
    }
}
