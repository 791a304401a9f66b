//! Example tests for each house-rule variant of docs/RULES.md (v1.2): the scoring of each grid,
//! jokers, both pair rules, four of a kind, knocking with its final turns, initial reveals of 0
//! and 3, the deal of 9-card grids, the options' limits and the log format they write.

mod engine_common;

use engine_common::{Game, card, draw, pos, stacked_deck_of, started};
use golf_server::engine::{
    Card, Cells, EndReason, Event, GridShape, LOG_FORMAT, LOG_FORMAT_2, Move, PairRule, Rules,
    RulesInput, Scoring, Source, Stage, Viewer, legal_moves, view,
};
use serde_json::json;

/// Rules resolved from JSON options for `seats` seats.
fn rules_of(seats: u8, options: serde_json::Value) -> Rules {
    let input: RulesInput = serde_json::from_value(options).expect("rule options");
    input.resolve(seats).expect("options in range")
}

/// The scoring of `rules` applied to the grid spelled by `codes` (row-major).
fn score(rules: &Rules, codes: &[&str]) -> i32 {
    let grid: Vec<Card> = codes.iter().map(|c| card(c)).collect();
    rules.scoring().grid(&grid)
}

/// The cells of a grid spelled by `codes`.
fn cells(codes: &[&str]) -> Cells<Card> {
    let grid: Vec<Card> = codes.iter().map(|c| card(c)).collect();
    Cells::from_slice(&grid).expect("at most 9 cards")
}

#[test]
fn each_grid_scores_its_columns_top_to_bottom() {
    let two_by_two = rules_of(2, json!({"grid": "2x2"}));
    // Columns (0,2) and (1,3): 5+7 and a pair of Queens.
    assert_eq!(score(&two_by_two, &["5S", "QH", "7D", "QC"]), 12);
    let two_by_four = rules_of(2, json!({"grid": "2x4"}));
    // Columns (0,4) (1,5) (2,6) (3,7): 1+3, pair of 9s, 10+K, 2+4.
    assert_eq!(
        score(
            &two_by_four,
            &["AS", "9S", "10S", "2S", "3H", "9H", "KH", "4H"]
        ),
        4 + 10 - 2 + 4
    );
    let three_by_three = rules_of(2, json!({"grid": "3x3"}));
    // Columns (0,3,6) three Jacks: 0; (1,4,7) two 5s and a 6: 16; (2,5,8) A, 2, K: -1.
    assert_eq!(
        score(
            &three_by_three,
            &["JS", "5S", "AS", "JH", "5H", "2H", "JD", "6D", "KD"]
        ),
        16 - 1
    );
    // The original grid: a pair of 5s, 5 + 6, a pair of Kings.
    assert_eq!(
        Scoring::default().grid(&cells(&["5S", "5H", "KS", "5D", "6H", "KH"])),
        11
    );
}

#[test]
fn a_joker_scores_its_value_and_two_jokers_pair_under_both_pair_rules() {
    let zero = rules_of(2, json!({"jokers": 2, "joker_value": -3}));
    let keep = rules_of(
        2,
        json!({"jokers": 2, "joker_value": -3, "negative_pairs": "keep"}),
    );
    assert_eq!(zero.scoring().card_points(card("JR")), -3);
    // A joker alone in its column: its value plus its partner's points.
    let alone = ["JR", "KS", "KH", "4D", "KD", "KC"];
    assert_eq!(score(&zero, &alone), -3 + 4);
    assert_eq!(score(&keep, &alone), -3 + 4);
    // Two jokers in a column: 0 under "zero", their sum under "keep".
    let paired = ["JR", "5S", "6S", "JB", "7S", "8S"];
    assert_eq!(score(&zero, &paired), 12 + 14);
    assert_eq!(score(&keep, &paired), -6 + 12 + 14);
    // A pair of Twos likewise; other pairs score 0 under both.
    let twos = ["2S", "QS", "KS", "2H", "QH", "4H"];
    assert_eq!(score(&zero, &twos), 4);
    assert_eq!(score(&keep, &twos), -4 + 4);
    assert_eq!(keep.negative_pairs, PairRule::Keep);
}

#[test]
fn two_columns_pairing_one_rank_add_the_four_of_a_kind_bonus_once() {
    let two_by_three = rules_of(2, json!({"four_of_a_kind": -20}));
    assert_eq!(
        score(&two_by_three, &["7S", "7D", "3S", "7H", "7C", "4H"]),
        -20 + 7
    );
    // Two pairs of different ranks: no bonus.
    assert_eq!(
        score(&two_by_three, &["7S", "8D", "3S", "7H", "8C", "4H"]),
        7
    );
    let two_by_four = rules_of(2, json!({"grid": "2x4", "four_of_a_kind": -10}));
    assert_eq!(
        score(
            &two_by_four,
            &["QS", "5S", "QD", "9S", "QH", "5H", "QC", "9H"]
        ),
        -10
    );
    // Under "keep", four Twos keep their sum and take the bonus.
    let keep = rules_of(2, json!({"four_of_a_kind": -5, "negative_pairs": "keep"}));
    assert_eq!(score(&keep, &["2S", "2D", "KS", "2H", "2C", "KH"]), -8 - 5);
}

