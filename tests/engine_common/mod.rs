//! Helpers shared by the engine's integration tests: setting up games and playing moves.
#![allow(dead_code)]

use golf_server::engine::{
    Card, ClientSeed, Command, Event, FlipRule, Move, PlayerName, Position, RuleError, Rules, Seat,
    Secrets, Source, State, Timestamp, execute, game_deck, shuffle,
};
use uuid::Uuid;

/// A server seed that is the same in every test.
pub const SERVER_SEED: [u8; 32] = [7; 32];

/// A game being played in a test: the state, its secrets and every event so far.
pub struct Game {
    pub state: State,
    pub secrets: Secrets,
    pub events: Vec<Event>,
    /// The time each of `events` was logged at.
    pub times: Vec<Timestamp>,
    /// The time of the last command, one tick per command.
    pub clock: i64,
}

impl Game {
    /// Executes a command, its events logged one tick after the last command; returns them.
    pub fn run(&mut self, command: &Command) -> Result<Vec<Event>, RuleError> {
        let at = Timestamp(self.clock + 1);
        let events = execute(&mut self.state, command, &self.secrets, at)?;
        self.clock += 1;
        self.events.extend(events.iter().cloned());
        self.times.extend(events.iter().map(|_| at));
        Ok(events)
    }

    /// Plays a move of `seat`.
    pub fn play(&mut self, seat: Seat, mv: Move) -> Result<Vec<Event>, RuleError> {
        self.run(&Command::Play { seat, mv })
    }

    /// Plays a move that must be accepted.
    pub fn ok(&mut self, seat: Seat, mv: Move) -> Vec<Event> {
        self.play(seat, mv)
            .unwrap_or_else(|e| panic!("seat {seat} {mv:?} refused: {e}"))
    }

    /// Every seat reveals positions 0 and 1.
    pub fn reveal_all(&mut self) {
        for seat in 0..self.state.seats {
            self.ok(seat, reveal(0, 1));
        }
    }

    /// The error code of a refused move.
    pub fn code(&mut self, seat: Seat, mv: Move) -> &'static str {
        match self.play(seat, mv) {
            Ok(events) => panic!("seat {seat} {mv:?} accepted: {events:?}"),
            Err(e) => e.code(),
        }
    }

    /// The current seat draws from the stock and discards.
    pub fn draw_and_discard(&mut self) -> Seat {
        let seat = self.state.current_seat.expect("a seat to play");
        self.ok(seat, draw(Source::Stock));
        self.ok(seat, Move::Discard);
        seat
    }

    /// The current seat draws from the stock and swaps into its first face-down position.
    pub fn draw_and_fill(&mut self) -> Seat {
        let seat = self.state.current_seat.expect("a seat to play");
        let player = &self.state.players[usize::from(seat)];
        let position = (0..player.grid.len())
            .find(|&p| !player.face_up[p])
            .expect("a face-down card");
        self.ok(seat, draw(Source::Stock));
        self.ok(seat, swap(position as u8));
        seat
    }
}

/// Rules with the given options.
pub fn rules(final_turns: bool, flip: FlipRule, max_turns: u32) -> Rules {
    Rules {
        final_turns,
        flip_after_discard: flip,
        max_turns_per_hole: max_turns,
        ..Rules::default()
    }
}

/// A created game with free seats.
pub fn created(seats: u8, holes: u8, rules: Rules, decks: Vec<Vec<Card>>) -> Game {
    let mut game = Game {
        state: State::default(),
        secrets: Secrets {
            server_seed: SERVER_SEED,
            decks: decks.clone(),
        },
        events: Vec::new(),
        times: Vec::new(),
        clock: 0,
    };
    game.run(&Command::Create {
        game_id: Uuid::from_u128(42),
        seats,
        holes,
        rules,
        commitment: shuffle::commitment(&SERVER_SEED),
        stacked: !decks.is_empty(),
        rated: false,
    })
    .expect("create");
    game
}

/// Takes the next seat.
pub fn join(game: &mut Game, name: &str) -> Result<Vec<Event>, RuleError> {
    game.run(&Command::Join {
        name: PlayerName::parse(name).expect("a valid name"),
        bot: None,
        client_seed: ClientSeed::default(),
        account: None,
    })
}

/// A game with every seat taken: hole 1 is dealt.
pub fn started(seats: u8, holes: u8, rules: Rules, decks: Vec<Vec<Card>>) -> Game {
    let mut game = created(seats, holes, rules, decks);
    for seat in 0..seats {
        join(&mut game, &format!("Player {seat}")).expect("join");
    }
    game
}

/// A card from its code.
pub fn card(code: &str) -> Card {
    code.parse().expect("a card code")
}

/// A position.
pub fn pos(p: u8) -> Position {
    Position::new(p).expect("a position")
}

/// `reveal [p, q]`.
pub fn reveal(p: u8, q: u8) -> Move {
    Move::Reveal {
        positions: [pos(p), pos(q)].into(),
    }
}

/// `draw source`.
pub fn draw(source: Source) -> Move {
    Move::Draw { source }
}

/// `swap p`.
pub fn swap(p: u8) -> Move {
    Move::Swap { position: pos(p) }
}

/// `flip p`.
pub fn flip(p: u8) -> Move {
    Move::Flip { position: pos(p) }
}

/// The dealt order of a hole dealt by `dealer` that gives each seat the grid listed for it,
/// starts the discard pile with `discard` and puts `stock_top` on the stock (top first); the
/// other cards follow in canonical order.
pub fn stacked_deck(
    dealer: Seat,
    grids: &[[&str; 6]],
    discard: &str,
    stock_top: &[&str],
) -> Vec<Card> {
    let grids: Vec<&[&str]> = grids.iter().map(|g| &g[..]).collect();
    stacked_deck_of(dealer, &grids, discard, stock_top, 0)
}

/// As [`stacked_deck`], for grids of any size and a deck with `jokers` jokers.
pub fn stacked_deck_of(
    dealer: Seat,
    grids: &[&[&str]],
    discard: &str,
    stock_top: &[&str],
    jokers: u8,
) -> Vec<Card> {
    let n = grids.len();
    let cells = grids[0].len();
    let mut order: Vec<Card> = (0..cells * n)
        .map(|d| card(grids[(usize::from(dealer) + 1 + d) % n][d / n]))
        .collect();
    order.push(card(discard));
    order.extend(stock_top.iter().map(|c| card(c)));
    for c in game_deck(jokers) {
        if !order.contains(&c) {
            order.push(c);
        }
    }
    assert_eq!(order.len(), 52 + usize::from(jokers), "distinct cards");
    order
}
