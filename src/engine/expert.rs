//! The `expert` strategy and the evaluator it shares with the analysis of finished games
//! ([`evaluate`]): each candidate move is played on many determinizations of the hole (the cards
//! the seat cannot see sampled from those it has not seen), each played out to the end of the
//! hole by the greedy policy, and scored by the mover's mean hole score. The work is fixed (a
//! number of samples, never a time limit) and seeded by the caller, so the same observation and
//! seed always give the same move, on any machine.

use rand::Rng;

use super::cards::{Cells, Position};
use super::moves::Move;
use super::rollout::{Playout, Rulebook, Table, spread_mask};
use super::stage::Stage;
use super::view::Observation;

/// Determinizations per decision of the `expert` bot: each candidate move is played out once on
/// each (the same deals for every candidate, so that their difference is the move's, not luck's).
/// 32 keeps a decision near a few milliseconds of one core (96 took three times as long, with a
/// p99 over the 20 ms a bot may spend inside the request that hands it the turn).
pub const EXPERT_SAMPLES: usize = 32;

/// A candidate move's mean outcome over the samples of [`evaluate`].
#[derive(Clone, Copy, PartialEq, Debug, Default)]
pub struct Outcome {
    /// The mover's mean hole score.
    pub own: f64,
}

/// The mean outcome of each of `candidates` (moves of `obs.seat`, legal in `obs`) over `samples`
/// determinizations of the hole that `obs` shows, the playouts seeded by `seed`.
pub fn evaluate(obs: &Observation, candidates: &[Move], samples: usize, seed: u64) -> Vec<Outcome> {
    let book = Rulebook::new(&obs.rules);
    let mut rng = Playout::new(seed);
    let seat = usize::from(obs.seat);
    let mut sums = vec![0i64; candidates.len()];
    for _ in 0..samples {
        let table = Table::deal(&book, obs, &mut rng);
        let playout_seed = rng.next_u64();
        for (sum, &mv) in sums.iter_mut().zip(candidates) {
            let mut table = table.clone();
            let mut playout = Playout::new(playout_seed);
            table.play(&book, seat, mv, &mut playout);
            let scores = table.play_out(&book, &mut playout);
            *sum += i64::from(scores[seat]);
        }
    }
    let n = samples.max(1) as f64;
    sums.into_iter()
        .map(|own| Outcome {
            own: own as f64 / n,
        })
        .collect()
}

/// The `expert` bot's move seeing `obs`: the greedy bot's spread reveal (nothing is known yet
/// to choose by), the only legal move when there is one, else the candidate of least mean
/// hole score by [`evaluate`] ([`EXPERT_SAMPLES`] samples seeded from `rng`).
pub fn expert(obs: &Observation, rng: &mut impl Rng) -> Move {
    if obs.stage == Some(Stage::Reveal) {
        return spread_reveal(obs);
    }
    match obs.legal.len() {
        0 => Move::Pass,
        1 => obs.legal[0],
        _ => {
            let outcomes = evaluate(obs, &obs.legal, EXPERT_SAMPLES, rng.random());
            best_index(&outcomes, |o| o.own).map_or(Move::Pass, |i| obs.legal[i])
        }
    }
}

/// The index of the outcome of least `value` (the first on ties).
pub fn best_index(outcomes: &[Outcome], value: impl Fn(&Outcome) -> f64) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, outcome) in outcomes.iter().enumerate() {
        let v = value(outcome);
        if best.is_none_or(|(_, b)| v < b) {
            best = Some((i, v));
        }
    }
    best.map(|(i, _)| i)
}

/// The greedy bot's initial reveal: one card a column on a diagonal, then the rest in order.
fn spread_reveal(obs: &Observation) -> Move {
    let mask = spread_mask(&Rulebook::new(&obs.rules));
    let chosen: Vec<Position> = (0..obs.grid.len())
        .filter(|p| mask & (1 << p) != 0)
        .map(|p| Position::ALL[p])
        .collect();
    Move::Reveal {
        positions: Cells::from_fn(chosen.len(), |i| chosen[i]),
    }
}
