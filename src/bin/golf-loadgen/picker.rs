//! Which move to send next, chosen from the last view a client saw (a move's answer is the
//! mover's view): pure, so that a client sends one request per move and reads no more.

use serde_json::{Value, json};

/// What a game's driver does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Seat `seat` sends `body`.
    Move {
        seat: usize,
        body: Value,
    },
    /// The next move depends on what only seat `seat` sees (its drawn card): read its view.
    NeedView(usize),
    /// Nobody can move in what was seen (the game is not started): read again later.
    Wait,
    Finished,
}

/// The next move of a game, from a view of it. `turn` varies the choices (a draw from the
/// discard pile now and then, a discard now and then) so that runs exercise every move type.
///
/// A seat's own legal moves, when the view is that seat's and lists some, are used as given.
/// Otherwise the public state says who is to play: in the initial reveal each seat that has not
/// revealed yet reveals positions 0 and 1; in the draw stage the seat to play draws, which is
/// always legal (an empty stock is reshuffled). A placement or a flip needs the mover's own view.
pub fn next_action(view: &Value, turn: u64) -> Action {
    match view["status"].as_str() {
        Some("finished") => return Action::Finished,
        Some("playing") => {}
        _ => return Action::Wait,
    }
    if let (Some(me), Some(legal)) = (seat_of(&view["you"]), view["legal_moves"].as_array())
        && !legal.is_empty()
    {
        return Action::Move {
            seat: me,
            body: choose(view, me, legal, turn),
        };
    }
    let current = seat_of(&view["current_seat"]);
    match (view["stage"].as_str(), current) {
        (Some("reveal"), _) => {
            let players = view["players"].as_array().map(Vec::as_slice).unwrap_or(&[]);
            match players
                .iter()
                .position(|player| player["revealed_count"].as_u64() < Some(2))
            {
                Some(seat) => Action::Move {
                    seat,
                    body: json!({"type": "reveal", "positions": [0, 1]}),
                },
                None => Action::Wait,
            }
        }
        (Some("draw"), Some(seat)) => Action::Move {
            seat,
            body: draw(turn),
        },
        (_, Some(seat)) => Action::NeedView(seat),
        _ => Action::Wait,
    }
}

/// A move among `legal`, the legal moves of seat `me` in its own view.
pub fn choose(view: &Value, me: usize, legal: &[Value], turn: u64) -> Value {
    let of_type = |kind: &str| legal.iter().find(|mv| mv["type"] == kind);
    if of_type("reveal").is_some() {
        let first = json!({"type": "reveal", "positions": [0, 1]});
        return if legal.contains(&first) {
            first
        } else {
            legal[0].clone()
        };
    }
    if of_type("draw").is_some() {
        let wanted = draw(turn);
        return if legal.contains(&wanted) {
            wanted
        } else {
            json!({"type": "draw", "source": "stock"})
        };
    }
    if let Some(flip) = of_type("flip") {
        return flip.clone();
    }
    if let Some(discard) = of_type("discard")
        && turn % 3 == 1
    {
        return discard.clone();
    }
    // Swapping into a face-down position ends the hole within a few turns.
    let grid = view["players"][me]["grid"].as_array();
    let face_down = grid.and_then(|grid| grid.iter().position(Value::is_null));
    let swap = json!({"type": "swap", "position": face_down.unwrap_or((turn % 6) as usize)});
    if legal.contains(&swap) {
        swap
    } else {
        legal[0].clone()
    }
}

fn draw(turn: u64) -> Value {
    let source = if turn % 4 == 3 { "discard" } else { "stock" };
    json!({"type": "draw", "source": source})
}

fn seat_of(value: &Value) -> Option<usize> {
    value.as_u64().and_then(|seat| usize::try_from(seat).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(stage: &str, current: Value, you: Value, legal: Value) -> Value {
        json!({
            "status": "playing",
            "stage": stage,
            "current_seat": current,
            "you": you,
            "legal_moves": legal,
            "players": [
                {"seat": 0, "revealed_count": 2, "grid": ["4S", "QH", null, null, null, null]},
                {"seat": 1, "revealed_count": 0, "grid": [null, null, null, null, null, null]},
            ],
        })
    }

    #[test]
    fn the_seat_still_to_reveal_reveals_the_first_two() {
        let seen = view("reveal", Value::Null, json!(0), json!([]));
        assert_eq!(
            next_action(&seen, 0),
            Action::Move {
                seat: 1,
                body: json!({"type": "reveal", "positions": [0, 1]})
            }
        );
    }

    #[test]
    fn the_seat_to_play_draws_from_what_the_public_state_shows() {
        let seen = view("draw", json!(1), json!(0), json!([]));
        let Action::Move { seat, body } = next_action(&seen, 0) else {
            panic!("a move");
        };
        assert_eq!((seat, body["type"].as_str()), (1, Some("draw")));
    }

    #[test]
    fn a_placement_by_another_seat_needs_its_view() {
        let seen = view("place", json!(1), json!(0), json!([]));
        assert_eq!(next_action(&seen, 0), Action::NeedView(1));
    }

    #[test]
    fn the_mover_swaps_its_drawn_card_into_a_face_down_position() {
        let legal = json!([
            {"type": "swap", "position": 0}, {"type": "swap", "position": 1},
            {"type": "swap", "position": 2}, {"type": "swap", "position": 3},
            {"type": "swap", "position": 4}, {"type": "swap", "position": 5},
            {"type": "discard"},
        ]);
        let seen = view("place", json!(0), json!(0), legal);
        assert_eq!(
            next_action(&seen, 0),
            Action::Move {
                seat: 0,
                body: json!({"type": "swap", "position": 2})
            }
        );
        let Action::Move { body, .. } = next_action(&seen, 1) else {
            panic!("a move");
        };
        assert_eq!(body, json!({"type": "discard"}));
    }

    #[test]
    fn finished_and_waiting_games_take_no_move() {
        assert_eq!(
            next_action(&json!({"status": "finished"}), 0),
            Action::Finished
        );
        assert_eq!(next_action(&json!({"status": "waiting"}), 0), Action::Wait);
    }
}
