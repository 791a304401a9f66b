//! Property tests: random legal play for 2 to 4 seats under random combinations of every rule
//! option (the house-rule variants included) keeps exactly the game's deck in play, ends every
//! hole and the game, scores each hole as an independent scoring written here does, replays
//! exactly from the JSON log, never shows a hidden card in any view, plays the same game again
//! from the same seeds, and `legal_moves` is exactly what `decide` accepts.

mod engine_common;

use std::collections::HashSet;

use engine_common::created;
use golf_server::engine::Command;
use golf_server::engine::{
    Card, Cells, Event, FlipRule, GridShape, Move, Position, Rules, RulesInput, Seat, Source,
    Stage, State, Status, Viewer, apply, decide, legal_moves, view,
};
use proptest::prelude::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Every set of `k` of the nine positions, increasing, in lexicographic order.
fn subsets(k: usize) -> Vec<Vec<Position>> {
    let mut sets = vec![Vec::new()];
    for position in Position::ALL {
        let mut more = Vec::new();
        for set in &sets {
            if set.len() < k {
                let mut bigger = set.clone();
                bigger.push(position);
                more.push(bigger);
            }
        }
        sets.extend(more);
    }
    sets.retain(|set| set.len() == k);
    sets
}

/// Every move of valid shape on the largest grid: reveals of every set of `k` positions (and of
/// one set spelled backwards, and one naming a position twice), both draws, nine swaps, discard,
/// nine flips, pass, knock.
fn all_moves(k: usize) -> Vec<Move> {
    let positions = Position::ALL;
    let mut moves: Vec<Move> = subsets(k)
        .iter()
        .map(|set| Move::Reveal {
            positions: Cells::from_slice(set).expect("at most 9"),
        })
        .collect();
    if k >= 2 {
        let mut backwards: Vec<Position> = positions[..k].to_vec();
        backwards.reverse();
        let mut twice = backwards.clone();
        twice[0] = twice[1];
        for set in [backwards, twice] {
            let positions = Cells::from_slice(&set).expect("at most 9");
            moves.push(Move::Reveal { positions });
        }
    }
    moves.push(Move::Draw {
        source: Source::Stock,
    });
    moves.push(Move::Draw {
        source: Source::Discard,
    });
    moves.extend(positions.map(|position| Move::Swap { position }));
    moves.push(Move::Discard);
    moves.extend(positions.map(|position| Move::Flip { position }));
    moves.push(Move::Pass);
    moves.push(Move::Knock);
    moves
}

/// A reveal with its positions sorted: decide accepts any order, `legal_moves` spells each set
/// once, increasing.
fn sorted_reveal(mv: &Move) -> Move {
    match *mv {
        Move::Reveal { mut positions } => {
            positions.sort_unstable();
            Move::Reveal { positions }
        }
        other => other,
    }
}

fn check_legal_moves_match_decide(state: &State, secrets: &golf_server::engine::Secrets) {
    for seat in 0..state.seats {
        let legal = legal_moves(state, seat);
        for mv in all_moves(usize::from(state.rules.initial_reveal)) {
            let accepted = decide(state, &Command::Play { seat, mv }, secrets).is_ok();
            let listed = legal.contains(&sorted_reveal(&mv));
            assert_eq!(accepted, listed, "seat {seat} {mv:?} in {:?}", state.stage);
        }
    }
}

/// The grids, stock, discard pile and drawn card hold exactly the game's deck: the 52 cards,
/// and the two jokers when the game has them.
fn check_cards_accounted_for(state: &State) {
    let mut cards: Vec<Card> = state
        .players
        .iter()
        .flat_map(|p| p.grid.iter().copied())
        .collect();
    cards.extend(&state.stock);
    cards.extend(&state.discard);
    cards.extend(state.drawn.map(|d| d.card));
    let mut expected: Vec<String> = ["S", "H", "D", "C"]
        .iter()
        .flat_map(|suit| {
            [
                "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K",
            ]
            .map(|rank| format!("{rank}{suit}"))
        })
        .collect();
    if state.rules.jokers == 2 {
        expected.extend(["JR".to_owned(), "JB".to_owned()]);
    }
    let mut codes: Vec<String> = cards.iter().map(Card::to_string).collect();
    codes.sort();
    expected.sort();
    assert_eq!(codes, expected);
    for p in &state.players {
        assert_eq!(p.grid.len(), state.rules.grid.cells());
    }
}

/// Points of a card code, written apart from the engine's scoring.
fn points(code: &str, joker_value: i32) -> i32 {
    match &code[..code.len() - 1] {
        "J" if code == "JR" || code == "JB" => joker_value,
        "A" => 1,
        "2" => -2,
        "J" | "Q" | "10" => 10,
        "K" => 0,
        number => number.parse().expect("a number rank"),
    }
}

