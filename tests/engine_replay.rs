//! The replay of a log through the rules (`engine::replay`): every legal log replays to the state
//! its commands reached, a cut log replays as a prefix only, and a corrupt or forged log is
//! refused at the entry where it goes wrong, in words that name no card.

use rand::SeedableRng;
use serde_json::{Value, json};
use uuid::Uuid;

use golf_server::engine::{
    BotKind, ClientSeed, EndReason, FlipRule, PlayerName, Position, Rules, Stage, Status,
    canonical_deck, choose, execute, legal_moves, observe,
};
use golf_server::engine::{
    Command, Event, LoggedEvent, Move, Seat, Secrets, Source, State, Timestamp, apply, replay,
    replay_prefix, shuffle,
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
            rated: false,
        });
    }

    fn join(&mut self, name: &str, bot: Option<BotKind>) {
        self.run(Command::Join {
            name: PlayerName::parse(name).unwrap(),
            bot,
            client_seed: ClientSeed::default(),
            account: None,
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
            mv: Move::Reveal {
                positions: positions.into(),
            },
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
        decks: vec![canonical_deck().to_vec()],
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
