//! Hidden information stays hidden: on a stacked game, where the test knows every card, no
//! response to any viewer ever names a card that viewer may not see, after every single move.

mod common;

use std::sync::Arc;

use common::{Backend, Seat, TestApp, open_store, pick_move, spawn_app, stacked_deck};
use golf_server::engine::{Card, Source, State, Status};
use golf_server::store::EventStore;
use golf_server::store::codec;
use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

/// Who looks: `None` is a spectator.
type Viewer<'a> = Option<&'a Seat>;

/// The cards `viewer` may not see in `state`: face-down cards (the owner's too), the stock, and
/// another seat's card drawn from the stock.
fn hidden_cards(state: &State, viewer: Viewer) -> Vec<Card> {
    let mut hidden: Vec<Card> = state.stock.clone();
    for player in &state.players {
        for (position, card) in player.grid.iter().enumerate() {
            if !player.face_up[position] {
                hidden.push(*card);
            }
        }
    }
    if let Some(drawn) = state.drawn
        && drawn.source == Source::Stock
        && viewer.map(|seat| seat.seat) != Some(drawn.seat)
    {
        hidden.push(drawn.card);
    }
    hidden
}

/// Whether `text` names `code` as a card: not as part of a longer word or number.
fn names_card(text: &str, code: &str) -> bool {
    text.match_indices(code).any(|(start, _)| {
        let before = text[..start].chars().next_back();
        let after = text[start + code.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_alphanumeric())
            && !after.is_some_and(|c| c.is_ascii_alphanumeric())
    })
}

/// A body as the test reads it; `last_hole` belongs to a finished hole whose cards were all
/// shown, and cards are dealt anew each hole, so it is left out of the comparison.
async fn body_of(response: reqwest::Response) -> String {
    let mut body: Value = response.json().await.unwrap_or(Value::Null);
    if let Some(object) = body.as_object_mut() {
        object.remove("last_hole");
    }
    body.to_string()
}

struct Probe<'a> {
    app: &'a TestApp,
    store: Arc<dyn EventStore>,
    id: String,
    seats: Vec<Seat>,
}

impl Probe<'_> {
    async fn full_state(&self) -> (State, i64) {
        let id: Uuid = self.id.parse().unwrap();
        let entries = self.store.load_events(id, 0, 100_000).await.unwrap();
        let hole_start = entries
            .iter()
            .rev()
            .find(|entry| entry.kind == "hole_dealt")
            .map_or(0, |entry| entry.seq);
        let record = self.store.load_game(id).await.unwrap().unwrap();
        let secrets = codec::secrets_of(&record).unwrap();
        (
            golf_server::audit::replay::rebuild(&entries, &secrets).unwrap(),
            hole_start,
        )
    }

    /// Every response a viewer can get about the game now.
    async fn responses(&self, viewer: Viewer<'_>, hole_start: i64, version: u64) -> Vec<String> {
        let token = viewer.map(|seat| seat.token.as_str());
        let id = &self.id;
        let view_path = match viewer {
            Some(_) => format!("/v1/games/{id}/view"),
            None => format!("/v1/games/{id}"),
        };
        let mut bodies = Vec::new();
        for path in [
            view_path,
            format!("/v1/games/{id}/events?after={}", hole_start - 1),
            format!("/v1/games/{id}/replay/{version}"),
        ] {
            let response = self.app.send(Method::GET, &path, None, token).await;
            assert_eq!(response.status(), 200, "{path}");
            bodies.push(body_of(response).await);
        }
        if let Some(seat) = viewer {
            // Refused moves: their details name cards too ("You took the 7H ...").
            for mv in [
                json!({"type": "discard"}),
                json!({"type": "draw", "source": "stock"}),
                json!({"type": "swap", "position": 7}),
                json!({"type": "flip", "position": 0}),
            ] {
                let response = self.app.play(id, &seat.token, &mv).await;
                if response.status() != 200 {
                    bodies.push(response.text().await.unwrap());
                } else {
                    panic!("a probing move was accepted: {mv}");
                }
            }
        }
        bodies
    }

    /// Checks every viewer's responses against what that viewer may see.
    async fn check_nothing_leaks(&self) {
        let (state, hole_start) = self.full_state().await;
        if state.status != Status::Playing {
            return;
        }
        let viewers: Vec<Viewer> = std::iter::once(None)
            .chain(self.seats.iter().map(Some))
            .collect();
        for viewer in viewers {
            let hidden = hidden_cards(&state, viewer);
            assert!(!hidden.is_empty());
            for body in self.responses(viewer, hole_start, state.version).await {
                for card in &hidden {
                    let code = card.to_string();
                    assert!(
                        !names_card(&body, &code),
                        "{code} is hidden from {:?} but this response names it: {body}",
                        viewer.map(|s| s.seat)
                    );
                }
            }
        }
        // The check is not vacuous: the drawer does see a stock card it drew.
        if let Some(drawn) = state.drawn
            && drawn.source == Source::Stock
        {
            let drawer = &self.seats[usize::from(drawn.seat)];
            let view = self.app.view(&self.id, Some(&drawer.token)).await;
            assert_eq!(view["drawn"]["card"], drawn.card.to_string());
            let spectator = self.app.view(&self.id, None).await;
            assert_eq!(spectator["drawn"]["card"], Value::Null);
        }
    }
}

/// Whether a probing move could be legal for this seat now; such seats are not probed.
fn probes_are_all_illegal(view: &Value) -> bool {
    let legal = view["legal_moves"].as_array().unwrap();
    !legal.iter().any(|mv| {
        mv["type"] == "discard"
            || mv == &json!({"type": "draw", "source": "stock"})
            || mv == &json!({"type": "flip", "position": 0})
    })
}

