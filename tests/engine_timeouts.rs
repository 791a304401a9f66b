//! The engine's turn timeouts and leaves: the `turn_timeout_s` rule, when a seat is overdue, the
//! `bot_took_seat` event, and its replay at the time it was logged.

mod engine_common;

use engine_common::{Game, created, join, reveal, rules, started};
use golf_server::engine::{
    BotKind, Command, Event, FlipRule, LoggedEvent, MoveRequest, Rules, RulesInput, TakeoverReason,
    Timestamp, Viewer, overdue_seats, parse_move, play_bot_turns, replay, turn_deadline, view,
};
use serde_json::json;

const SECONDS: i64 = 1_000_000;

fn with_timeout(seconds: u32) -> Rules {
    Rules {
        turn_timeout_s: Some(seconds),
        ..rules(false, FlipRule::Never, 100)
    }
}

/// Runs every bot turn that is due, logged one tick after the last command.
fn bots_play(game: &mut Game) {
    let at = Timestamp(game.clock + 1);
    game.clock += 1;
    let events = play_bot_turns(&mut game.state, &game.secrets, at).expect("bots play");
    game.times.extend(events.iter().map(|_| at));
    game.events.extend(events);
}

fn took(seat: u8, reason: TakeoverReason) -> Vec<Event> {
    vec![Event::BotTookSeat {
        seat,
        bot: BotKind::Greedy,
        reason,
    }]
}

#[test]
fn the_reveal_deadline_covers_every_seat_still_to_reveal() {
    let mut game = started(3, 1, with_timeout(10), Vec::new());
    let dealt_at = *game.times.last().expect("hole_dealt");
    let deadline = Timestamp(dealt_at.0 + 10 * SECONDS);
    assert_eq!(turn_deadline(&game.state), Some(deadline));
    game.ok(0, reveal(0, 4));
    assert_eq!(
        view(&game.state, Viewer::Seat(2)).turn_deadline,
        Some(deadline)
    );
    assert!(overdue_seats(&game.state, Timestamp(deadline.0 - 1)).is_empty());
    assert_eq!(overdue_seats(&game.state, deadline), vec![1, 2]);

    let early = Command::TimeOut {
        seat: 1,
        now: Timestamp(deadline.0 - 1),
    };
    assert_eq!(game.run(&early).unwrap_err().code(), "turn_not_over");
    let revealed = Command::TimeOut {
        seat: 0,
        now: deadline,
    };
    assert_eq!(game.run(&revealed).unwrap_err().code(), "turn_not_over");
    game.clock = deadline.0;
    let on_time = Command::TimeOut {
        seat: 1,
        now: deadline,
    };
    assert_eq!(
        game.run(&on_time).unwrap(),
        took(1, TakeoverReason::TurnTimeout)
    );
    assert_eq!(game.state.players[1].bot, Some(BotKind::Greedy));
    assert_eq!(game.run(&on_time).unwrap_err().code(), "seat_taken_by_bot");
    // The bot reveals at once; seat 2 still owes its reveal, under the same deadline.
    bots_play(&mut game);
    assert!(game.state.players[1].revealed);
    assert_eq!(turn_deadline(&game.state), Some(deadline));
}

#[test]
fn a_turn_deadline_runs_from_the_start_of_the_turn_and_follows_the_turn() {
    let mut game = started(2, 1, with_timeout(30), Vec::new());
    game.reveal_all();
    let started_at = game.state.turn_started_at.expect("a turn started");
    assert_eq!(game.state.current_seat, Some(1));
    let deadline = Timestamp(started_at.0 + 30 * SECONDS);
    assert_eq!(turn_deadline(&game.state), Some(deadline));
    assert_eq!(overdue_seats(&game.state, deadline), vec![1]);
    game.clock = deadline.0 + 5;
    game.run(&Command::TimeOut {
        seat: 1,
        now: Timestamp(deadline.0 + 5),
    })
    .expect("overdue");
    // Nobody but a bot is to play: no deadline until the bot has played.
    assert_eq!(turn_deadline(&game.state), None);
    let replaced = view(&game.state, Viewer::Seat(1));
    assert_eq!(replaced.you, Some(1));
    assert_eq!(replaced.legal_moves, Some(Vec::new()));
    bots_play(&mut game);
    assert_eq!(game.state.current_seat, Some(0));
    let turn = game.state.turn_started_at.expect("seat 0's turn");
    assert_eq!(
        turn_deadline(&game.state),
        Some(Timestamp(turn.0 + 30 * SECONDS))
    );
}

