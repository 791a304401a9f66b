//! Auditing stored games: every log's hash chain, and its replay through the rules engine
//! against the stored projection (`golf-server check-db`).

use serde_json::json;
use uuid::Uuid;

use crate::engine::{
    self, Card, Event, LOG_FORMAT, Move, Rules, Seat, Source, Stage, State, Status, Timestamp,
    canonical_deck, grid_score, shuffle,
};
use crate::store::{Entry, EventStore, StoreError, load_log, verify_chain};

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

/// Replays stored entries through the engine from the empty state, checking first that each
/// event is one the rules could have logged next (see `check_event`): the engine's `apply`
/// trusts its events, so a corrupt log must be refused before it reaches it.
pub fn rebuild(entries: &[Entry]) -> Result<State, String> {
    let mut state = State::default();
    for entry in entries {
        let (event, at) = entry_event(entry)?;
        check_event(&state, &event).map_err(|why| {
            format!(
                "entry {} ({}) breaks the rules: {why}",
                entry.seq, entry.kind
            )
        })?;
        engine::apply(&mut state, &event, at);
    }
    Ok(state)
}

/// Whether `event` is one that `decide` could have produced next on `state`: the checks of the
/// engine (a free seat for a join, a legal move of the seat whose turn it is), and every card it
/// names where the state has it. A deal or a reshuffle must hold the right cards; whether their
/// order is the one the server seed gives is not checked here (the log does not hold the seed
/// until the game ends).
fn check_event(state: &State, event: &Event) -> Result<(), String> {
    if state.game_id.is_none() && !matches!(event, Event::GameCreated { .. }) {
        return Err("the log does not start with game_created".to_owned());
    }
    match event {
        Event::GameCreated {
            format,
            seats,
            holes,
            rules,
            ..
        } => {
            ensure(state.game_id.is_none(), || {
                "the game is already created".to_owned()
            })?;
            ensure(format == LOG_FORMAT, || {
                format!("format {format:?} is not {LOG_FORMAT:?}")
            })?;
            engine::check_game_size(i64::from(*seats), i64::from(*holes))
                .map_err(|e| e.to_string())?;
            Rules::resolve(
                *seats,
                Some(rules.final_turns),
                Some(rules.flip_after_discard),
                Some(rules.max_turns_per_hole),
            )
            .map(drop)
            .map_err(|e| e.to_string())
        }
        Event::PlayerJoined { seat, .. } => {
            let next = engine::check_join(state).map_err(|e| e.to_string())?;
            ensure(*seat == next, || {
                format!("seat {seat} joined where seat {next} was next")
            })
        }
        Event::HoleDealt {
            hole,
            dealer,
            discard,
            deck,
        } => {
            let due = if state.hole == 0 {
                state.status == Status::Waiting && state.players.len() == usize::from(state.seats)
            } else {
                state.status == Status::Playing && hole_scored(state) && state.hole < state.holes
            };
            ensure(due && *hole == state.hole + 1, || {
                format!("hole {hole} is not the hole to deal")
            })?;
            let expected_dealer = (hole - 1) % state.seats;
            ensure(*dealer == expected_dealer, || {
                format!("dealer {dealer} where seat {expected_dealer} deals")
            })?;
            ensure(same_cards(deck, &canonical_deck()), || {
                "the deck is not the 52 cards".to_owned()
            })?;
            ensure(*discard == deck[6 * usize::from(state.seats)], || {
                format!("discard {discard} is not the first card after the grids")
            })
        }
        Event::CardsRevealed {
            seat,
            positions: [p, q],
            cards,
        } => {
            // The legal moves list each pair once, in order.
            let positions = [*p.min(q), *p.max(q)];
            legal(state, *seat, Move::Reveal { positions })?;
            let grid = state.players[usize::from(*seat)].grid;
            ensure(*cards == [grid[p.index()], grid[q.index()]], || {
                "the revealed cards are not those of the grid".to_owned()
            })
        }
        Event::StockReshuffled {
            hole,
            shuffle,
            order,
        } => {
            let seat = state
                .current_seat
                .ok_or_else(|| "a reshuffle on nobody's turn".to_owned())?;
            legal(
                state,
                seat,
                Move::Draw {
                    source: Source::Stock,
                },
            )?;
            ensure(state.stock.is_empty(), || {
                "a reshuffle while the stock holds cards".to_owned()
            })?;
            ensure(
                *hole == state.hole && *shuffle == state.shuffles + 1,
                || format!("shuffle {shuffle} of hole {hole} is not the next reshuffle"),
            )?;
            let below_top = state.discard.split_last().map_or(&[][..], |(_, rest)| rest);
            ensure(!order.is_empty() && same_cards(order, below_top), || {
                "the new stock is not the discard pile below its top card".to_owned()
            })
        }
        Event::CardDrawn { seat, source, card } => {
            legal(state, *seat, Move::Draw { source: *source })?;
            let (top, pile) = match source {
                Source::Stock => (state.stock.last(), "stock"),
                Source::Discard => (state.discard.last(), "discard pile"),
            };
            ensure(top == Some(card), || {
                format!("{card} is not the top card of the {pile}")
            })
        }
        Event::CardSwapped {
            seat,
            position,
            card,
            replaced,
        } => {
            legal(
                state,
                *seat,
                Move::Swap {
                    position: *position,
                },
            )?;
            drawn(state, *card)?;
            let there = state.players[usize::from(*seat)].grid[position.index()];
            ensure(*replaced == there, || {
                format!("{replaced} was replaced where the grid holds {there}")
            })
        }
        Event::CardDiscarded { seat, card } => {
            legal(state, *seat, Move::Discard)?;
            drawn(state, *card)
        }
        Event::CardFlipped {
            seat,
            position,
            card,
        } => {
            legal(
                state,
                *seat,
                Move::Flip {
                    position: *position,
                },
            )?;
            let there = state.players[usize::from(*seat)].grid[position.index()];
            ensure(*card == there, || {
                format!("{card} was flipped where the grid holds {there}")
            })
        }
        Event::FlipDeclined { seat } => legal(state, *seat, Move::Pass),
        Event::HoleEnded {
            hole,
            grids,
            scores,
            ..
        } => {
            let over = state.status == Status::Playing
                && state.stage == Some(Stage::HoleOver)
                && !hole_scored(state);
            ensure(over && *hole == state.hole, || {
                format!("hole {hole} ended while it is not over")
            })?;
            let expected: Vec<[Card; 6]> = state.players.iter().map(|p| p.grid).collect();
            ensure(*grids == expected, || {
                "the grids are not the players' grids".to_owned()
            })?;
            let expected: Vec<i32> = grids.iter().map(grid_score).collect();
            ensure(*scores == expected, || {
                format!("scores {scores:?} where the grids score {expected:?}")
            })
        }
        Event::GameEnded {
            totals,
            winners,
            seed,
        } => {
            let over =
                state.status == Status::Playing && hole_scored(state) && state.hole == state.holes;
            ensure(over, || "the game ended before its last hole".to_owned())?;
            let expected: Vec<i32> = state.players.iter().map(|p| p.total).collect();
            ensure(*totals == expected, || {
                format!("totals {totals:?} where the holes add up to {expected:?}")
            })?;
            let best = expected.iter().min();
            let expected: Vec<Seat> = (0..state.seats)
                .filter(|&seat| expected.get(usize::from(seat)) == best)
                .collect();
            ensure(*winners == expected, || {
                format!("winners {winners:?} where the lowest totals are {expected:?}")
            })?;
            let seed: [u8; 32] = hex::decode(seed)
                .ok()
                .and_then(|bytes| bytes.try_into().ok())
                .ok_or_else(|| "the seed is not 32 bytes of hex".to_owned())?;
            ensure(shuffle::commitment(&seed) == state.commitment, || {
                "the seed does not match the commitment".to_owned()
            })
        }
    }
}

