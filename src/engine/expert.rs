//! The `expert` strategy and the evaluator it shares with the analysis of finished games
//! ([`evaluate`]): each candidate move is played on many determinizations of the hole (the cards
//! the seat cannot see sampled from those it has not seen), each played out to the end of the
//! hole by the greedy policy, and scored by the mover's mean hole score. The work is fixed (a
//! number of samples, never a time limit) and seeded by the caller, so the same observation and
//! seed always give the same move, on any machine.

use rand::Rng;

use super::greedy::{Rulebook, positions_of, spread_mask};
use super::moves::Move;
use super::rollout::{Deal, Playout};
use super::rules::Rules;
use super::stage::Stage;
use super::view::Observation;

/// The `expert` bot's work per decision, in determinizations × seats × cells: each candidate
/// move is played out once on each of `EXPERT_WORK / (seats × cells)` determinizations (the same
/// deals for every candidate, so that their difference is the move's, not luck's), as a playout
/// is longer the more seats and cells it fills. 4096 gives the standard two-seat game 341
/// determinizations and a four-seat `3x3` game 113, each decision under 10 ms at p99 on one
/// core of our 2-core machine (a bot may spend 20 ms inside the request that hands it the turn);
/// greedy's mean score per hole minus the expert's, over 2,000 deals played both ways, grew from
/// 1.95 with 32 determinizations to 3.7 with 256 (docs/SCALING.md).
pub const EXPERT_WORK: usize = 4096;

/// The fewest determinizations of an `expert` decision.
pub const EXPERT_MIN_SAMPLES: usize = 32;

/// Determinizations per decision of the `expert` bot in a game of `seats` seats under `rules`.
pub fn expert_samples(rules: &Rules, seats: u8) -> usize {
    let size = usize::from(seats).max(1) * rules.cells();
    (EXPERT_WORK / size).max(EXPERT_MIN_SAMPLES)
}

/// A candidate move's mean outcome over the samples of [`evaluate`].
#[derive(Clone, Copy, PartialEq, Debug, Default)]
pub struct Outcome {
    /// The mover's mean hole score.
    pub own: f64,
}

/// The mean outcome of each of `candidates` (moves of `obs.seat`, legal in `obs`) over `samples`
/// determinizations of the hole that `obs` shows, the playouts seeded by `seed`.
pub fn evaluate(obs: &Observation, candidates: &[Move], samples: usize, seed: u64) -> Vec<Outcome> {
    let book = Rulebook::new(obs.rules());
    let mut rng = Playout::new(seed);
    let seat = usize::from(obs.seat());
    let deal = Deal::new(&book, obs);
    let mut sums = vec![0i64; candidates.len()];
    for _ in 0..samples {
        let table = deal.sample(&book, &mut rng);
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
/// hole score by [`evaluate`] ([`expert_samples`] samples seeded from `rng`).
pub fn expert(obs: &Observation, rng: &mut impl Rng) -> Move {
    if obs.stage() == Some(Stage::Reveal) {
        return spread_reveal(obs);
    }
    let legal = obs.legal();
    match legal.len() {
        0 => Move::Pass,
        1 => legal[0],
        _ => {
            let samples = expert_samples(obs.rules(), obs.seats());
            let outcomes = evaluate(obs, &legal, samples, rng.random());
            best_index(&outcomes, |o| o.own).map_or(Move::Pass, |i| legal[i])
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
    Move::Reveal {
        positions: positions_of(spread_mask(&Rulebook::new(obs.rules()))),
    }
}