/// A game of 3 seats under `rules`, hole 1 dealt from a deck in canonical order.
fn three_seats(rules: Rules) -> Game {
    started(3, 1, rules, Vec::new())
}

#[test]
fn a_knock_gives_every_other_seat_one_final_turn_then_ends_the_hole_for_the_knock() {
    let rules = rules_of(3, json!({"knock": true}));
    let mut game = three_seats(rules);
    game.reveal_all();
    let knocker = game.state.current_seat.expect("a seat to play");
    assert!(legal_moves(&game.state, knocker).contains(&Move::Knock));
    let events = game.ok(knocker, Move::Knock);
    assert_eq!(events, vec![Event::Knocked { seat: knocker }]);
    assert_eq!(game.state.knocked, Some(knocker));
    assert_eq!(game.state.final_turns_left, Some(2));
    // Every view says who knocked, so that a client that reloads during the final turns knows.
    let seen = view(&game.state, Viewer::Spectator);
    assert_eq!(seen.knocked, Some(knocker));
    assert_eq!(serde_json::to_value(&seen).unwrap()["knocked"], knocker);
    // Nobody knocks during the final turns.
    let next = game.state.current_seat.expect("a final turn");
    assert!(!legal_moves(&game.state, next).contains(&Move::Knock));
    assert_eq!(game.code(next, Move::Knock), "wrong_stage");
    game.draw_and_discard();
    let last = game.draw_and_discard();
    assert_eq!(last, (knocker + 2) % 3);
    let ended = game.events.iter().find_map(|event| match event {
        Event::HoleEnded { reason, grids, .. } => Some((*reason, grids.clone())),
        _ => None,
    });
    let (reason, grids) = ended.expect("the hole ended");
    assert_eq!(reason, EndReason::Knock);
    assert!(grids.iter().all(|grid| grid.len() == 6));
    assert_eq!(game.state.stage, Some(Stage::HoleOver));
}

#[test]
fn without_the_knock_rule_a_knock_is_refused() {
    let mut game = three_seats(Rules::default());
    game.reveal_all();
    let seat = game.state.current_seat.expect("a seat to play");
    assert!(!legal_moves(&game.state, seat).contains(&Move::Knock));
    assert_eq!(game.code(seat, Move::Knock), "wrong_stage");
}

#[test]
fn an_initial_reveal_of_zero_starts_play_at_once() {
    let rules = rules_of(3, json!({"initial_reveal": 0}));
    let game = three_seats(rules);
    assert_eq!(game.state.stage, Some(Stage::Draw));
    assert_eq!(game.state.current_seat, Some(1));
    let v = view(&game.state, Viewer::Seat(1));
    assert!(v.players.iter().all(|p| p.grid.iter().all(Option::is_none)));
    assert_eq!(
        v.legal_moves,
        Some(vec![
            draw(Source::Stock),
            Move::Draw {
                source: Source::Discard
            }
        ])
    );
}

#[test]
fn an_initial_reveal_of_three_lists_every_set_of_three_in_order() {
    let rules = rules_of(2, json!({"initial_reveal": 3}));
    let mut game = started(2, 1, rules, Vec::new());
    let legal = legal_moves(&game.state, 0);
    assert_eq!(legal.len(), 20);
    let reveal = |ps: [u8; 3]| Move::Reveal {
        positions: ps.map(pos).into(),
    };
    assert_eq!(legal[0], reveal([0, 1, 2]));
    assert_eq!(legal[1], reveal([0, 1, 3]));
    assert_eq!(legal[19], reveal([3, 4, 5]));
    assert_eq!(game.code(0, engine_common::reveal(0, 1)), "invalid_reveal");
    game.ok(0, reveal([5, 0, 2]));
    assert_eq!(game.state.players[0].face_up_count(), 3);
    game.ok(1, reveal([1, 3, 4]));
    assert_eq!(game.state.stage, Some(Stage::Draw));
}

