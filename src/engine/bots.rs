//! Bots: the strategies of each [`BotKind`] ([`choose`] picks a move from an [`Observation`]
//! only, as a bot never sees a face-down card, the stock or another seat's draw) and the driver
//! that plays every bot turn that is due ([`play_bot_turns`]).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use sha2::{Digest, Sha256};

use super::apply::execute;
use super::bot_kind::BotKind;
use super::cards::{Card, Position};
use super::error::RuleError;
use super::event::Event;
use super::legal::legal_move_list;
use super::moves::{Command, Move, Source};
use super::rules::FlipRule;
use super::score::{card_points, column_score};
use super::secrets::Secrets;
use super::stage::{Seat, Stage};
use super::state::State;
use super::time::Timestamp;
use super::view::{Observation, observe};

/// The move a bot of `kind` makes, seeing `obs`. Always one of `obs.legal` when that is not
/// empty (`pass` otherwise: callers only ask a seat that may move).
pub fn choose(kind: BotKind, obs: &Observation, rng: &mut impl Rng) -> Move {
    let legal = &obs.legal;
    let wanted = match kind {
        BotKind::Random => None,
        BotKind::Greedy => Some(greedy(obs)),
    };
    match wanted {
        Some(mv) if legal.contains(&mv) => mv,
        _ if legal.is_empty() => Move::Pass,
        _ => legal[rng.random_range(0..legal.len())],
    }
}

/// Plays every bot turn that is due, in seat order, until a human is to move or the game ends;
/// every event is applied at `at` and returned in log order (see [`play_bot_move`]).
pub fn play_bot_turns(
    state: &mut State,
    secrets: &Secrets,
    at: Timestamp,
) -> Result<Vec<Event>, RuleError> {
    let mut events = Vec::new();
    while let Some(played) = play_bot_move(state, secrets, at)? {
        events.extend(played);
    }
    Ok(events)
}

/// Plays the move of the first bot seat that may move, if any: its events, applied at `at`.
///
/// A bot's rng for each move is seeded with SHA-256(server seed ‖ `"golf-bot"` ‖ the state's
/// version as 8 big-endian bytes): players cannot predict it without the secret seed, and the
/// same game plays the same way again. Fails only if a bot's move is refused, which is a bug.
pub fn play_bot_move(
    state: &mut State,
    secrets: &Secrets,
    at: Timestamp,
) -> Result<Option<Vec<Event>>, RuleError> {
    let Some((seat, bot)) = next_bot(state) else {
        return Ok(None);
    };
    let observation = observe(state, seat);
    let mut rng = bot_rng(&secrets.server_seed, state.version);
    let mv = choose(bot, &observation, &mut rng);
    execute(state, &Command::Play { seat, mv }, secrets, at).map(Some)
}

/// The first bot seat that may move, and its strategy.
fn next_bot(state: &State) -> Option<(Seat, BotKind)> {
    state.players.iter().enumerate().find_map(|(seat, player)| {
        let seat = seat as Seat;
        let bot = player.bot?;
        (!legal_move_list(state, seat).is_empty()).then_some((seat, bot))
    })
}

/// The rng of the bot move made at `version`.
fn bot_rng(server_seed: &[u8; 32], version: u64) -> StdRng {
    let seed = Sha256::new()
        .chain_update(server_seed)
        .chain_update(b"golf-bot")
        .chain_update(version.to_be_bytes())
        .finalize();
    StdRng::from_seed(seed.into())
}

/// Expected points of a face-down card, in tenths (the deck's mean is 71/13 ≈ 5.5).
const UNKNOWN: i32 = 55;

/// Take the discard top when it lowers the expected grid score by at least this (tenths).
const TAKE_DISCARD_GAIN: i32 = 25;

/// Decline an optional flip that would end the hole while the grid scores more than this (tenths).
const HIGH_GRID: i32 = 150;

/// Expected score of a column, in tenths.
fn column_estimate(top: Option<Card>, bottom: Option<Card>) -> i32 {
    match (top, bottom) {
        (Some(a), Some(b)) => 10 * column_score(a, b),
        (Some(a), None) | (None, Some(a)) => 10 * card_points(a) + UNKNOWN,
        (None, None) => 2 * UNKNOWN,
    }
}

/// Expected score of a grid, in tenths.
fn grid_estimate(grid: &[Option<Card>; 6]) -> i32 {
    (0..3).map(|c| column_estimate(grid[c], grid[c + 3])).sum()
}

/// Where `card` lowers the expected score most, and the expected score it leaves: only the
/// column of each candidate position changes.
fn best_placement(grid: &[Option<Card>; 6], card: Card) -> (Position, i32) {
    let columns: [i32; 3] = std::array::from_fn(|c| column_estimate(grid[c], grid[c + 3]));
    let base: i32 = columns.iter().sum();
    let mut best = (Position::ALL[0], i32::MAX);
    for position in Position::ALL {
        let column = position.index() % 3;
        let placed = if position.index() < 3 {
            column_estimate(Some(card), grid[column + 3])
        } else {
            column_estimate(grid[column], Some(card))
        };
        let estimate = base - columns[column] + placed;
        if estimate < best.1 {
            best = (position, estimate);
        }
    }
    best
}

fn greedy(obs: &Observation) -> Move {
    let grid = &obs.grid;
    let face_down = || {
        Position::ALL
            .into_iter()
            .filter(|p| grid[p.index()].is_none())
    };
    match obs.stage {
        Some(Stage::Reveal) => Move::Reveal {
            positions: [Position::ALL[0], Position::ALL[4]],
        },
        Some(Stage::Draw) => {
            let take = obs.discard_top.is_some_and(|top| {
                grid_estimate(grid) - best_placement(grid, top).1 >= TAKE_DISCARD_GAIN
            });
            let source = if take { Source::Discard } else { Source::Stock };
            Move::Draw { source }
        }
        Some(Stage::Place) => match obs.drawn {
            Some((source, card)) => {
                let (position, estimate) = best_placement(grid, card);
                if source == Source::Discard || estimate < grid_estimate(grid) {
                    Move::Swap { position }
                } else {
                    Move::Discard
                }
            }
            None => Move::Discard,
        },
        Some(Stage::Flip) => {
            let last_one = face_down().count() == 1;
            match face_down().next() {
                Some(position)
                    if obs.rules.flip_after_discard == FlipRule::Always
                        || !(last_one && grid_estimate(grid) > HIGH_GRID) =>
                {
                    Move::Flip { position }
                }
                _ => Move::Pass,
            }
        }
        Some(Stage::HoleOver) | None => Move::Pass,
    }
}