/// A card code's rank, the two jokers sharing one.
fn rank(code: &str) -> &str {
    if code == "JR" || code == "JB" {
        "joker"
    } else {
        &code[..code.len() - 1]
    }
}

/// A hole's score of `grid` under `rules`, written from docs/RULES.md apart from the engine.
fn independent_score(grid: &[Card], rules: &Rules) -> i32 {
    let (rows, columns) = match rules.grid {
        GridShape::TwoByTwo => (2, 2),
        GridShape::TwoByThree => (2, 3),
        GridShape::TwoByFour => (2, 4),
        GridShape::ThreeByThree => (3, 3),
    };
    let codes: Vec<String> = grid.iter().map(Card::to_string).collect();
    let mut score = 0;
    let mut pair_ranks: Vec<&str> = Vec::new();
    for c in 0..columns {
        let column: Vec<&str> = (0..rows).map(|r| codes[r * columns + c].as_str()).collect();
        let sum: i32 = column
            .iter()
            .map(|code| points(code, rules.joker_value))
            .sum();
        let all_same = column.iter().all(|code| rank(code) == rank(column[0]));
        let negative = matches!(rank(column[0]), "2" | "joker");
        let keep = rules.negative_pairs == golf_server::engine::PairRule::Keep;
        score += if all_same && !(keep && negative) {
            0
        } else {
            sum
        };
        if all_same {
            pair_ranks.push(rank(column[0]));
        }
    }
    let mut bonused: Vec<&str> = Vec::new();
    for r in &pair_ranks {
        if rows == 2 && pair_ranks.iter().filter(|x| *x == r).count() >= 2 && !bonused.contains(r) {
            bonused.push(r);
            score += rules.four_of_a_kind;
        }
    }
    score
}

/// Card codes found anywhere in a JSON value, skipping `last_hole` (a past hole is public).
fn codes_in(json: &serde_json::Value, out: &mut Vec<String>) {
    match json {
        serde_json::Value::String(s) if s.parse::<Card>().is_ok() => out.push(s.clone()),
        serde_json::Value::Array(items) => items.iter().for_each(|v| codes_in(v, out)),
        serde_json::Value::Object(map) => map
            .iter()
            .filter(|(key, _)| key.as_str() != "last_hole")
            .for_each(|(_, v)| codes_in(v, out)),
        _ => {}
    }
}

fn check_views_hide_secrets(state: &State) {
    let viewers = std::iter::once(Viewer::Spectator).chain((0..state.seats).map(Viewer::Seat));
    for viewer in viewers {
        let mut hidden: HashSet<String> = state.stock.iter().map(Card::to_string).collect();
        for p in &state.players {
            for i in 0..p.grid.len() {
                if state.stage.is_none() || !p.face_up[i] {
                    hidden.insert(p.grid[i].to_string());
                }
            }
        }
        if let Some(d) = state.drawn
            && d.source == Source::Stock
            && viewer != Viewer::Seat(d.seat)
        {
            hidden.insert(d.card.to_string());
        }
        let mut shown = Vec::new();
        codes_in(
            &serde_json::to_value(view(state, viewer)).expect("json"),
            &mut shown,
        );
        for code in shown {
            assert!(!hidden.contains(&code), "{viewer:?} sees hidden {code}");
        }
    }
}

/// The seats that may move now.
fn movers(state: &State) -> Vec<Seat> {
    match state.stage {
        Some(Stage::Reveal) => (0..state.seats)
            .filter(|&s| !state.players[usize::from(s)].revealed)
            .collect(),
        _ => state.current_seat.into_iter().collect(),
    }
}