fn ensure(ok: bool, problem: impl FnOnce() -> String) -> Result<(), String> {
    if ok { Ok(()) } else { Err(problem()) }
}

/// Whether `seat` may make `mv` now.
fn legal(state: &State, seat: Seat, mv: Move) -> Result<(), String> {
    ensure(engine::legal_move_list(state, seat).contains(&mv), || {
        format!("seat {seat} may not make the move {} now", json!(mv))
    })
}

/// Whether `card` is the card drawn and not yet placed.
fn drawn(state: &State, card: Card) -> Result<(), String> {
    ensure(state.drawn.is_some_and(|drawn| drawn.card == card), || {
        format!("{card} is not the card drawn")
    })
}

/// Whether the current hole is scored (its `hole_ended` applied).
fn hole_scored(state: &State) -> bool {
    state
        .last_hole
        .as_ref()
        .is_some_and(|last| last.hole == state.hole)
}

/// Whether `cards` and `expected` hold the same cards, in any order.
fn same_cards(cards: &[Card], expected: &[Card]) -> bool {
    let (mut cards, mut expected) = (cards.to_vec(), expected.to_vec());
    cards.sort_unstable();
    expected.sort_unstable();
    cards == expected
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
    match rebuild(&entries) {
        Ok(rebuilt) => match serde_json::from_value::<State>(record.projection.clone()) {
            Ok(stored) if stored == rebuilt => {}
            Ok(_) => problem("the projection differs from the replayed log".to_owned()),
            Err(error) => problem(format!("the projection does not parse: {error}")),
        },
        Err(error) => problem(error),
    }
    Ok(entries.len() as u64)
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::engine::{ClientSeed, Command, PlayerName, Secrets, decide};

    /// The log entries of `events`, as the store would hold them (without a real chain).
    fn entries_of(events: &[Event]) -> Vec<Entry> {
        events
            .iter()
            .enumerate()
            .map(|(i, event)| {
                let json = serde_json::to_value(event).unwrap();
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

    /// A two-seat game just dealt, with both seats revealed: its log as entries.
    fn dealt_game() -> Vec<Entry> {
        let secrets = Secrets {
            server_seed: [3; 32],
            decks: Vec::new(),
        };
        let mut state = State::default();
        let mut events = Vec::new();
        let mut run = |state: &mut State, command: Command| {
            for event in decide(state, &command, &secrets).unwrap() {
                engine::apply(state, &event, Timestamp(0));
                events.push(event);
            }
        };
        run(
            &mut state,
            Command::Create {
                game_id: Uuid::from_u128(1),
                seats: 2,
                holes: 1,
                rules: Rules::resolve(2, None, None, None).unwrap(),
                commitment: shuffle::commitment(&secrets.server_seed),
                stacked: false,
            },
        );
        for name in ["Ada", "Bob"] {
            let command = Command::Join {
                name: PlayerName::parse(name).unwrap(),
                bot: None,
                client_seed: ClientSeed::default(),
            };
            run(&mut state, command);
        }
        for seat in 0..2 {
            let positions = [0, 1].map(|p| engine::Position::new(p).unwrap());
            run(
                &mut state,
                Command::Play {
                    seat,
                    mv: Move::Reveal { positions },
                },
            );
        }
        entries_of(&events)
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

    #[test]
    fn a_legal_log_rebuilds() {
        let state = rebuild(&dealt_game()).expect("a legal log");
        assert_eq!(state.version, 6);
        assert_eq!(state.stage, Some(Stage::Draw));
    }

    /// Plays game `game` of a series that goes through every rule option, two to four seats,
    /// turn caps and reshuffles; returns its events and its final state.
    fn play(game: u8) -> (Vec<Event>, State) {
        use crate::engine::{BotKind, FlipRule, choose, observe};
        use rand::SeedableRng;

        let seats = 2 + game % 3;
        let flip = [FlipRule::Never, FlipRule::Optional, FlipRule::Always][usize::from(game % 3)];
        let cap = u32::from(seats) * if game.is_multiple_of(2) { 3 } else { 60 };
        let rules = Rules::resolve(seats, Some(game % 5 < 2), Some(flip), Some(cap)).unwrap();
        let secrets = Secrets {
            server_seed: [game; 32],
            decks: Vec::new(),
        };
        let mut state = State::default();
        let mut events = Vec::new();
        let mut run = |state: &mut State, command: Command| {
            for event in decide(state, &command, &secrets).unwrap() {
                engine::apply(state, &event, Timestamp(events.len() as i64));
                events.push(event);
            }
        };
        run(
            &mut state,
            Command::Create {
                game_id: Uuid::from_u128(u128::from(game)),
                seats,
                holes: 3,
                rules,
                commitment: shuffle::commitment(&secrets.server_seed),
                stacked: false,
            },
        );
        let bot = |seat: Seat| [BotKind::Random, BotKind::Greedy][usize::from((seat + game) % 2)];
        for seat in 0..seats {
            let command = Command::Join {
                name: PlayerName::parse("Bot").unwrap(),
                bot: Some(bot(seat)),
                client_seed: ClientSeed::default(),
            };
            run(&mut state, command);
        }
        // In every fourth game the seats draw from the stock and discard until the turn cap, so
        // that the stock runs out and is reshuffled.
        let hoard = [
            Move::Draw {
                source: Source::Stock,
            },
            Move::Discard,
            Move::Pass,
        ];
        let mut rng = rand::rngs::SmallRng::seed_from_u64(u64::from(game));
        while let Some(seat) = (0..seats).find(|&s| !engine::legal_moves(&state, s).is_empty()) {
            let legal = engine::legal_moves(&state, seat);
            let mv = match hoard.iter().find(|mv| legal.contains(mv)) {
                Some(mv) if game % 4 == 3 => *mv,
                _ => choose(bot(seat), &observe(&state, seat), &mut rng),
            };
            run(&mut state, Command::Play { seat, mv });
        }
        (events, state)
    }

    #[test]
    fn every_game_the_bots_play_rebuilds_to_its_state() {
        // No false alarm: every event decide produces passes the checks, and the log replays to
        // the state that decide and apply reached.
        let (mut capped, mut reshuffled) = (false, false);
        for game in 0..24 {
            let (events, state) = play(game);
            assert_eq!(state.status, Status::Finished);
            for event in &events {
                match event {
                    Event::StockReshuffled { .. } => reshuffled = true,
                    Event::HoleEnded {
                        reason: engine::EndReason::TurnCap,
                        ..
                    } => capped = true,
                    _ => {}
                }
            }
            assert_eq!(rebuild(&entries_of(&events)), Ok(state), "game {game}");
        }
        assert!(
            capped && reshuffled,
            "turn caps: {capped}, reshuffles: {reshuffled}"
        );
    }

    #[test]
    fn a_corrupt_log_is_refused_before_it_reaches_apply() {
        // Each of these would make apply panic (an overflow, an index out of range) or
        // produce a state no game can be in.
        let log = dealt_game();
        let refused = |entries: Vec<Entry>, expected: &str| {
            let error = rebuild(&entries).expect_err(expected);
            assert!(error.contains(expected), "{error}");
        };
        refused(
            with(&log, 4, |data| data["dealer"] = json!(255)),
            "entry 4 (hole_dealt) breaks the rules: dealer 255",
        );
        refused(
            with(&log, 5, |data| data["seat"] = json!(200)),
            "entry 5 (cards_revealed) breaks the rules: seat 200 may not",
        );
        refused(
            with(&log, 5, |data| data["cards"][0] = json!("KH")),
            "entry 5 (cards_revealed) breaks the rules: the revealed cards",
        );
        let mut crowded = log[..3].to_vec();
        for seat in 2..10 {
            let mut join = log[1].clone();
            join.data["seat"] = json!(seat);
            crowded.push(join);
        }
        crowded.push(log[3].clone());
        refused(
            renumbered(crowded),
            "entry 4 (player_joined) breaks the rules: Every seat of this game is taken.",
        );
        refused(
            renumbered(log[1..].to_vec()),
            "entry 1 (player_joined) breaks the rules: the log does not start with game_created",
        );
        let mut twice = log.clone();
        twice.insert(4, log[3].clone());
        refused(
            renumbered(twice),
            "entry 5 (hole_dealt) breaks the rules: hole 1 is not the hole to deal",
        );
    }
}
