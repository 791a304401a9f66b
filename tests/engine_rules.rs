//! Example tests for each rule of docs/RULES.md and each error code, through the engine's public API.

mod engine_common;

use engine_common::{
    Game, SERVER_SEED, card, created, draw, flip, join, pos, reveal, rules, stacked_deck, started,
    swap,
};
use golf_server::engine::{
    Card, Cells, ClientSeed, Command, EndReason, Event, FlipRule, Move, MoveRequest, PlayerName,
    Rank, RuleError, Rules, RulesInput, Source, Stage, State, Status, Suit, Timestamp, Viewer,
    apply, canonical_deck, card_points, check_game_size, column_score, execute, execute_play,
    grid_score, legal_moves, parse_deck, parse_move, redact_event, shuffle, view,
};

fn grid(codes: [&str; 6]) -> Cells<Card> {
    codes.map(card).into()
}

fn default_rules(seats: u8) -> Rules {
    Rules::resolve(seats, None, None, None).expect("defaults")
}

// ----- cards ---------------------------------------------------------------------------------

#[test]
fn card_codes_parse_and_display_including_ten() {
    for code in ["AS", "10H", "QC", "KD", "2S"] {
        let c: Card = code.parse().expect("valid code");
        assert_eq!(c.to_string(), code);
        assert_eq!(
            serde_json::to_string(&c).expect("json"),
            format!("\"{code}\"")
        );
    }
    assert_eq!(card("10H"), Card::new(Rank::Ten, Suit::Hearts));
    for bad in ["", "1H", "10h", "as", "11S", "AX", "10", "A S"] {
        assert!(bad.parse::<Card>().is_err(), "{bad:?} should not parse");
    }
}

#[test]
fn canonical_deck_is_suit_major_spades_hearts_diamonds_clubs_then_ace_to_king() {
    let deck = canonical_deck();
    assert_eq!(deck[0].code(), "AS");
    assert_eq!(deck[12].code(), "KS");
    assert_eq!(deck[13].code(), "AH");
    assert_eq!(deck[26].code(), "AD");
    assert_eq!(deck[51].code(), "KC");
    assert!(
        deck.iter()
            .enumerate()
            .all(|(i, c)| usize::from(c.index()) == i)
    );
}

#[test]
fn parse_deck_accepts_a_permutation_and_names_what_is_wrong_otherwise() {
    let codes: Vec<String> = canonical_deck()
        .iter()
        .rev()
        .map(|c| c.to_string())
        .collect();
    assert_eq!(parse_deck(&codes).expect("a permutation")[0].code(), "KC");

    let mut duplicate = codes.clone();
    duplicate[1] = "KC".into();
    let err = parse_deck(&duplicate).expect_err("duplicate");
    assert_eq!(err.code(), "invalid_deck");
    assert!(err.to_string().contains("KC appears twice"), "{err}");

    let mut unknown = codes.clone();
    unknown[5] = "ZZ".into();
    let err = parse_deck(&unknown).expect_err("unknown code");
    assert!(err.to_string().contains("\"ZZ\""), "{err}");

    let err = parse_deck(&codes[..51]).expect_err("short");
    assert!(err.to_string().contains("51"), "{err}");
}

#[test]
fn positions_are_zero_to_eight_and_a_game_takes_those_of_its_grid() {
    assert_eq!(pos(8).get(), 8);
    let err = golf_server::engine::Position::new(9).expect_err("9 is out of range");
    assert_eq!(err.code(), "position_out_of_range");
    assert!(serde_json::from_str::<golf_server::engine::Position>("9").is_err());
    let err = golf_server::engine::Position::within(6, 6).expect_err("a six-card grid");
    assert_eq!(
        err.to_string(),
        "Position 6 is out of range: positions are 0 to 5."
    );
}

// ----- scoring -------------------------------------------------------------------------------

#[test]
fn card_values_ace_one_two_minus_two_faces_ten_king_zero() {
    let points = |code| card_points(card(code));
    assert_eq!(points("AS"), 1);
    assert_eq!(points("2H"), -2);
    for (code, value) in [("3D", 3), ("7C", 7), ("10S", 10)] {
        assert_eq!(points(code), value);
    }
    assert_eq!(points("JH"), 10);
    assert_eq!(points("QD"), 10);
    assert_eq!(points("KC"), 0);
}

#[test]
fn a_pair_in_a_column_scores_zero_whatever_the_rank() {
    assert_eq!(
        column_score(card("2S"), card("2H")),
        0,
        "a pair of Twos is 0, not -4"
    );
    assert_eq!(column_score(card("KS"), card("KD")), 0);
    assert_eq!(column_score(card("JS"), card("JC")), 0);
    assert_eq!(column_score(card("9S"), card("9C")), 0);
}

#[test]
fn jack_over_queen_is_not_a_pair() {
    assert_eq!(column_score(card("JS"), card("QS")), 20);
}

#[test]
fn rows_and_diagonals_never_pair() {
    // Row 0 1 2 all Fives; column pairs (0,3) (1,4) (2,5) all different.
    let g = grid(["5S", "5H", "5D", "AS", "3H", "4D"]);
    assert_eq!(grid_score(&g), 5 + 1 + 5 + 3 + 5 + 4);
    // Diagonal 0-4 Sevens.
    let g = grid(["7S", "KS", "KH", "AS", "7H", "2D"]);
    assert_eq!(grid_score(&g), (7 + 1) + 7 - 2);
    // One column pair among others.
    let g = grid(["QS", "QH", "3D", "QD", "JH", "3C"]);
    assert_eq!(grid_score(&g), 20);
}