/// Plays a game of random legal moves (`seed` chooses them) and returns its events.
fn play_random_game(
    seats: u8,
    holes: u8,
    rules: Rules,
    server_seed: [u8; 32],
    seed: u64,
) -> Vec<Event> {
    let mut game = created(seats, holes, rules, Vec::new());
    game.secrets.server_seed = server_seed;
    for seat in 0..seats {
        engine_common::join(&mut game, &format!("P{seat}")).expect("join");
    }
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut steps = 0;
    while game.state.status == Status::Playing {
        steps += 1;
        assert!(steps < 100_000, "the game does not end");
        check_cards_accounted_for(&game.state);
        check_views_hide_secrets(&game.state);
        if steps % 3 == 0 {
            check_legal_moves_match_decide(&game.state, &game.secrets);
        }
        let candidates = movers(&game.state);
        let seat = candidates[rng.random_range(0..candidates.len())];
        let legal = legal_moves(&game.state, seat);
        let mv = legal[rng.random_range(0..legal.len())];
        game.ok(seat, mv);
    }
    check_views_hide_secrets(&game.state);
    check_legal_moves_match_decide(&game.state, &game.secrets);

    // Every hole ended and was scored from its final grids; the totals and winners follow.
    let mut totals = vec![0; usize::from(seats)];
    let mut ended = 0;
    for event in &game.events {
        if let Event::HoleEnded { grids, scores, .. } = event {
            ended += 1;
            let expected: Vec<i32> = grids
                .iter()
                .map(|grid| independent_score(grid, &rules))
                .collect();
            assert_eq!(*scores, expected, "{grids:?} under {rules:?}");
            for (total, score) in totals.iter_mut().zip(scores) {
                *total += score;
            }
        }
    }
    assert_eq!(ended, holes);
    for (p, total) in game.state.players.iter().zip(&totals) {
        assert_eq!(p.hole_scores.len(), usize::from(holes));
        assert_eq!(p.total, *total);
    }
    let best = totals.iter().min().copied();
    let winners: Vec<Seat> = (0..seats)
        .filter(|&s| Some(totals[usize::from(s)]) == best)
        .collect();
    assert_eq!(game.state.winners, Some(winners));
    assert!(matches!(game.events.last(), Some(Event::GameEnded { .. })));

    // Replaying the JSON log from an empty state reproduces the state exactly.
    let mut replayed = State::default();
    for (event, &at) in game.events.iter().zip(&game.times) {
        let text = serde_json::to_string(event).expect("json");
        let parsed: Event = serde_json::from_str(&text).expect("parse");
        apply(&mut replayed, &parsed, at);
    }
    assert_eq!(replayed, game.state);
    let stored = serde_json::to_string(&game.state).expect("state json");
    assert_eq!(
        serde_json::from_str::<State>(&stored).expect("state parse"),
        game.state
    );
    assert_eq!(replayed.version, game.events.len() as u64);
    game.events
}

fn flip_rule() -> impl Strategy<Value = FlipRule> {
    prop_oneof![
        Just(FlipRule::Never),
        Just(FlipRule::Optional),
        Just(FlipRule::Always)
    ]
}

/// Random options: a grid, an initial reveal it allows, jokers and their value, a pair rule, a
/// four-of-a-kind bonus (two-row grids only), knocking, and the original options.
fn variant_rules(seats: u8) -> impl Strategy<Value = Rules> {
    let shape = prop_oneof![Just("2x3"), Just("2x2"), Just("2x4"), Just("3x3")];
    (
        shape,
        0usize..9,
        prop_oneof![Just(0i64), Just(2)],
        -5i64..=0,
        prop_oneof![Just("zero"), Just("keep")],
        prop_oneof![Just(0i64), -50i64..=-1],
        any::<bool>(),
        (
            any::<bool>(),
            flip_rule(),
            prop_oneof![Just(0i64), Just(3), Just(30), Just(390)],
        ),
    )
        .prop_map(
            move |(grid, reveal, jokers, value, pairs, bonus, knock, (ft, flip, extra))| {
                let cells: i64 = if grid == "2x2" {
                    4
                } else if grid == "2x4" {
                    8
                } else if grid == "3x3" {
                    9
                } else {
                    6
                };
                let input = RulesInput {
                    final_turns: Some(ft),
                    flip_after_discard: Some(flip),
                    max_turns_per_hole: Some(i64::from(seats) + extra),
                    grid: Some(grid.to_owned()),
                    initial_reveal: Some(reveal as i64 % cells),
                    jokers: Some(jokers),
                    joker_value: Some(value),
                    negative_pairs: Some(pairs.to_owned()),
                    four_of_a_kind: Some(if grid == "3x3" { 0 } else { bonus }),
                    knock: Some(knock),
                    ..RulesInput::default()
                };
                input.resolve(seats).expect("options in range")
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn random_legal_play_keeps_every_invariant(
        seats in 2u8..=4,
        holes in 1u8..=3,
        final_turns in any::<bool>(),
        flip in flip_rule(),
        extra_turns in prop_oneof![Just(0u32), Just(3), Just(30), Just(390)],
        server_seed in any::<[u8; 32]>(),
        seed in any::<u64>(),
    ) {
        let rules = Rules {
            final_turns,
            flip_after_discard: flip,
            max_turns_per_hole: u32::from(seats) + extra_turns,
            ..Rules::default()
        };
        play_random_game(seats, holes, rules, server_seed, seed);
    }

    #[test]
    fn random_legal_play_under_random_house_rules_keeps_every_invariant(
        (seats, rules) in (2u8..=4).prop_flat_map(|seats| (Just(seats), variant_rules(seats))),
        holes in 1u8..=2,
        server_seed in any::<[u8; 32]>(),
        seed in any::<u64>(),
    ) {
        let events = play_random_game(seats, holes, rules, server_seed, seed);
        // The same seeds play the same game again.
        prop_assert_eq!(play_random_game(seats, holes, rules, server_seed, seed), events);
    }
}
