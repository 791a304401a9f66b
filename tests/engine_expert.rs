//! The `expert` bot and the analysis of finished games: the expert plays only legal moves under
//! every house rule, never reads a card its seat cannot see, plays the same game again from the
//! same seed; games with expert seats replay; the analysis labels a planted blunder and not the
//! obvious move, the same every time.

mod engine_common;

use engine_common::{Game, card, created, draw, reveal, stacked_deck, started, swap};
use golf_server::engine::analysis::ANALYSIS_SAMPLES;
use golf_server::engine::{
    BotKind, ClientSeed, Command, Label, LoggedEvent, Move, PlayerName, Rules, RulesInput, Source,
    Stage, Timestamp, analyze, choose, observe, play_bot_turns, replay,
};
use rand::SeedableRng;
use rand::rngs::StdRng;

/// A game of `bots`, one hole, under `rules`, played to the end by the bots.
fn bot_game(rules: Rules, bots: &[BotKind]) -> Game {
    let mut game = created(bots.len() as u8, 1, rules, Vec::new());
    for (seat, bot) in bots.iter().enumerate() {
        game.run(&Command::Join {
            name: PlayerName::parse(&format!("{} {seat}", bot.name())).expect("a name"),
            bot: Some(*bot),
            client_seed: ClientSeed::default(),
            account: None,
        })
        .expect("join");
    }
    let events = play_bot_turns(&mut game.state, &game.secrets, Timestamp(10))
        .expect("every bot move is accepted");
    game.times.extend(events.iter().map(|_| Timestamp(10)));
    game.events.extend(events);
    game
}

fn logged(game: &Game) -> Vec<LoggedEvent> {
    game.events
        .iter()
        .zip(&game.times)
        .enumerate()
        .map(|(i, (event, at))| LoggedEvent {
            seq: i as i64 + 1,
            event: event.clone(),
            at: *at,
        })
        .collect()
}

fn rules_of(json: serde_json::Value, seats: u8) -> Rules {
    let input: RulesInput = serde_json::from_value(json).expect("rule options");
    input.resolve(seats).expect("valid rules")
}

#[test]
fn the_expert_finishes_games_under_every_house_rule_and_they_replay() {
    let presets = [
        serde_json::json!({}),
        serde_json::json!({"grid": "2x2", "knock": true}),
        serde_json::json!({"grid": "3x3", "initial_reveal": 3}),
        serde_json::json!({"jokers": 2, "negative_pairs": "keep", "four_of_a_kind": -20}),
        serde_json::json!({"grid": "2x4", "initial_reveal": 0, "final_turns": true,
            "flip_after_discard": "optional"}),
        serde_json::json!({"flip_after_discard": "always"}),
    ];
    for preset in presets {
        let bots = [BotKind::Expert, BotKind::Greedy, BotKind::Expert];
        let game = bot_game(rules_of(preset.clone(), 3), &bots);
        assert!(game.state.winners.is_some(), "{preset}: the game ends");
        let replayed = replay(&logged(&game), &game.secrets).expect("the log replays");
        assert_eq!(replayed, game.state, "{preset}");
    }
}

#[test]
fn the_same_seed_plays_the_same_expert_game() {
    let bots = [BotKind::Expert, BotKind::Expert];
    let first = bot_game(Rules::default(), &bots);
    let second = bot_game(Rules::default(), &bots);
    assert_eq!(first.events, second.events);
}

