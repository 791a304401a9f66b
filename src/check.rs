//! Auditing stored games: every log's hash chain, and its replay through the rules engine
//! against the stored projection (`golf-server check-db`).

use serde_json::{Value, json};
use uuid::Uuid;

use crate::engine::{
    self, Command, Event, Move, Seat, Secrets, Source, State, Timestamp, parse_deck, shuffle,
};
use crate::store::{Entry, EventStore, GameRecord, StoreError, load_log, verify_chain};

/// Games read per page while walking the database.
const PAGE: i64 = 500;

/// What a check of the whole database found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CheckReport {
    /// Games checked.
    pub games: u64,
    /// Log entries checked.
    pub entries: u64,
    /// Every mismatch found, one line per game.
    pub problems: Vec<GameProblem>,
}

/// One game whose log or projection is not what it should be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameProblem {
    /// The game.
    pub game_id: Uuid,
    /// What is wrong.
    pub problem: String,
}

/// The engine event and time of a stored entry; fails naming the entry when it is not an event
/// of the log format. The failure names the entry and not what it holds: serde's message would
/// quote the value it could not read, which may be a card.
pub fn entry_event(entry: &Entry) -> Result<(Event, Timestamp), String> {
    let event = serde_json::from_value(json!({"type": entry.kind, "data": entry.data}))
        .map_err(|_| format!("entry {} ({}) is not a log event", entry.seq, entry.kind))?;
    let at = Timestamp::parse(&entry.at)
        .map_err(|error| format!("entry {} has a bad time: {error}", entry.seq))?;
    Ok((event, at))
}

/// The state a stored projection holds. A failure names the game and the kind of fault, never
/// serde's message, which may quote a stored card.
pub fn projection_state(game_id: Uuid, projection: Value) -> Result<State, StoreError> {
    serde_json::from_value(projection).map_err(|error| {
        StoreError::Corrupt(format!(
            "the projection of game {game_id} does not decode ({:?})",
            error.classify()
        ))
    })
}

/// The secrets of a stored game: its server seed and its explicit decks, if stacked.
pub fn secrets_of(record: &GameRecord) -> Result<Secrets, StoreError> {
    let decks = match &record.decks {
        None => Vec::new(),
        Some(json) => serde_json::from_value::<Vec<Vec<String>>>(json.clone())
            .ok()
            .and_then(|decks| decks.iter().map(|deck| parse_deck(deck).ok()).collect())
            .ok_or_else(|| StoreError::Corrupt(format!("decks of game {}", record.id)))?,
    };
    Ok(Secrets {
        server_seed: record.server_seed,
        decks,
    })
}

/// Replays a whole stored log through the engine from the empty state, re-deciding every
/// command it records (see `replay`).
pub fn rebuild(entries: &[Entry], secrets: &Secrets) -> Result<State, String> {
    replay(entries, secrets, true)
}

/// As [`rebuild`], for the first entries of a log, cut after any entry (as a replay asks): the
/// last command's events may be cut short.
pub fn rebuild_prefix(entries: &[Entry], secrets: &Secrets) -> Result<State, String> {
    replay(entries, secrets, false)
}

/// Walks the log a command at a time: each entry that starts a command gives back the command
/// that produced it, `decide` runs it with the game's secrets, and the events it decides must be
/// the next entries exactly before `apply` takes them, each at its own entry's time. So every
/// check of the rules is the engine's own, deals and reshuffles are checked against the server
/// seed, and the engine's `apply`, which trusts its events, only sees events `decide` made.
///
/// A problem is described by seq, entry type and field name: never by a card or a seed, as it
/// goes to the server's logs. `whole` requires the last command's events to be all there.
fn replay(entries: &[Entry], secrets: &Secrets, whole: bool) -> Result<State, String> {
    let mut state = State::default();
    let mut next = 0;
    while let Some(first) = entries.get(next) {
        let (event, _) = entry_event(first)?;
        let command = command_of(&state, &event, secrets)
            .map_err(|why| format!("entry {} ({}) {why}", first.seq, first.kind))?;
        let decided = engine::decide(&state, &command, secrets).map_err(|error| {
            format!(
                "entry {} ({}) is refused by the rules: {}",
                first.seq,
                first.kind,
                error.code()
            )
        })?;
        for expected in &decided {
            let Some(entry) = entries.get(next) else {
                if whole {
                    let last = &entries[next - 1];
                    return Err(format!(
                        "the log ends with entry {} ({}) where the rules log {} next",
                        last.seq,
                        last.kind,
                        type_of(expected)
                    ));
                }
                break;
            };
            let (stored, at) = entry_event(entry)?;
            if stored != *expected {
                return Err(difference(entry, &stored, expected));
            }
            engine::apply(&mut state, expected, at);
            next += 1;
        }
    }
    Ok(state)
}

