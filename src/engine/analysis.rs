//! The analysis of a finished game ([`analyze`]): every decision of every seat (reveal, draw
//! source, placement, flip or pass, knock) judged by the `expert`'s evaluator from what that seat
//! could see at that moment only, with the mover's expected hole score after the move played and
//! after the best one, the difference (`loss`) and its [`Label`]; and each seat's summary.
//! Pure and deterministic: the samples are seeded from the game's revealed seed and the
//! decision's `seq`, so every instance and `golf-server analyze` give the same numbers.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

use super::apply::apply;
use super::event::Event;
use super::expert::{Outcome, best_index, evaluate};
use super::moves::{Move, Source};
use super::replay::LoggedEvent;
use super::stage::{Seat, Stage};
use super::state::State;
use super::view::observe;

/// Determinizations per decision of an analysis (reveals, with up to 126 candidates, take a
/// quarter of them).
pub const ANALYSIS_SAMPLES: usize = 256;

/// Expected points lost from which a decision is an inaccuracy, a mistake, a blunder.
pub const INACCURACY: f64 = 1.0;
/// See [`INACCURACY`].
pub const MISTAKE: f64 = 2.5;
/// See [`INACCURACY`].
pub const BLUNDER: f64 = 5.0;

/// The name and budget of the evaluator, recorded with each analysis.
pub fn engine_name(samples: usize) -> String {
    format!("golf-expert/1 ({samples} samples)")
}

/// Whether an analysis is ready.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnalysisStatus {
    /// Queued or being computed.
    Pending,
    /// Computed.
    Done,
}

/// How bad a decision was, by its loss: [`INACCURACY`], [`MISTAKE`], [`BLUNDER`] points or more.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Label {
    /// At least 1 expected point lost.
    Inaccuracy,
    /// At least 2.5.
    Mistake,
    /// At least 5.
    Blunder,
}

impl Label {
    /// The label of a decision that lost `loss` expected points, if any.
    pub fn of(loss: f64) -> Option<Label> {
        match loss {
            l if l >= BLUNDER => Some(Label::Blunder),
            l if l >= MISTAKE => Some(Label::Mistake),
            l if l >= INACCURACY => Some(Label::Inaccuracy),
            _ => None,
        }
    }
}

/// One decision of a finished game, judged.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize, ToSchema)]
#[schema(example = json!({"seq": 31, "seat": 1, "played": {"type": "swap", "position": 0},
    "best": {"type": "discard"}, "expected_played": 17.4, "expected_best": 8.1, "loss": 9.3,
    "label": "blunder"}))]
pub struct Decision {
    /// The `seq` of the log entry that records the move.
    pub seq: i64,
    /// Who decided.
    pub seat: Seat,
    /// The move played.
    pub played: Move,
    /// The move of least expected hole score (the move played when it is the best).
    pub best: Move,
    /// The mover's expected hole score after the move played, from what it could see then.
    pub expected_played: f64,
    /// The same after the best move.
    pub expected_best: f64,
    /// `expected_played − expected_best`, never below 0.
    pub loss: f64,
    /// `inaccuracy`, `mistake` or `blunder` by the size of `loss`; null below 1 point.
    pub label: Option<Label>,
}

/// One seat's decisions, summed up.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize, ToSchema)]
#[schema(example = json!({"seat": 1, "decisions": 61, "mean_loss": 0.42, "mistakes": 2,
    "blunders": 1}))]
pub struct SeatAnalysis {
    /// The seat.
    pub seat: Seat,
    /// Decisions judged (moves with a single legal choice are not decisions).
    pub decisions: u32,
    /// Mean `loss` over them.
    pub mean_loss: f64,
    /// Decisions labelled `mistake`.
    pub mistakes: u32,
    /// Decisions labelled `blunder`.
    pub blunders: u32,
}

/// The analysis of a finished game.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize, ToSchema)]
pub struct Analysis {
    /// Always `done`.
    pub status: AnalysisStatus,
    /// The evaluator and its budget (`"golf-expert/1 (256 samples)"`).
    pub engine: String,
    /// Every decision of every seat, in log order.
    pub decisions: Vec<Decision>,
    /// Each seat's summary, in seat order.
    pub seats: Vec<SeatAnalysis>,
}

/// Why a log cannot be analysed.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum AnalysisError {
    /// The log does not end with `game_ended`.
    #[error("the game is not finished")]
    NotFinished,
}

/// The analysis of the finished game whose whole log is `log`, at `samples` determinizations a
/// decision ([`ANALYSIS_SAMPLES`] on the server).
pub fn analyze(log: &[LoggedEvent], samples: usize) -> Result<Analysis, AnalysisError> {
    analyze_paced(log, samples, || {})
}

