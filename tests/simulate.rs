//! The bot simulator: bots cycle over the seats, results are deterministic for a seed, greedy
//! beats random, and invalid options are refused.

use golf_server::commands::simulate::{SimulateOptions, run};
use golf_server::engine::{BotKind, RulesInput};
use serde_json::json;

fn options(games: u64, seats: u8, bots: Vec<BotKind>) -> SimulateOptions {
    SimulateOptions {
        games,
        seats,
        holes: 3,
        bots,
        rules: RulesInput::default(),
        seed: 7,
        threads: 2,
    }
}

#[test]
fn bots_cycle_over_the_seats_and_greedy_beats_random() {
    let report = run(&options(200, 4, vec![BotKind::Greedy, BotKind::Random])).expect("valid");
    let bots: Vec<BotKind> = report.bots.iter().map(|s| s.bot).collect();
    assert_eq!(
        bots,
        [
            BotKind::Greedy,
            BotKind::Random,
            BotKind::Greedy,
            BotKind::Random
        ]
    );
    assert!(report.bots[0].mean_total < report.bots[1].mean_total);
    assert!(report.bots[2].mean_total < report.bots[3].mean_total);
    let shares: f64 = report.bots.iter().map(|s| s.win_share).sum();
    assert!((shares - 1.0).abs() < 1e-9, "win shares sum to 1: {shares}");
    assert!(report.mean_turns_per_hole > 0.0);
    assert!(report.render_text().contains("greedy"));
    let json = serde_json::to_value(&report).expect("json");
    assert!(json["games_per_sec"].is_number());
}

#[test]
fn a_simulation_is_deterministic_for_a_seed() {
    let a = run(&options(50, 3, vec![BotKind::Random])).expect("valid");
    let b = run(&options(50, 3, vec![BotKind::Random])).expect("valid");
    assert_eq!(a.bots, b.bots);
    assert_eq!(a.mean_turns_per_hole, b.mean_turns_per_hole);
}

#[test]
fn invalid_options_are_refused() {
    let err = run(&options(1, 5, vec![BotKind::Greedy])).expect_err("5 seats");
    assert_eq!(err.code(), "invalid_game_options");
    let err = run(&options(1, 2, Vec::new())).expect_err("no bots");
    assert!(err.to_string().contains("bots"), "{err}");
}

#[test]
fn greedy_beats_random_under_every_preset_of_house_rules() {
    let presets = [
        serde_json::json!({"grid": "2x2", "knock": true}),
        serde_json::json!({"grid": "3x3", "initial_reveal": 3}),
        serde_json::json!({"jokers": 2, "negative_pairs": "keep", "four_of_a_kind": -20}),
        serde_json::json!({"grid": "2x4", "initial_reveal": 0, "final_turns": true}),
    ];
    for preset in presets {
        let rules: RulesInput = serde_json::from_value(preset.clone()).expect("options");
        let report = run(&SimulateOptions {
            rules,
            ..options(100, 2, vec![BotKind::Greedy, BotKind::Random])
        })
        .expect("valid");
        assert!(
            report.bots[0].mean_total < report.bots[1].mean_total,
            "{preset}: {}",
            report.render_text()
        );
        assert!(report.render_text().contains("variants: grid="), "{preset}");
    }
}

#[test]
fn greedy_bots_fill_nine_card_grids_with_four_seats() {
    // Four seats on nine cards leave 15 cards of stock, mostly the high ones the greedy bots
    // throw away: bots that only ever discarded them would play every hole to the turn cap.
    let rules: RulesInput =
        serde_json::from_value(serde_json::json!({"grid": "3x3", "initial_reveal": 3}))
            .expect("options");
    let report = run(&SimulateOptions {
        rules,
        ..options(100, 4, vec![BotKind::Greedy])
    })
    .expect("valid");
    assert!(report.turn_cap_share < 0.01, "{}", report.render_text());
}

#[test]
fn the_bots_play_as_the_release_before_the_engine_rewrite() {
    // Each seat's summed totals and the turns of 40 nine-hole games (seed 7, three seats, greedy
    // and random), as the release before the grids became constants of the greedy policy played
    // them (447ae84): the bots' games are part of what users see and replay, so a faster engine
    // must play them the same, move for move.
    let played = [
        (json!({}), [3466, 12259, 2634], 6778),
        (
            json!({"grid": "2x2", "knock": true}),
            [3822, 7886, 3706],
            2378,
        ),
        (
            json!({"jokers": 2, "negative_pairs": "keep"}),
            [3519, 11406, 2593],
            6327,
        ),
        (
            json!({"grid": "2x4", "four_of_a_kind": -20}),
            [4317, 16118, 3511],
            9898,
        ),
        (
            json!({"grid": "3x3", "initial_reveal": 3}),
            [8360, 19652, 6626],
            10880,
        ),
        (
            json!({"flip_after_discard": "optional", "final_turns": true}),
            [3307, 12142, 2821],
            5996,
        ),
    ];
    for (rules, totals, turns) in played {
        let report = run(&SimulateOptions {
            holes: 9,
            rules: serde_json::from_value(rules.clone()).expect("rules"),
            ..options(40, 3, vec![BotKind::Greedy, BotKind::Random])
        })
        .expect("valid");
        let summed: Vec<i64> = report
            .bots
            .iter()
            .map(|seat| (seat.mean_total * 40.0).round() as i64)
            .collect();
        assert_eq!(summed, totals, "{rules}");
        let all_turns = (report.mean_turns_per_hole * 40.0 * 9.0).round() as i64;
        assert_eq!(all_turns, turns, "{rules}");
        let timed: u64 = report.decisions.iter().map(|times| times.timed).sum();
        let decided: u64 = report.decisions.iter().map(|times| times.decisions).sum();
        assert!(timed > 0 && timed < decided, "{timed} of {decided} timed");
    }
}