// ----- validated inputs ----------------------------------------------------------------------

#[test]
fn names_are_trimmed_one_to_forty_scalar_values_without_control_characters() {
    assert_eq!(
        PlayerName::parse("  Ada \u{3000}").expect("ok").as_str(),
        "Ada"
    );
    assert!(PlayerName::parse(&"é".repeat(40)).is_ok());
    for bad in ["", "   ", "Ada\u{7}", "\tAda", &"x".repeat(41)] {
        let err = PlayerName::parse(bad).expect_err("invalid");
        assert_eq!(err.code(), "invalid_name");
    }
}

#[test]
fn client_seeds_are_at_most_64_characters_without_control_characters() {
    assert_eq!(ClientSeed::parse("").expect("empty is fine").as_str(), "");
    assert!(ClientSeed::parse(&"🎲".repeat(64)).is_ok());
    for bad in [&"a".repeat(65), "a\nb"] {
        assert_eq!(
            ClientSeed::parse(bad).expect_err("invalid").code(),
            "invalid_client_seed"
        );
    }
}

#[test]
fn game_size_and_rules_are_checked_with_messages_naming_the_field() {
    assert_eq!(check_game_size(4, 18).expect("ok"), (4, 18));
    let err = check_game_size(5, 9).expect_err("5 seats");
    assert_eq!(err.code(), "invalid_game_options");
    assert!(err.to_string().contains("seats"), "{err}");
    let err = check_game_size(2, 0).expect_err("0 holes");
    assert!(err.to_string().contains("holes"), "{err}");
    assert!(check_game_size(1, 9).is_err());
    assert!(check_game_size(2, 19).is_err());

    let rules = Rules::resolve(3, None, None, None).expect("defaults");
    assert_eq!(rules.max_turns_per_hole, 150);
    assert!(!rules.final_turns);
    assert_eq!(rules.flip_after_discard, FlipRule::Never);
    let err = Rules::resolve(3, None, None, Some(2)).expect_err("cap below seats");
    assert!(err.to_string().contains("max_turns_per_hole"), "{err}");
    let input: RulesInput =
        serde_json::from_str(r#"{"flip_after_discard": "optional"}"#).expect("json");
    assert_eq!(
        input.resolve(2).expect("ok").flip_after_discard,
        FlipRule::Optional
    );
    assert!(serde_json::from_str::<RulesInput>(r#"{"flip": "never"}"#).is_err());
}

#[test]
fn timestamps_are_rfc3339_utc_with_six_fractional_digits() {
    let t = Timestamp(1_796_095_590_123_456);
    assert_eq!(t.to_string(), "2026-12-01T03:26:30.123456Z");
    assert_eq!(Timestamp::parse("2026-12-01T03:26:30.123456Z"), Ok(t));
    assert_eq!(Timestamp(0).to_string(), "1970-01-01T00:00:00.000000Z");
    for bad in [
        "2026-12-01T03:26:30Z",
        "2026-12-01T03:26:30.123Z",
        "2026-12-01T03:26:30.123456+00:00",
        "2026-12-01 03:26:30.123456Z",
    ] {
        assert!(Timestamp::parse(bad).is_err(), "{bad}");
    }
    assert_eq!(
        serde_json::to_string(&t).expect("json"),
        "\"2026-12-01T03:26:30.123456Z\""
    );
}

// ----- creating and joining ------------------------------------------------------------------

#[test]
fn the_last_join_deals_hole_one_and_further_joins_are_refused() {
    let mut game = created(2, 9, default_rules(2), Vec::new());
    assert_eq!(game.state.status, Status::Waiting);
    let events = join(&mut game, "Ada").expect("seat 0");
    assert!(matches!(events[..], [Event::PlayerJoined { seat: 0, .. }]));
    assert_eq!(game.code(0, reveal(0, 1)), "game_not_started");
    let events = join(&mut game, "Bob").expect("seat 1");
    assert!(matches!(
        events[..],
        [
            Event::PlayerJoined { seat: 1, .. },
            Event::HoleDealt {
                hole: 1,
                dealer: 0,
                ..
            }
        ]
    ));
    assert_eq!(game.state.status, Status::Playing);
    assert_eq!(game.state.stage, Some(Stage::Reveal));
    let err = join(&mut game, "Cy").expect_err("full");
    assert_eq!(err.code(), "game_full");
}

#[test]
fn create_only_on_an_empty_state_and_validates_its_options() {
    let mut game = created(2, 9, default_rules(2), Vec::new());
    let again = golf_server::engine::Command::Create {
        game_id: uuid::Uuid::nil(),
        seats: 2,
        holes: 9,
        rules: default_rules(2),
        commitment: String::new(),
        stacked: false,
        rated: false,
    };
    assert_eq!(game.run(&again).expect_err("exists").code(), "game_exists");
    let mut empty = Game {
        state: State::default(),
        secrets: golf_server::engine::Secrets {
            server_seed: SERVER_SEED,
            decks: Vec::new(),
        },
        events: Vec::new(),
        times: Vec::new(),
        clock: 0,
    };
    let bad = golf_server::engine::Command::Create {
        game_id: uuid::Uuid::nil(),
        seats: 5,
        holes: 9,
        rules: default_rules(4),
        commitment: String::new(),
        stacked: false,
        rated: false,
    };
    assert_eq!(
        empty.run(&bad).expect_err("5 seats").code(),
        "invalid_game_options"
    );
    assert_eq!(
        join(&mut empty, "Ada").expect_err("no game").code(),
        "not_found"
    );
}

#[test]
fn game_created_event_has_the_log_format_and_options() {
    let game = created(3, 5, rules(true, FlipRule::Always, 9), Vec::new());
    let json = serde_json::to_value(&game.events[0]).expect("json");
    assert_eq!(json["type"], "game_created");
    assert_eq!(json["data"]["format"], "golf-log/1");
    assert_eq!(json["data"]["seats"], 3);
    assert_eq!(json["data"]["holes"], 5);
    assert_eq!(json["data"]["stacked"], false);
    assert_eq!(
        json["data"]["commitment"],
        shuffle::commitment(&SERVER_SEED)
    );
    assert_eq!(
        json["data"]["rules"],
        serde_json::json!({"final_turns": true, "flip_after_discard": "always", "max_turns_per_hole": 9})
    );
}

// ----- dealing -------------------------------------------------------------------------------

#[test]
fn a_stacked_game_deals_exactly_the_given_decks_then_the_protocol_shuffle() {
    let deck1 = stacked_deck(
        0,
        &[
            ["AS", "2S", "3S", "4S", "5S", "6S"],
            ["AH", "2H", "3H", "4H", "5H", "6H"],
        ],
        "7H",
        &["8H", "9H"],
    );
    let mut deck2 = canonical_deck().to_vec();
    deck2.reverse();
    let decks = vec![deck1.clone(), deck2.clone()];
    let mut game = started(2, 3, rules(false, FlipRule::Never, 2), decks);
    assert!(game.state.stacked);
    assert!(view(&game.state, Viewer::Spectator).stacked);
    let dealt = |game: &Game, hole: u8| {
        game.events.iter().find_map(|e| match e {
            Event::HoleDealt { hole: h, deck, .. } if *h == hole => Some(deck.clone()),
            _ => None,
        })
    };
    assert_eq!(dealt(&game, 1), Some(deck1));
    assert_eq!(
        game.state.players[0].grid,
        grid(["AS", "2S", "3S", "4S", "5S", "6S"])
    );
    assert_eq!(
        game.state.players[1].grid,
        grid(["AH", "2H", "3H", "4H", "5H", "6H"])
    );
    assert_eq!(game.state.discard, vec![card("7H")]);
    assert_eq!(game.state.stock.last(), Some(&card("8H")));

    game.reveal_all();
    game.draw_and_discard();
    game.draw_and_discard();
    assert_eq!(dealt(&game, 2), Some(deck2.clone()));
    // Dealer 1 in hole 2: card 0 goes to seat 0 at position 0, card 1 to seat 1.
    assert_eq!(game.state.dealer, 1);
    assert_eq!(game.state.players[0].grid[0], deck2[0]);
    assert_eq!(game.state.players[1].grid[0], deck2[1]);

    game.reveal_all();
    game.draw_and_discard();
    game.draw_and_discard();
    let seed = shuffle::effective_seed(&SERVER_SEED, ["", ""]);
    assert_eq!(dealt(&game, 3), Some(shuffle::deal_order(&seed, 3, 0)));
}

#[test]
fn the_deal_goes_round_from_the_dealers_left_and_the_dealer_rotates() {
    let mut game = started(3, 2, rules(false, FlipRule::Never, 3), Vec::new());
    let Some(Event::HoleDealt { deck, discard, .. }) = game.events.last().cloned() else {
        panic!("hole dealt last");
    };
    for (d, dealt) in deck.iter().enumerate().take(18) {
        let seat = (1 + d) % 3;
        assert_eq!(game.state.players[seat].grid[d / 3], *dealt);
    }
    assert_eq!(discard, deck[18]);
    assert_eq!(game.state.discard, vec![deck[18]]);
    assert_eq!(game.state.stock.len(), 52 - 19);
    assert_eq!(game.state.stock.last(), Some(&deck[19]));
    game.reveal_all();
    assert_eq!(game.state.current_seat, Some(1), "dealer 0: seat 1 starts");
    game.ok(1, draw(Source::Stock));
    assert_eq!(game.state.drawn.map(|d| d.card), Some(deck[19]));
    game.ok(1, Move::Discard);
    game.draw_and_discard();
    game.draw_and_discard();
    assert_eq!(game.state.hole, 2);
    assert_eq!(game.state.dealer, 1);
    game.reveal_all();
    assert_eq!(game.state.current_seat, Some(2), "dealer 1: seat 2 starts");
}

// ----- reveal --------------------------------------------------------------------------------

#[test]
fn each_seat_reveals_two_distinct_cards_in_any_order_then_the_dealers_left_plays() {
    let mut game = started(3, 1, default_rules(3), Vec::new());
    assert_eq!(game.state.current_seat, None);
    assert_eq!(game.code(2, reveal(3, 3)), "duplicate_positions");
    assert_eq!(game.code(1, draw(Source::Stock)), "wrong_stage");
    let events = game.ok(2, reveal(3, 0));
    let expected = [game.state.players[2].grid[3], game.state.players[2].grid[0]];
    assert!(matches!(
        &events[..],
        [Event::CardsRevealed { seat: 2, positions, cards }]
            if *positions == [pos(3), pos(0)].into() && *cards == expected.into()
    ));
    let err = game.play(2, reveal(1, 2)).expect_err("second reveal");
    assert_eq!(err.code(), "already_revealed");
    game.ok(0, reveal(0, 3));
    assert_eq!(game.state.stage, Some(Stage::Reveal));
    assert_eq!(game.state.current_seat, None);
    game.ok(1, reveal(4, 5));
    assert_eq!(game.state.stage, Some(Stage::Draw));
    assert_eq!(game.state.current_seat, Some(1));
    assert_eq!(game.state.turn_started_at, Some(Timestamp(game.clock)));
}

// ----- turns ---------------------------------------------------------------------------------

#[test]
fn another_seat_gets_not_your_turn_before_wrong_stage() {
    let mut game = started(2, 1, default_rules(2), Vec::new());
    game.reveal_all();
    let err = game.play(0, swap(0)).expect_err("seat 1 is to play");
    assert_eq!(err.code(), "not_your_turn");
    assert!(err.to_string().contains("seat 1"), "{err}");
    assert_eq!(game.code(1, swap(0)), "wrong_stage");
    assert_eq!(game.code(1, reveal(2, 3)), "wrong_stage");
    assert_eq!(game.code(1, Move::Pass), "wrong_stage");
    assert_eq!(game.code(5, draw(Source::Stock)), "no_such_seat");
}

#[test]
fn a_move_executed_into_a_reused_list_is_the_move_executed() {
    let mut game = started(2, 1, default_rules(2), Vec::new());
    game.reveal_all();
    let mut other = game.state.clone();
    let mut events = vec![Event::FlipDeclined { seat: 0 }];
    let at = Timestamp(9);
    let refused = execute_play(
        &mut other,
        0,
        &draw(Source::Stock),
        &game.secrets,
        at,
        &mut events,
    );
    assert_eq!(refused.expect_err("seat 1 plays").code(), "not_your_turn");
    assert_eq!(other, game.state, "a refused move changes nothing");
    assert!(events.is_empty(), "{events:?}");
    for mv in [draw(Source::Stock), swap(0), draw(Source::Discard), swap(1)] {
        let seat = game.state.current_seat.expect("a seat to play");
        let expected = execute(
            &mut game.state,
            &Command::Play { seat, mv },
            &game.secrets,
            at,
        )
        .expect("legal");
        execute_play(&mut other, seat, &mv, &game.secrets, at, &mut events).expect("legal");
        assert_eq!(events, expected, "{mv:?}");
        assert_eq!(other, game.state, "{mv:?}");
    }
}

#[test]
fn a_card_taken_from_the_discard_pile_must_be_swapped() {
    let deck = stacked_deck(
        0,
        &[
            ["AS", "2S", "3S", "4S", "5S", "6S"],
            ["AH", "2H", "3H", "4H", "5H", "6H"],
        ],
        "7H",
        &[],
    );
    let mut game = started(2, 1, default_rules(2), vec![deck]);
    game.reveal_all();
    let events = game.ok(1, draw(Source::Discard));
    assert!(matches!(
        events[..],
        [Event::CardDrawn { seat: 1, source: Source::Discard, card: c }] if c == card("7H")
    ));
    assert!(game.state.discard.is_empty());
    let err = game.play(1, Move::Discard).expect_err("must swap");
    assert_eq!(err.code(), "must_swap_discard_draw");
    assert_eq!(
        err.to_string(),
        "You took the 7H from the discard pile: you must swap it into your grid."
    );
    let events = game.ok(1, swap(4));
    assert!(matches!(
        events[..],
        [Event::CardSwapped { seat: 1, position, card: c, replaced }]
            if position == pos(4) && c == card("7H") && replaced == card("5H")
    ));
    assert_eq!(game.state.discard, vec![card("5H")]);
    assert!(game.state.players[1].face_up[4]);
    assert_eq!(game.state.current_seat, Some(0));
}

#[test]
fn a_stock_card_may_be_discarded_and_a_swap_into_a_face_down_card_turns_it_up() {
    let mut game = started(2, 1, default_rules(2), Vec::new());
    game.reveal_all();
    let top = *game.state.stock.last().expect("stock");
    game.ok(1, draw(Source::Stock));
    let events = game.ok(1, Move::Discard);
    assert!(matches!(events[..], [Event::CardDiscarded { seat: 1, card: c }] if c == top));
    assert_eq!(game.state.discard.last(), Some(&top));
    assert_eq!(game.state.current_seat, Some(0));
    game.ok(0, draw(Source::Stock));
    game.ok(0, swap(5));
    assert!(game.state.players[0].face_up[5]);
    assert_eq!(game.state.players[0].face_up_count(), 3);
}

#[test]
fn flip_rule_never_has_no_flip_stage() {
    let mut game = started(2, 1, default_rules(2), Vec::new());
    game.reveal_all();
    game.ok(1, draw(Source::Stock));
    assert_eq!(game.code(1, flip(3)), "wrong_stage");
    game.ok(1, Move::Discard);
    assert_eq!(game.state.stage, Some(Stage::Draw));
    assert_eq!(game.state.current_seat, Some(0));
}

#[test]
fn flip_rule_optional_allows_a_flip_or_a_pass() {
    let mut game = started(2, 1, rules(false, FlipRule::Optional, 100), Vec::new());
    game.reveal_all();
    game.ok(1, draw(Source::Stock));
    game.ok(1, Move::Discard);
    assert_eq!(game.state.stage, Some(Stage::Flip));
    assert_eq!(game.state.current_seat, Some(1));
    assert_eq!(
        legal_moves(&game.state, 1),
        vec![flip(2), flip(3), flip(4), flip(5), Move::Pass]
    );
    let err = game.play(1, flip(0)).expect_err("face up");
    assert_eq!(err.code(), "position_already_revealed");
    assert_eq!(game.code(1, draw(Source::Stock)), "wrong_stage");
    let hidden = game.state.players[1].grid[3];
    let events = game.ok(1, flip(3));
    assert!(matches!(
        events[..],
        [Event::CardFlipped { seat: 1, position, card: c }] if position == pos(3) && c == hidden
    ));
    assert_eq!(game.state.current_seat, Some(0));
    game.ok(0, draw(Source::Stock));
    game.ok(0, Move::Discard);
    assert!(matches!(
        game.ok(0, Move::Pass)[..],
        [Event::FlipDeclined { seat: 0 }]
    ));
    assert_eq!(game.state.current_seat, Some(1));
}

#[test]
fn flip_rule_always_requires_a_flip() {
    let mut game = started(2, 1, rules(false, FlipRule::Always, 100), Vec::new());
    game.reveal_all();
    game.ok(1, draw(Source::Stock));
    game.ok(1, Move::Discard);
    let err = game.play(1, Move::Pass).expect_err("must flip");
    assert_eq!(err.code(), "flip_required");
    game.ok(1, flip(2));
    assert_eq!(game.state.current_seat, Some(0));
}

// ----- end of a hole -------------------------------------------------------------------------

/// Replays the first `n` events into a fresh state.
fn replay(events: &[Event], n: usize) -> State {
    let mut state = State::default();
    for (i, event) in events[..n].iter().enumerate() {
        apply(&mut state, event, Timestamp(i as i64 + 1));
    }
    state
}

#[test]
fn a_complete_grid_ends_the_hole_scores_every_grid_and_deals_the_next() {
    let mut game = started(2, 2, default_rules(2), Vec::new());
    game.reveal_all();
    for _ in 0..3 {
        game.draw_and_fill();
        game.draw_and_fill();
    }
    assert_eq!(game.state.hole, 1);
    let hidden_of_seat_0 = game.state.players[0].grid;
    let before = game.events.len();
    game.draw_and_fill(); // seat 1's fourth fill completes its grid
    let new = &game.events[before..];
    assert!(matches!(new[0], Event::CardDrawn { .. }));
    assert!(matches!(new[1], Event::CardSwapped { seat: 1, .. }));
    let Event::HoleEnded {
        hole: 1,
        reason: EndReason::GridComplete,
        grids,
        scores,
    } = &new[2]
    else {
        panic!("hole_ended expected, got {:?}", new[2]);
    };
    assert_eq!(
        grids[0], hidden_of_seat_0,
        "face-down cards are turned up and scored"
    );
    let expected: Vec<i32> = grids.iter().map(|grid| grid_score(grid)).collect();
    assert_eq!(*scores, expected);
    assert!(matches!(
        new[3],
        Event::HoleDealt {
            hole: 2,
            dealer: 1,
            ..
        }
    ));
    assert_eq!(new.len(), 4);

    // Replayed up to the move and to hole_ended: the hole is over, nobody is to play.
    let at_move = replay(&game.events, before + 2);
    assert_eq!(at_move.stage, Some(Stage::HoleOver));
    assert_eq!(at_move.current_seat, None);
    let at_end = replay(&game.events, before + 3);
    let v = view(&at_end, Viewer::Spectator);
    assert_eq!(v.stage, Some(Stage::HoleOver));
    assert_eq!(v.current_seat, None);
    assert_eq!(v.turn_started_at, None);
    assert_eq!(
        v.players[0].grid,
        Cells::from_fn(6, |i| Some(hidden_of_seat_0[i]))
    );
    assert_eq!(
        v.last_hole.as_ref().map(|h| h.scores.clone()),
        Some(scores.clone())
    );
    assert_eq!(v.players[1].hole_scores, vec![scores[1]]);
    assert_eq!(v.players[1].total, scores[1]);

    assert_eq!(game.state.stage, Some(Stage::Reveal));
    assert_eq!(game.state.hole, 2);
    assert!(game.state.players.iter().all(|p| p.face_up_count() == 0));
}

#[test]
fn final_turns_give_every_other_seat_one_more_turn_and_start_no_new_round() {
    let mut game = started(3, 1, rules(true, FlipRule::Never, 150), Vec::new());
    game.reveal_all();
    for _ in 0..9 {
        game.draw_and_fill();
    }
    assert_eq!(game.draw_and_fill(), 1, "seat 1 completes its grid");
    assert_eq!(game.state.current_seat, Some(2));
    assert_eq!(game.state.stage, Some(Stage::Draw));
    assert_eq!(
        game.draw_and_fill(),
        2,
        "seat 2 completes too, during final turns"
    );
    assert_eq!(game.state.current_seat, Some(0));
    let before = game.events.len();
    assert_eq!(game.draw_and_fill(), 0);
    assert!(game.events[before..].iter().any(|e| matches!(
        e,
        Event::HoleEnded {
            reason: EndReason::GridComplete,
            ..
        }
    )));
    assert_eq!(game.state.status, Status::Finished);
}

#[test]
fn without_final_turns_a_complete_grid_ends_the_hole_at_once() {
    let mut game = started(3, 1, default_rules(3), Vec::new());
    game.reveal_all();
    for _ in 0..9 {
        game.draw_and_fill();
    }
    game.draw_and_fill();
    assert_eq!(game.state.status, Status::Finished);
    assert_eq!(
        game.state.players[2].face_up_count(),
        6,
        "all turned up for scoring"
    );
}

#[test]
fn the_turn_cap_ends_a_hole() {
    let mut game = started(2, 1, rules(false, FlipRule::Never, 2), Vec::new());
    game.reveal_all();
    game.draw_and_discard();
    assert_eq!(game.state.status, Status::Playing);
    game.draw_and_discard();
    assert!(game.events.iter().any(|e| matches!(
        e,
        Event::HoleEnded {
            reason: EndReason::TurnCap,
            ..
        }
    )));
}

#[test]
fn a_turn_that_reaches_the_cap_and_completes_a_grid_ends_it_as_grid_complete() {
    let reason = |max_turns| {
        let mut game = started(2, 1, rules(false, FlipRule::Never, max_turns), Vec::new());
        game.reveal_all();
        while game.state.status == Status::Playing {
            game.draw_and_fill();
        }
        game.events.iter().find_map(|e| match e {
            Event::HoleEnded { reason, .. } => Some(*reason),
            _ => None,
        })
    };
    // Seat 1 completes on the 7th turn of the hole.
    assert_eq!(reason(7), Some(EndReason::GridComplete));
    assert_eq!(reason(6), Some(EndReason::TurnCap));
}

#[test]
fn a_cap_reached_during_final_turns_ends_the_hole_as_grid_complete() {
    let mut game = started(3, 1, rules(true, FlipRule::Never, 11), Vec::new());
    game.reveal_all();
    for _ in 0..9 {
        game.draw_and_fill();
    }
    assert_eq!(
        game.draw_and_fill(),
        1,
        "seat 1 completes its grid on turn 10"
    );
    assert_eq!(game.state.status, Status::Playing, "final turns begin");
    game.draw_and_fill();
    assert_eq!(
        game.state.status,
        Status::Finished,
        "turn 11 reaches the cap"
    );
    let reason = game.events.iter().find_map(|e| match e {
        Event::HoleEnded { reason, .. } => Some(*reason),
        _ => None,
    });
    assert_eq!(reason, Some(EndReason::GridComplete));
}

#[test]
fn drawing_from_an_empty_stock_reshuffles_the_discard_pile_but_its_top() {
    let mut game = started(2, 1, default_rules(2), Vec::new());
    game.reveal_all();
    for _ in 0..39 {
        game.draw_and_discard();
    }
    assert!(game.state.stock.is_empty());
    let pile = game.state.discard.clone();
    let seat = game.state.current_seat.expect("a seat");
    let events = game.ok(seat, draw(Source::Stock));
    let seed = shuffle::effective_seed(&SERVER_SEED, ["", ""]);
    let expected = shuffle::reshuffle(&seed, 1, 1, &pile[..pile.len() - 1]);
    assert_eq!(
        events,
        vec![
            Event::StockReshuffled {
                hole: 1,
                shuffle: 1,
                order: expected.clone()
            },
            Event::CardDrawn {
                seat,
                source: Source::Stock,
                card: expected[0]
            },
        ]
    );
    assert_eq!(game.state.discard, vec![*pile.last().expect("top")]);
    assert_eq!(game.state.stock.len(), 38);
    assert_eq!(game.state.stock.last(), Some(&expected[1]));
}

// ----- end of the game -----------------------------------------------------------------------

#[test]
fn the_game_ends_after_the_last_hole_with_shared_wins_and_the_seed() {
    let deck = stacked_deck(
        0,
        &[
            ["AS", "2S", "3S", "4S", "5S", "6S"],
            ["AH", "2H", "3H", "4H", "5H", "6H"],
        ],
        "7H",
        &[],
    );
    let mut game = started(2, 1, rules(false, FlipRule::Never, 2), vec![deck]);
    game.reveal_all();
    game.draw_and_discard();
    game.draw_and_discard();
    let Some(Event::GameEnded {
        totals,
        winners,
        seed,
    }) = game.events.last()
    else {
        panic!("game_ended last");
    };
    assert_eq!(*totals, vec![17, 17]);
    assert_eq!(*winners, vec![0, 1]);
    assert_eq!(*seed, hex::encode(SERVER_SEED));
    let v = view(&game.state, Viewer::Seat(0));
    assert_eq!(v.status, Status::Finished);
    assert_eq!(v.stage, Some(Stage::HoleOver));
    assert_eq!(v.current_seat, None);
    assert_eq!(v.winners, Some(vec![0, 1]));
    assert_eq!(v.legal_moves, Some(vec![]));
    let err = game.play(1, draw(Source::Stock)).expect_err("finished");
    assert_eq!(err.code(), "game_finished");
}

#[test]
fn the_lowest_total_wins_alone() {
    let deck = stacked_deck(
        0,
        &[
            ["KS", "KH", "KD", "KC", "2S", "2H"],
            ["QS", "QH", "QD", "JC", "JS", "JH"],
        ],
        "7H",
        &[],
    );
    let mut game = started(2, 1, rules(false, FlipRule::Never, 2), vec![deck]);
    game.reveal_all();
    game.draw_and_discard();
    game.draw_and_discard();
    assert_eq!(game.state.winners, Some(vec![0]));
    assert_eq!(game.state.players[0].total, -4);
    assert_eq!(game.state.players[1].total, 60);
}

// ----- move requests and JSON formats --------------------------------------------------------

#[test]
fn move_json_is_the_api_format() {
    let cases = [
        (reveal(0, 4), r#"{"type":"reveal","positions":[0,4]}"#),
        (draw(Source::Stock), r#"{"type":"draw","source":"stock"}"#),
        (
            draw(Source::Discard),
            r#"{"type":"draw","source":"discard"}"#,
        ),
        (swap(5), r#"{"type":"swap","position":5}"#),
        (Move::Discard, r#"{"type":"discard"}"#),
        (flip(2), r#"{"type":"flip","position":2}"#),
        (Move::Pass, r#"{"type":"pass"}"#),
    ];
    for (mv, json) in cases {
        assert_eq!(serde_json::to_string(&mv).expect("json"), json);
        assert_eq!(serde_json::from_str::<Move>(json).expect("parse"), mv);
        let request: MoveRequest = serde_json::from_str(json).expect("request");
        assert_eq!(Move::try_from(&request), Ok(mv));
    }
    for bad in [
        r#"{"type":"swap","position":1,"extra":true}"#,
        r#"{"type":"reveal","positions":[0,1],"x":1}"#,
        r#"{"type":"jump"}"#,
        r#"{"type":"discard","x":1}"#,
        r#"{"type":"pass","position":1}"#,
        r#"{"type":"draw","source":"deck"}"#,
        r#"{"type":"swap","position":"1"}"#,
    ] {
        assert!(serde_json::from_str::<MoveRequest>(bad).is_err(), "{bad}");
        assert!(serde_json::from_str::<Move>(bad).is_err(), "{bad}");
    }
}

#[test]
fn parse_move_reports_state_conflicts_before_value_errors() {
    let mut game = started(2, 1, default_rules(2), Vec::new());
    let request = |json: &str| serde_json::from_str::<MoveRequest>(json).expect("shape");
    let out_of_range = request(r#"{"type":"reveal","positions":[0,6]}"#);
    let err = parse_move(&game.state, 0, &out_of_range).expect_err("out of range");
    assert_eq!(err.code(), "position_out_of_range");
    let three = request(r#"{"type":"reveal","positions":[0,1,2]}"#);
    assert_eq!(
        parse_move(&game.state, 0, &three)
            .expect_err("three")
            .code(),
        "invalid_reveal"
    );
    game.reveal_all();
    let swap_minus_one = request(r#"{"type":"swap","position":-1}"#);
    assert_eq!(
        parse_move(&game.state, 0, &swap_minus_one)
            .expect_err("seat 1 plays")
            .code(),
        "not_your_turn"
    );
    assert_eq!(
        parse_move(&game.state, 1, &swap_minus_one)
            .expect_err("draw first")
            .code(),
        "wrong_stage"
    );
    game.ok(1, draw(Source::Stock));
    assert_eq!(
        parse_move(&game.state, 1, &swap_minus_one)
            .expect_err("bad position")
            .code(),
        "position_out_of_range"
    );
    assert_eq!(
        parse_move(&game.state, 1, &request(r#"{"type":"swap","position":3}"#)),
        Ok(swap(3))
    );
}

#[test]
fn events_serialize_as_type_and_data() {
    let mut game = started(2, 1, default_rules(2), Vec::new());
    game.reveal_all();
    let events = game.ok(1, draw(Source::Stock));
    let json = serde_json::to_value(&events[0]).expect("json");
    assert_eq!(json["type"], "card_drawn");
    assert_eq!(json["data"]["seat"], 1);
    assert_eq!(json["data"]["source"], "stock");
    assert!(json["data"]["card"].is_string());
    for event in &game.events {
        let text = serde_json::to_string(event).expect("json");
        assert_eq!(&serde_json::from_str::<Event>(&text).expect("parse"), event);
    }
    let dealt = serde_json::to_value(&game.events[3]).expect("json");
    assert_eq!(dealt["type"], "hole_dealt");
    assert_eq!(dealt["data"]["deck"].as_array().map(Vec::len), Some(52));
}

#[test]
fn every_error_has_its_code_and_a_sentence() {
    let cases = [
        (RuleError::NotCreated, "not_found"),
        (RuleError::GameFull, "game_full"),
        (RuleError::GameNotStarted, "game_not_started"),
        (RuleError::GameFinished, "game_finished"),
        (
            RuleError::NotYourTurn {
                seat: 0,
                current: 1,
            },
            "not_your_turn",
        ),
        (RuleError::AlreadyRevealed(0), "already_revealed"),
        (
            RuleError::PositionOutOfRange {
                position: 9,
                cells: 6,
            },
            "position_out_of_range",
        ),
        (RuleError::DuplicatePositions(pos(1)), "duplicate_positions"),
        (
            RuleError::InvalidReveal {
                given: 3,
                wanted: 2,
            },
            "invalid_reveal",
        ),
        (
            RuleError::PositionAlreadyRevealed(pos(1)),
            "position_already_revealed",
        ),
        (
            RuleError::MustSwapDiscardDraw(card("7H")),
            "must_swap_discard_draw",
        ),
        (RuleError::FlipRequired, "flip_required"),
        (RuleError::InvalidName("x".into()), "invalid_name"),
        (
            RuleError::InvalidClientSeed("x".into()),
            "invalid_client_seed",
        ),
        (RuleError::InvalidDeck("x".into()), "invalid_deck"),
        (
            RuleError::InvalidGameOptions("x".into()),
            "invalid_game_options",
        ),
    ];
    for (err, code) in cases {
        assert_eq!(err.code(), code, "{err}");
        assert!(err.to_string().ends_with('.'), "a sentence: {err}");
    }
}

// ----- views and redaction -------------------------------------------------------------------

#[test]
fn a_waiting_game_view_has_null_hole_fields_and_the_seats_taken_so_far() {
    let mut game = created(3, 9, default_rules(3), Vec::new());
    join(&mut game, "Ada").expect("join");
    let json = serde_json::to_value(view(&game.state, Viewer::Spectator)).expect("json");
    for field in [
        "hole",
        "dealer",
        "current_seat",
        "stage",
        "discard_top",
        "drawn",
        "last_hole",
        "turn_started_at",
        "winners",
    ] {
        assert!(json[field].is_null(), "{field} should be null: {json}");
    }
    assert_eq!(json["status"], "waiting");
    assert_eq!(json["seats"], 3);
    assert_eq!(json["version"], 2);
    assert_eq!(json["players"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        json["players"][0]["grid"],
        serde_json::json!([null, null, null, null, null, null])
    );
    assert_eq!(json["players"][0]["name"], "Ada");
    assert!(json.get("you").is_none() && json.get("legal_moves").is_none());
    let own = serde_json::to_value(view(&game.state, Viewer::Seat(0))).expect("json");
    assert_eq!(own["you"], 0);
    assert_eq!(own["legal_moves"], serde_json::json!([]));
}

#[test]
fn a_stock_draw_is_seen_only_by_the_drawer_and_a_discard_draw_by_all() {
    let mut game = started(2, 1, default_rules(2), Vec::new());
    game.reveal_all();
    let own = view(&game.state, Viewer::Seat(1));
    assert_eq!(
        own.legal_moves,
        Some(vec![draw(Source::Stock), draw(Source::Discard)])
    );
    assert_eq!(own.turn_started_at, Some(Timestamp(game.clock)));
    let drawn_card = *game.state.stock.last().expect("stock");
    game.ok(1, draw(Source::Stock));
    let seen_by = |state: &State, viewer| view(state, viewer).drawn.and_then(|d| d.card);
    assert_eq!(seen_by(&game.state, Viewer::Seat(1)), Some(drawn_card));
    assert_eq!(seen_by(&game.state, Viewer::Seat(0)), None);
    assert_eq!(seen_by(&game.state, Viewer::Spectator), None);
    let spectator = view(&game.state, Viewer::Spectator);
    assert_eq!(spectator.stock_count, 52 - 13 - 1);
    assert_eq!(spectator.players[1].revealed_count, 2);
    assert_eq!(spectator.players[1].grid[2], None);
    assert_eq!(
        spectator.players[1].grid[0],
        Some(game.state.players[1].grid[0])
    );
    game.ok(1, Move::Discard);
    game.ok(0, draw(Source::Discard));
    assert_eq!(seen_by(&game.state, Viewer::Seat(1)), Some(drawn_card));
    assert_eq!(seen_by(&game.state, Viewer::Spectator), Some(drawn_card));
}

#[test]
fn log_events_are_redacted_per_viewer_while_the_game_runs() {
    let mut game = started(2, 1, default_rules(2), Vec::new());
    game.reveal_all();
    let drawn = game.ok(1, draw(Source::Stock)).remove(0);
    let dealt = game.events[3].clone();
    for viewer in [Viewer::Spectator, Viewer::Seat(0), Viewer::Seat(1)] {
        let redacted = redact_event(&dealt, viewer).expect("deck hidden");
        assert_eq!(redacted["type"], "hole_dealt");
        assert!(redacted["data"]["deck"].is_null());
        assert!(redacted["data"]["discard"].is_string());
    }
    assert_eq!(redact_event(&drawn, Viewer::Seat(1)), None);
    for viewer in [Viewer::Spectator, Viewer::Seat(0)] {
        let redacted = redact_event(&drawn, viewer).expect("card hidden");
        assert!(redacted["data"]["card"].is_null());
        assert_eq!(redacted["data"]["source"], "stock");
    }
    let discarded = game.ok(1, Move::Discard).remove(0);
    assert_eq!(redact_event(&discarded, Viewer::Spectator), None);
    let from_pile = game.ok(0, draw(Source::Discard)).remove(0);
    assert_eq!(redact_event(&from_pile, Viewer::Spectator), None);
    let reshuffled = Event::StockReshuffled {
        hole: 1,
        shuffle: 1,
        order: vec![card("AS")],
    };
    let redacted = redact_event(&reshuffled, Viewer::Seat(0)).expect("order hidden");
    assert!(redacted["data"]["order"].is_null());
    assert_eq!(redacted["data"]["shuffle"], 1);
}

#[test]
fn the_view_schema_documents_every_api_field() {
    use utoipa::PartialSchema;
    let schema = serde_json::to_value(golf_server::engine::View::schema()).expect("json");
    let properties = schema["properties"].as_object().expect("an object schema");
    for field in [
        "id",
        "version",
        "status",
        "stacked",
        "commitment",
        "rules",
        "seats",
        "holes",
        "hole",
        "dealer",
        "current_seat",
        "stage",
        "discard_top",
        "discard_count",
        "stock_count",
        "players",
        "drawn",
        "last_hole",
        "turn_started_at",
        "winners",
        "you",
        "legal_moves",
    ] {
        assert!(
            properties.contains_key(field),
            "{field} missing from {schema}"
        );
    }
    let card = serde_json::to_value(Card::schema()).expect("json");
    assert_eq!(card["type"], "string");
}