#[test]
fn without_a_timeout_no_seat_is_ever_overdue() {
    let mut game = started(2, 1, rules(false, FlipRule::Never, 100), Vec::new());
    assert_eq!(turn_deadline(&game.state), None);
    assert!(overdue_seats(&game.state, Timestamp(i64::MAX)).is_empty());
    let never = Command::TimeOut {
        seat: 0,
        now: Timestamp(i64::MAX),
    };
    assert_eq!(game.run(&never).unwrap_err().code(), "turn_not_over");
    assert_eq!(view(&game.state, Viewer::Spectator).turn_deadline, None);
    // Its state is stored as before timeouts existed, which projections of earlier games match.
    let stored = serde_json::to_value(&game.state).unwrap();
    assert!(stored.get("reveal_started_at").is_none(), "{stored}");
}

#[test]
fn a_leave_hands_a_running_seat_to_the_bot_once() {
    let mut waiting = created(2, 1, with_timeout(10), Vec::new());
    join(&mut waiting, "Ada").unwrap();
    let leave = |seat| Command::Leave { seat };
    assert_eq!(
        waiting.run(&leave(0)).unwrap_err().code(),
        "game_not_started"
    );

    let mut game = started(2, 1, with_timeout(10), Vec::new());
    assert_eq!(game.run(&leave(5)).unwrap_err().code(), "no_such_seat");
    assert_eq!(game.run(&leave(1)).unwrap(), took(1, TakeoverReason::Left));
    assert_eq!(game.run(&leave(1)).unwrap_err().code(), "seat_taken_by_bot");
    let request: MoveRequest =
        serde_json::from_value(json!({"type": "reveal", "positions": [0, 1]})).unwrap();
    assert_eq!(
        parse_move(&game.state, 1, &request).unwrap_err().code(),
        "seat_taken_by_bot"
    );
    // Only seat 0 is a person to wait for now.
    bots_play(&mut game);
    let deadline = turn_deadline(&game.state).expect("seat 0 reveals");
    assert_eq!(overdue_seats(&game.state, deadline), vec![0]);
}

#[test]
fn a_log_with_takeovers_replays_and_a_timeout_logged_before_its_deadline_does_not() {
    let mut game = started(2, 2, with_timeout(10), Vec::new());
    game.run(&Command::Leave { seat: 0 }).unwrap();
    bots_play(&mut game);
    let deadline = turn_deadline(&game.state).expect("seat 1 reveals");
    game.clock = deadline.0;
    game.run(&Command::TimeOut {
        seat: 1,
        now: deadline,
    })
    .unwrap();
    bots_play(&mut game);
    assert!(game.state.winners.is_some(), "two bots play the game out");

    let log: Vec<LoggedEvent> = game
        .events
        .iter()
        .zip(&game.times)
        .zip(1..)
        .map(|((event, &at), seq)| LoggedEvent {
            seq,
            event: event.clone(),
            at,
        })
        .collect();
    assert_eq!(replay(&log, &game.secrets), Ok(game.state.clone()));

    let mut early = log.clone();
    let timeout = early
        .iter_mut()
        .find(|logged| {
            matches!(
                logged.event,
                Event::BotTookSeat {
                    reason: TakeoverReason::TurnTimeout,
                    ..
                }
            )
        })
        .expect("the timeout is logged");
    timeout.at = Timestamp(deadline.0 - 1);
    let seq = timeout.seq;
    let error = replay(&early, &game.secrets).unwrap_err();
    assert_eq!(error.seq(), seq);
    assert_eq!(
        error.to_string(),
        format!("entry {seq} (bot_took_seat) is refused by the rules: turn_not_over")
    );
}

#[test]
fn turn_timeout_s_is_null_or_10_to_604800_seconds_and_defaults_to_the_server_s() {
    let input = |value| serde_json::from_value::<RulesInput>(value).expect("rules parse");
    let resolve = |value, default| input(value).resolve_with(2, default);
    assert_eq!(resolve(json!({}), None).unwrap().turn_timeout_s, None);
    assert_eq!(
        resolve(json!({}), Some(60)).unwrap().turn_timeout_s,
        Some(60)
    );
    let no_timeout = json!({"turn_timeout_s": null});
    assert_eq!(resolve(no_timeout, Some(60)).unwrap().turn_timeout_s, None);
    for ok in [10, 604_800] {
        let rules = resolve(json!({"turn_timeout_s": ok}), None).unwrap();
        assert_eq!(rules.turn_timeout_s, Some(ok as u32));
    }
    for bad in [9, 0, -10, 604_801, i64::MAX] {
        let error = resolve(json!({"turn_timeout_s": bad}), None).unwrap_err();
        assert_eq!(error.code(), "invalid_game_options", "{bad}");
    }
    // A game without a timeout logs its rules as before the option existed.
    let rules = resolve(json!({}), None).unwrap();
    assert_eq!(
        serde_json::to_value(rules).unwrap(),
        json!({"final_turns": false, "flip_after_discard": "never", "max_turns_per_hole": 100})
    );
}