/// The command whose events start with `event`, or why no command starts with it.
fn command_of(state: &State, event: &Event, secrets: &Secrets) -> Result<Command, &'static str> {
    let play = |seat: Seat, mv: Move| Ok(Command::Play { seat, mv });
    match event {
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
            None => Err("is a reshuffle on nobody's turn"),
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
            Err("starts no command, yet comes where the next command should start")
        }
    }
}

/// How the stored event of `entry` differs from the one the rules decide: by type, else by the
/// names of the fields whose values differ.
fn difference(entry: &Entry, stored: &Event, expected: &Event) -> String {
    let (stored, expected) = (to_json(stored), to_json(expected));
    if stored["type"] != expected["type"] {
        return format!(
            "entry {} ({}) is where the rules log {}",
            entry.seq,
            entry.kind,
            expected["type"].as_str().unwrap_or_default()
        );
    }
    let fields: Vec<&str> = expected["data"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|&(field, value)| stored["data"].get(field) != Some(value))
        .map(|(field, _)| field.as_str())
        .collect();
    format!(
        "entry {} ({}) is not what the rules decide: {} differs",
        entry.seq,
        entry.kind,
        fields.join(", ")
    )
}

/// The `type` of an event in the log.
fn type_of(event: &Event) -> String {
    to_json(event)["type"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn to_json(event: &Event) -> Value {
    serde_json::to_value(event).expect("events serialize to JSON")
}

/// Checks every game in the store. A game whose row or log does not decode is reported as that
/// game's problem and the pass goes on; only a database that fails to answer ends it.
pub async fn check_database(store: &dyn EventStore) -> Result<CheckReport, StoreError> {
    let mut report = CheckReport::default();
    let mut after = None;
    loop {
        let ids = store.game_ids(after, PAGE).await?;
        let Some(last) = ids.last() else {
            return Ok(report);
        };
        after = Some(*last);
        for id in ids {
            report.games += 1;
            match check_game(store, id, &mut report).await {
                Ok(entries) => report.entries += entries,
                Err(StoreError::Corrupt(error)) => report.problems.push(GameProblem {
                    game_id: id,
                    problem: format!("stored data does not decode: {error}"),
                }),
                Err(error) => return Err(error),
            }
        }
    }
}

/// Checks one game, recording any problem in `report`; returns the number of entries read.
async fn check_game(
    store: &dyn EventStore,
    id: Uuid,
    report: &mut CheckReport,
) -> Result<u64, StoreError> {
    // A game cancelled since it was listed is no longer there to check.
    let Some(record) = store.load_game(id).await? else {
        return Ok(0);
    };
    // Entries up to the version read never change, so a game played on while it is checked
    // still checks out.
    let entries = load_log(store, id, record.version).await?;
    let secrets = secrets_of(&record)?;
    // An entry past the version makes every later append collide with it. A live game may have
    // moved on since it was read: only an entry still past the version read again is stray.
    let stray = match store.load_events(id, record.version, 1).await?.first() {
        Some(next) => match store.load_game(id).await? {
            Some(now) if now.version < next.seq => Some((next.seq, now.version)),
            _ => None,
        },
        None => None,
    };
    let mut problem = |text: String| {
        report.problems.push(GameProblem {
            game_id: id,
            problem: text,
        })
    };
    if entries.len() as i64 != record.version {
        problem(format!(
            "version {} but {} log entries",
            record.version,
            entries.len()
        ));
    }
    if let Some((seq, version)) = stray {
        problem(format!(
            "entry {seq} is past the version {version}: the next append would collide with it"
        ));
    }
    match verify_chain(&record.server_seed, &entries) {
        Ok(head) if head != record.head_hash => {
            problem("the stored head hash is not the hash of the last entry".to_owned())
        }
        Ok(_) => {}
        Err(error) => problem(format!("hash chain: {error}")),
    }
    match rebuild(&entries, &secrets) {
        Ok(rebuilt) => match projection_state(id, record.projection.clone()) {
            Ok(stored) if stored == rebuilt => {}
            Ok(_) => problem("the projection differs from the replayed log".to_owned()),
            Err(error) => problem(error.to_string()),
        },
        Err(error) => problem(error),
    }
    Ok(entries.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{
        BotKind, ClientSeed, EndReason, FlipRule, PlayerName, Position, Rules, Stage, Status,
        canonical_deck, choose, decide, observe,
    };

    /// The log entries of `events`, as the store would hold them (without a real chain).
    fn entries_of(events: &[Event]) -> Vec<Entry> {
        events
            .iter()
            .enumerate()
            .map(|(i, event)| {
                let json = to_json(event);
                Entry {
                    seq: i as i64 + 1,
                    at: Timestamp(i as i64).to_string(),
                    kind: json["type"].as_str().unwrap().to_owned(),
                    data: json["data"].clone(),
                    salt: String::new(),
                    hash: String::new(),
                }
            })
            .collect()
    }

    /// Runs commands as the service does, recording the events and the state after each.
    struct Game {
        secrets: Secrets,
        state: State,
        events: Vec<Event>,
        states: Vec<State>,
    }

    impl Game {
        fn new(server_seed: [u8; 32]) -> Game {
            Game {
                secrets: Secrets {
                    server_seed,
                    decks: Vec::new(),
                },
                state: State::default(),
                events: Vec::new(),
                states: Vec::new(),
            }
        }

        fn run(&mut self, command: Command) {
            for event in decide(&self.state, &command, &self.secrets).unwrap() {
                let at = Timestamp(self.events.len() as i64);
                engine::apply(&mut self.state, &event, at);
                self.events.push(event);
                self.states.push(self.state.clone());
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

    fn with(entries: &[Entry], seq: usize, change: impl FnOnce(&mut Value)) -> Vec<Entry> {
        let mut entries = entries.to_vec();
        change(&mut entries[seq - 1].data);
        entries
    }

    /// `entries` numbered 1, 2, ... in their order.
    fn renumbered(mut entries: Vec<Entry>) -> Vec<Entry> {
        for (i, entry) in entries.iter_mut().enumerate() {
            entry.seq = i as i64 + 1;
        }
        entries
    }

    /// Asserts that rebuilding `entries` fails saying `expected`, in words that name no card.
    fn refused(entries: &[Entry], secrets: &Secrets, expected: &str) {
        let error = rebuild(entries, secrets).expect_err(expected);
        assert!(error.contains(expected), "{error}");
        let words: Vec<&str> = error.split(|c: char| !c.is_ascii_alphanumeric()).collect();
        for card in canonical_deck() {
            assert!(!words.contains(&card.code()), "{error} names {card}");
        }
    }

    #[test]
    fn a_legal_log_rebuilds() {
        let game = dealt_game();
        let state = rebuild(&entries_of(&game.events), &game.secrets).expect("a legal log");
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
        use rand::SeedableRng;

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
        while let Some(seat) = (0..seats).find(|&s| !engine::legal_moves(&game.state, s).is_empty())
        {
            let legal = engine::legal_moves(&game.state, seat);
            let mv = match HOARD.iter().find(|mv| legal.contains(mv)) {
                Some(mv) if number % 4 == 3 => *mv,
                _ => choose(bot(seat), &observe(&game.state, seat), &mut rng),
            };
            game.run(Command::Play { seat, mv });
        }
        game
    }

    #[test]
    fn every_game_the_bots_play_rebuilds_to_its_state() {
        // No false alarm: every command re-decides to the events logged, and the log replays to
        // the state that decide and apply reached.
        let (mut capped, mut reshuffled) = (false, false);
        for number in 0..24 {
            let game = play(number);
            assert_eq!(game.state.status, Status::Finished);
            for event in &game.events {
                match event {
                    Event::StockReshuffled { .. } => reshuffled = true,
                    Event::HoleEnded {
                        reason: EndReason::TurnCap,
                        ..
                    } => capped = true,
                    _ => {}
                }
            }
            let entries = entries_of(&game.events);
            assert_eq!(
                rebuild(&entries, &game.secrets),
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
    fn a_log_cut_after_any_entry_rebuilds_as_a_prefix_only() {
        // A replay asks for the state after any entry, even one inside the events of a command
        // (a reshuffle before its draw, a hole's end before the next deal): the prefix replays,
        // while as a whole log it lacks the rest of its command.
        let mut game = Game::new([5; 32]);
        game.create(5, 2, 1, Rules::resolve(2, None, None, Some(41)).unwrap());
        game.join("Ada", None);
        game.join("Bob", None);
        while let Some(seat) = (0..2).find(|&s| !engine::legal_moves(&game.state, s).is_empty()) {
            let legal = engine::legal_moves(&game.state, seat);
            let mv = HOARD.into_iter().find(|mv| legal.contains(mv));
            game.run(Command::Play {
                seat,
                mv: mv.unwrap_or(legal[0]),
            });
        }
        let entries = entries_of(&game.events);
        assert!(entries.iter().any(|entry| entry.kind == "stock_reshuffled"));
        let mut cut_inside = Vec::new();
        for (n, state) in game.states.iter().enumerate() {
            let prefix = &entries[..=n];
            assert_eq!(
                rebuild_prefix(prefix, &game.secrets).as_ref(),
                Ok(state),
                "entry {}",
                n + 1
            );
            if rebuild(prefix, &game.secrets).is_err() {
                cut_inside.push(entries[n].kind.as_str());
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
        refused(
            &entries_of(&dealt.events)[..3],
            &dealt.secrets,
            "the log ends with entry 3 (player_joined) where the rules log hole_dealt next",
        );
    }

    #[test]
    fn a_corrupt_log_is_refused_before_it_reaches_apply() {
        // Each of these would make apply panic (an overflow, an index out of range) or
        // produce a state no game can be in.
        let game = dealt_game();
        let (log, secrets) = (entries_of(&game.events), &game.secrets);
        refused(
            &with(&log, 4, |data| data["dealer"] = json!(255)),
            secrets,
            "entry 4 (hole_dealt) is not what the rules decide: dealer differs",
        );
        refused(
            &with(&log, 5, |data| data["seat"] = json!(200)),
            secrets,
            "entry 5 (cards_revealed) is refused by the rules: no_such_seat",
        );
        refused(
            &with(&log, 5, |data| data["cards"][0] = json!("KH")),
            secrets,
            "entry 5 (cards_revealed) is not what the rules decide: cards differs",
        );
        let mut crowded = log[..3].to_vec();
        for seat in 2..10 {
            let mut join = log[1].clone();
            join.data["seat"] = json!(seat);
            crowded.push(join);
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
        refused(
            &with(&log, 2, |data| data["name"] = json!("")),
            secrets,
            "entry 2 (player_joined) is not a log event",
        );
    }

    #[test]
    fn deals_reshuffles_and_the_commitment_are_checked_against_the_secrets() {
        // Cards that could be dealt, in an order the server seed does not give: only the seed
        // tells.
        let game = dealt_game();
        let (log, secrets) = (entries_of(&game.events), &game.secrets);
        refused(
            &with(&log, 4, |data| {
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
            &log,
            &other,
            "entry 1 (game_created) is not what the rules decide: commitment differs",
        );
        let stacked = Secrets {
            server_seed: secrets.server_seed,
            decks: vec![canonical_deck()],
        };
        refused(
            &log,
            &stacked,
            "entry 1 (game_created) is not what the rules decide: stacked differs",
        );

        let game = play(3);
        let mut log = entries_of(&game.events);
        let reshuffle = log
            .iter_mut()
            .find(|entry| entry.kind == "stock_reshuffled")
            .expect("a reshuffle");
        let seq = reshuffle.seq;
        let order = reshuffle.data["order"].as_array_mut().unwrap();
        let last = order.len() - 1;
        order.swap(1, last);
        refused(
            &log,
            &game.secrets,
            &format!("entry {seq} (stock_reshuffled) is not what the rules decide: order differs"),
        );
    }
}