#[test]
fn the_expert_decides_the_same_whatever_the_cards_it_cannot_see() {
    let mut game = started(2, 1, Rules::default(), Vec::new());
    game.reveal_all();
    let seat = game.state.current_seat.expect("a seat to play");
    game.ok(seat, draw(Source::Stock));
    let mut other = game.state.clone();
    // Swap every face-down card and the stock around: none of them is the seat's to see.
    let hidden = |state: &golf_server::engine::State| {
        let mut cards = Vec::new();
        for player in &state.players {
            for p in 0..player.grid.len() {
                if !player.face_up[p] {
                    cards.push(player.grid[p]);
                }
            }
        }
        cards.extend(state.stock.iter().copied());
        cards
    };
    let mut cards = hidden(&other);
    cards.reverse();
    let mut next = cards.into_iter();
    for player in &mut other.players {
        for p in 0..player.grid.len() {
            if !player.face_up[p] {
                player.grid[p] = next.next().expect("a card");
            }
        }
    }
    other.stock = next.collect();
    assert_ne!(
        hidden(&other),
        hidden(&game.state),
        "the hidden cards differ"
    );
    let (seen, seen_other) = (observe(&game.state, seat), observe(&other, seat));
    assert_eq!(seen, seen_other);
    let mv = choose(BotKind::Expert, &seen, &mut StdRng::seed_from_u64(3));
    let mv_other = choose(BotKind::Expert, &seen_other, &mut StdRng::seed_from_u64(3));
    assert_eq!(mv, mv_other);
    assert!(seen.legal().contains(&mv), "{mv:?} is legal");
}

/// A two-seat hole late in play: seat 1 (to play first) holds a King face up at position 0 and
/// one card face down, seat 0 a Jack face up at position 0 and one card face down, and seat 1 is
/// about to draw a Queen.
fn stacked_game() -> Game {
    let deck = stacked_deck(
        0,
        &[
            ["JS", "5H", "9D", "8C", "7S", "6D"],
            ["KS", "4H", "9C", "8D", "7H", "3D"],
        ],
        "10C",
        &["AH", "AS", "2S", "2H", "3H", "3C", "QH", "QD", "10S"],
    );
    let mut game = started(2, 1, Rules::default(), vec![deck]);
    game.ok(0, reveal(0, 1));
    game.ok(1, reveal(0, 1));
    for _ in 0..6 {
        game.draw_and_fill();
    }
    game
}

#[test]
fn the_analysis_labels_a_planted_blunder_and_not_the_obvious_move() {
    let mut game = stacked_game();
    game.ok(1, draw(Source::Stock));
    game.ok(1, swap(0));
    let blunder_seq = game.events.len() as i64;
    // Seat 0 takes the King off the discard pile over its Jack: the obvious move.
    game.ok(0, draw(Source::Discard));
    game.ok(0, swap(0));
    let good_seq = game.events.len() as i64;
    assert_eq!(game.state.players[0].grid[0], card("KS"));
    for seat in [0, 1] {
        game.run(&Command::Leave { seat }).expect("leave");
    }
    let events = play_bot_turns(&mut game.state, &game.secrets, Timestamp(99)).expect("bots");
    game.times.extend(events.iter().map(|_| Timestamp(99)));
    game.events.extend(events);
    assert!(game.state.winners.is_some(), "the game ends");

    let log = logged(&game);
    let analysis = analyze(&log, ANALYSIS_SAMPLES).expect("a finished game");
    let blunder = analysis
        .decisions
        .iter()
        .find(|d| d.seq == blunder_seq)
        .expect("the swap is judged");
    assert_eq!(blunder.seat, 1);
    assert_eq!(blunder.label, Some(Label::Blunder), "{blunder:?}");
    assert_ne!(blunder.best, blunder.played);
    assert!(blunder.expected_played - blunder.expected_best >= 5.0);
    let good = analysis
        .decisions
        .iter()
        .find(|d| d.seq == good_seq)
        .expect("the good swap is judged");
    assert_eq!(good.label, None, "{good:?}");
    assert!(analysis.seats[1].blunders >= 1);
    assert_eq!(analysis, analyze(&log, ANALYSIS_SAMPLES).expect("again"));
}

#[test]
fn an_unfinished_game_is_not_analysed() {
    let game = stacked_game();
    assert!(analyze(&logged(&game), 8).is_err());
    assert_eq!(game.state.stage, Some(Stage::Draw));
    assert!(matches!(
        observe(&game.state, 1).legal().first(),
        Some(Move::Draw { .. })
    ));
}
