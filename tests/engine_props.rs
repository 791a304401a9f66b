//! Property tests: random legal play for 2 to 4 seats under every rule option keeps every card
//! accounted for, ends every hole and the game, scores from the final grids, replays exactly from
//! the JSON log, never shows a hidden card in any view, and `legal_moves` is exactly what
//! `decide` accepts.

mod engine_common;

use std::collections::HashSet;

use engine_common::created;
use golf_server::engine::Command;
use golf_server::engine::{
    Card, Event, FlipRule, Move, Position, Rules, Seat, Source, Stage, State, Status, Viewer,
    apply, decide, grid_score, legal_moves, view,
};
use proptest::prelude::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Every move of valid shape: reveals of every pair `p <= q` (and `q > p` spelled both ways),
/// both draws, six swaps, discard, six flips, pass.
fn all_moves() -> Vec<Move> {
    let positions = Position::ALL;
    let mut moves = Vec::new();
    for p in positions {
        for q in positions {
            moves.push(Move::Reveal { positions: [p, q] });
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
    moves
}

/// Whether a move is a reveal listed as `q > p`: decide accepts it like `[p, q]`, but
/// `legal_moves` spells each pair once.
fn reversed_reveal(mv: &Move) -> Option<Move> {
    match *mv {
        Move::Reveal { positions: [p, q] } if p > q => Some(Move::Reveal { positions: [q, p] }),
        _ => None,
    }
}

fn check_legal_moves_match_decide(state: &State, secrets: &golf_server::engine::Secrets) {
    for seat in 0..state.seats {
        let legal = legal_moves(state, seat);
        for mv in all_moves() {
            let accepted = decide(state, &Command::Play { seat, mv }, secrets).is_ok();
            let listed = legal.contains(&reversed_reveal(&mv).unwrap_or(mv));
            assert_eq!(accepted, listed, "seat {seat} {mv:?} in {:?}", state.stage);
        }
    }
}

fn check_cards_accounted_for(state: &State) {
    let mut cards: Vec<Card> = state.players.iter().flat_map(|p| p.grid).collect();
    cards.extend(&state.stock);
    cards.extend(&state.discard);
    cards.extend(state.drawn.map(|d| d.card));
    assert_eq!(cards.len(), 52);
    assert_eq!(cards.iter().collect::<HashSet<_>>().len(), 52);
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
            for i in 0..6 {
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

fn play_random_game(seats: u8, holes: u8, rules: Rules, server_seed: [u8; 32], seed: u64) {
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
            assert_eq!(*scores, grids.iter().map(grid_score).collect::<Vec<_>>());
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
}

fn flip_rule() -> impl Strategy<Value = FlipRule> {
    prop_oneof![
        Just(FlipRule::Never),
        Just(FlipRule::Optional),
        Just(FlipRule::Always)
    ]
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
            turn_timeout_s: None,
        };
        play_random_game(seats, holes, rules, server_seed, seed);
    }
}