#[test]
fn a_nine_card_deal_for_four_seats_leaves_the_rest_as_stock() {
    let rules = rules_of(4, json!({"grid": "3x3", "jokers": 2}));
    let grids: Vec<Vec<String>> = (0..4)
        .map(|seat| {
            (0..9)
                .map(|i| {
                    let suit = ["S", "H", "D", "C"][seat];
                    let rank = ["A", "2", "3", "4", "5", "6", "7", "8", "9"][i];
                    format!("{rank}{suit}")
                })
                .collect()
        })
        .collect();
    let borrowed: Vec<Vec<&str>> = grids
        .iter()
        .map(|g| g.iter().map(String::as_str).collect())
        .collect();
    let slices: Vec<&[&str]> = borrowed.iter().map(Vec::as_slice).collect();
    let deck = stacked_deck_of(0, &slices, "JR", &["JB", "KS"], 2);
    let game = started(4, 1, rules, vec![deck]);
    for (seat, player) in game.state.players.iter().enumerate() {
        assert_eq!(player.grid, cells(&borrowed[seat]));
    }
    assert_eq!(game.state.discard, vec![card("JR")]);
    // 54 cards less 4 × 9 dealt and 1 discard: 17 in the stock, JB on top.
    assert_eq!(game.state.stock.len(), 17);
    assert_eq!(game.state.stock.last(), Some(&card("JB")));
    let v = view(&game.state, Viewer::Seat(0));
    assert_eq!((v.grid_shape.rows, v.grid_shape.columns), (3, 3));
    assert_eq!(v.players[0].grid.len(), 9);
    assert_eq!(v.stock_count, 17);
}

#[test]
fn options_out_of_range_are_refused_naming_the_option() {
    let cases = [
        (json!({"grid": "4x4"}), "rules.grid"),
        (json!({"initial_reveal": 6}), "rules.initial_reveal"),
        (
            json!({"grid": "2x2", "initial_reveal": 4}),
            "rules.initial_reveal",
        ),
        (json!({"initial_reveal": -1}), "rules.initial_reveal"),
        (json!({"jokers": 1}), "rules.jokers"),
        (json!({"joker_value": 1}), "rules.joker_value"),
        (json!({"joker_value": -6}), "rules.joker_value"),
        (json!({"negative_pairs": "double"}), "rules.negative_pairs"),
        (json!({"four_of_a_kind": -51}), "rules.four_of_a_kind"),
        (json!({"four_of_a_kind": 5}), "rules.four_of_a_kind"),
        (
            json!({"grid": "3x3", "four_of_a_kind": -10}),
            "rules.four_of_a_kind",
        ),
    ];
    for (options, name) in cases {
        let input: RulesInput = serde_json::from_value(options.clone()).expect("parses");
        let error = input.resolve(2).expect_err("out of range");
        assert_eq!(error.code(), "invalid_game_options", "{options}");
        assert!(error.to_string().contains(name), "{options}: {error}");
    }
    let nine = rules_of(4, json!({"grid": "3x3", "initial_reveal": 8}));
    assert_eq!(
        (nine.grid, nine.initial_reveal),
        (GridShape::ThreeByThree, 8)
    );
}

#[test]
fn defaults_log_golf_log_1_and_any_variant_golf_log_2_with_every_option() {
    let standard = rules_of(2, json!({"grid": "2x3", "jokers": 0, "knock": false}));
    assert_eq!(standard.log_format(), LOG_FORMAT);
    assert_eq!(
        serde_json::to_value(standard).expect("json"),
        json!({"final_turns": false, "flip_after_discard": "never", "max_turns_per_hole": 100})
    );
    let knocking = rules_of(2, json!({"grid": "2x2", "knock": true}));
    assert_eq!(knocking.log_format(), LOG_FORMAT_2);
    let listed = serde_json::to_value(knocking).expect("json");
    assert_eq!(
        listed,
        json!({"final_turns": false, "flip_after_discard": "never", "max_turns_per_hole": 100,
               "grid": "2x2", "initial_reveal": 2, "jokers": 0, "joker_value": -2,
               "negative_pairs": "zero", "four_of_a_kind": 0, "knock": true})
    );
    assert_eq!(
        serde_json::from_value::<Rules>(listed).expect("parses"),
        knocking
    );
    let game = started(2, 1, knocking, Vec::new());
    assert!(matches!(&game.events[0], Event::GameCreated { format, .. } if format == LOG_FORMAT_2));
}

#[test]
fn a_four_card_grid_completes_with_four_cards_face_up() {
    let rules = rules_of(2, json!({"grid": "2x2"}));
    let mut game = started(2, 1, rules, Vec::new());
    game.reveal_all();
    // Seat 1 fills one of its two face-down cards, seat 0 one, then seat 1 its last.
    for _ in 0..3 {
        game.draw_and_fill();
    }
    let ended = game.events.iter().find_map(|event| match event {
        Event::HoleEnded { reason, grids, .. } => Some((*reason, grids.clone())),
        _ => None,
    });
    let (reason, grids) = ended.expect("the hole ended");
    assert_eq!(reason, EndReason::GridComplete);
    assert!(grids.iter().all(|grid| grid.len() == 4));
    assert!(legal_moves(&game.state, 0).is_empty());
}