/// [`analyze`], calling `between` after each decision judged: the server's analysis threads
/// rest there while requests are being answered.
pub fn analyze_paced(
    log: &[LoggedEvent],
    samples: usize,
    mut between: impl FnMut(),
) -> Result<Analysis, AnalysisError> {
    let Some(Event::GameEnded { seed, .. }) = log.last().map(|entry| &entry.event) else {
        return Err(AnalysisError::NotFinished);
    };
    let mut state = State::default();
    let mut decisions = Vec::new();
    let mut after_reshuffle = false;
    for entry in log {
        if let Some((seat, played)) = decision_of(&state, &entry.event, after_reshuffle) {
            let seed = decision_seed(seed, entry.seq);
            decisions.extend(judge(&state, seat, played, entry.seq, samples, seed));
            between();
        }
        after_reshuffle = matches!(entry.event, Event::StockReshuffled { .. });
        apply(&mut state, &entry.event, entry.at);
    }
    Ok(Analysis {
        status: AnalysisStatus::Done,
        engine: engine_name(samples),
        seats: summaries(&decisions, state.seats),
        decisions,
    })
}

/// The seat and move of the decision an entry starts on `state`, if it starts one (the
/// `card_drawn` after a reshuffle belongs to the draw that the reshuffle started).
fn decision_of(state: &State, event: &Event, after_reshuffle: bool) -> Option<(Seat, Move)> {
    let decision = match *event {
        Event::StockReshuffled { .. } => return reshuffle_decision(state),
        Event::CardsRevealed {
            seat, positions, ..
        } => (seat, Move::Reveal { positions }),
        Event::CardDrawn { seat, source, .. } if !after_reshuffle => (seat, Move::Draw { source }),
        Event::CardSwapped { seat, position, .. } => (seat, Move::Swap { position }),
        Event::CardDiscarded { seat, .. } => (seat, Move::Discard),
        Event::CardFlipped { seat, position, .. } => (seat, Move::Flip { position }),
        Event::FlipDeclined { seat } => (seat, Move::Pass),
        Event::Knocked { seat } => (seat, Move::Knock),
        _ => return None,
    };
    Some(decision)
}

/// The reshuffle starts the draw of the seat to play, from the stock.
fn reshuffle_decision(state: &State) -> Option<(Seat, Move)> {
    let seat = state.current_seat?;
    Some((
        seat,
        Move::Draw {
            source: Source::Stock,
        },
    ))
}

/// The seed of the samples of the decision at `seq`: the first 8 bytes of
/// SHA-256(seed ‖ `"golf-analysis"` ‖ u64be(seq)).
fn decision_seed(seed: &str, seq: i64) -> u64 {
    let digest = Sha256::new()
        .chain_update(seed.as_bytes())
        .chain_update(b"golf-analysis")
        .chain_update(seq.to_be_bytes())
        .finalize();
    u64::from_be_bytes(digest[..8].try_into().expect("a digest has 32 bytes"))
}

/// `seat`'s move `played` judged on `state` (before it), or `None` when it had no choice.
fn judge(
    state: &State,
    seat: Seat,
    played: Move,
    seq: i64,
    samples: usize,
    seed: u64,
) -> Option<Decision> {
    let obs = observe(state, seat);
    let legal = obs.legal();
    let played_index = legal.iter().position(|mv| *mv == played)?;
    if legal.len() < 2 {
        return None;
    }
    let samples = if obs.stage() == Some(Stage::Reveal) {
        (samples / 4).max(1)
    } else {
        samples
    };
    let outcomes = evaluate(&obs, &legal, samples, seed);
    let best = best_index(&outcomes, |o: &Outcome| o.own)?;
    let (expected_played, expected_best) = (outcomes[played_index].own, outcomes[best].own);
    let loss = round2((expected_played - expected_best).max(0.0));
    Some(Decision {
        seq,
        seat,
        played,
        best: legal[best],
        expected_played: round2(expected_played),
        expected_best: round2(expected_best),
        loss,
        label: Label::of(loss),
    })
}

/// Each seat's summary of `decisions`.
fn summaries(decisions: &[Decision], seats: u8) -> Vec<SeatAnalysis> {
    (0..seats)
        .map(|seat| {
            let own = decisions.iter().filter(|d| d.seat == seat);
            let count = own.clone().count() as u32;
            let lost: f64 = own.clone().map(|d| d.loss).sum();
            let labelled = |label| own.clone().filter(|d| d.label == Some(label)).count() as u32;
            SeatAnalysis {
                seat,
                decisions: count,
                mean_loss: if count == 0 {
                    0.0
                } else {
                    round2(lost / f64::from(count))
                },
                mistakes: labelled(Label::Mistake),
                blunders: labelled(Label::Blunder),
            }
        })
        .collect()
}

/// `x` to two decimals.
fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}