async fn no_hidden_card_reaches_any_viewer_after_any_move(backend: Backend) {
    let app = spawn_app(backend).await;
    let decks: Vec<Vec<String>> = (1..=2).map(stacked_deck).collect();
    let (id, created) = app
        .create_game(json!({
            "seats": 3,
            "holes": 2,
            "decks": decks,
            "rules": {"final_turns": true, "flip_after_discard": "optional"}
        }))
        .await;
    assert_eq!(created["stacked"], true);
    let mut seats = Vec::new();
    for name in ["Ada", "Bob", "Cy"] {
        seats.push(app.join(&id, name).await);
    }
    let store = open_store(&app.database.url).await;
    let probe = Probe {
        app: &app,
        store,
        id: id.clone(),
        seats: seats.clone(),
    };

    let mut moves = 0;
    let mut checked = 0;
    'game: for _ in 0..1_000 {
        for seat in &seats {
            let view = app.view(&id, Some(&seat.token)).await;
            if view["status"] == "finished" {
                break 'game;
            }
            let Some(mv) = pick_move(&view, moves) else {
                continue;
            };
            let response = app.play(&id, &seat.token, &mv).await;
            assert_eq!(response.status(), 200, "{mv}");
            moves += 1;
            // Probing moves must all be refused, so probe only when no seat could make one.
            let mut all_refused = true;
            for other in &seats {
                let view = app.view(&id, Some(&other.token)).await;
                all_refused &= probes_are_all_illegal(&view);
            }
            if all_refused {
                probe.check_nothing_leaks().await;
                checked += 1;
            } else {
                probe.check_views_and_log_only().await;
            }
        }
    }
    assert_eq!(app.view(&id, None).await["status"], "finished");
    assert!(
        checked > 10,
        "{checked} positions probed with refused moves"
    );

    // Once the game is finished, the log is complete: the decks and every draw are public.
    let log = app.events(&id, None, 0).await;
    for entry in &log {
        assert!(entry["salt"].is_string(), "{entry}");
    }
    let dealt: Vec<&Value> = log.iter().filter(|e| e["type"] == "hole_dealt").collect();
    assert_eq!(dealt[0]["data"]["deck"], json!(decks[0]));
    assert_eq!(dealt[1]["data"]["deck"], json!(decks[1]));
}

impl Probe<'_> {
    /// As [`Probe::check_nothing_leaks`], without the refused moves.
    async fn check_views_and_log_only(&self) {
        let (state, hole_start) = self.full_state().await;
        if state.status != Status::Playing {
            return;
        }
        for viewer in std::iter::once(None).chain(self.seats.iter().map(Some)) {
            let token = viewer.map(|seat| seat.token.as_str());
            let id = &self.id;
            let view_path = match viewer {
                Some(_) => format!("/v1/games/{id}/view"),
                None => format!("/v1/games/{id}"),
            };
            for path in [
                view_path,
                format!("/v1/games/{id}/events?after={}", hole_start - 1),
                format!("/v1/games/{id}/replay/{}", state.version),
            ] {
                let body = body_of(self.app.send(Method::GET, &path, None, token).await).await;
                for card in hidden_cards(&state, viewer) {
                    assert!(
                        !names_card(&body, &card.to_string()),
                        "{card} leaks in {path}: {body}"
                    );
                }
            }
        }
    }
}

async fn redacted_entries_hide_draws_from_others_and_keep_the_full_hash(backend: Backend) {
    let app = spawn_app(backend).await;
    let (id, _) = app
        .create_game(json!({"seats": 2, "holes": 1, "decks": [stacked_deck(7)]}))
        .await;
    let seats = [app.join(&id, "Ada").await, app.join(&id, "Bob").await];
    for seat in &seats {
        let response = app
            .play(
                &id,
                &seat.token,
                &json!({"type": "reveal", "positions": [0, 3]}),
            )
            .await;
        assert_eq!(response.status(), 200);
    }
    let view = app.view(&id, None).await;
    let drawer = &seats[view["current_seat"].as_u64().unwrap() as usize];
    let other = &seats[1 - usize::from(drawer.seat)];
    let response = app
        .play(
            &id,
            &drawer.token,
            &json!({"type": "draw", "source": "stock"}),
        )
        .await;
    assert_eq!(response.status(), 200);

    let last = |entries: Vec<Value>| entries.last().unwrap().clone();
    let own = last(app.events(&id, Some(&drawer.token), 0).await);
    let others = last(app.events(&id, Some(&other.token), 0).await);
    let public = last(app.events(&id, None, 0).await);
    assert_eq!(own["type"], "card_drawn");
    assert!(
        own["data"]["card"].is_string() && own["salt"].is_string(),
        "{own}"
    );
    for redacted in [&others, &public] {
        assert_eq!(redacted["data"]["card"], Value::Null, "{redacted}");
        assert_eq!(redacted["salt"], Value::Null, "{redacted}");
        assert_eq!(
            redacted["hash"], own["hash"],
            "a redacted entry keeps the full hash"
        );
    }
    let dealt = &app.events(&id, Some(&drawer.token), 0).await[3];
    assert_eq!(dealt["type"], "hole_dealt");
    assert_eq!(
        dealt["data"]["deck"],
        Value::Null,
        "the deck is hidden from the players too"
    );
    assert!(
        dealt["data"]["discard"].is_string(),
        "the face-up card is public"
    );
}

on_both_backends!(
    no_hidden_card_reaches_any_viewer_after_any_move,
    redacted_entries_hide_draws_from_others_and_keep_the_full_hash,
);
