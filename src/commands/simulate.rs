//! The bot-game simulator: plays many games between bots through the engine's own `execute`
//! (decide, then apply: no fast path; a move's events go into one list reused for the game) and
//! reports speed, turns per hole and each seat's results.
//! Deterministic for a given seed (with the `rand` version that Cargo.lock pins), apart from the
//! measured speed, whatever the number of threads: games are independent, and their outcomes are
//! added up in game order.

use std::fmt::Write as _;
use std::time::Instant;

use rand::SeedableRng;
use rand::rngs::StdRng;
use serde::Serialize;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::engine::{
    BotKind, ClientSeed, Command, EndReason, Event, Move, PlayerName, RuleError, Rules, RulesInput,
    Seat, Secrets, Stage, State, Timestamp, check_game_size, choose, execute, execute_play,
    observe, shuffle,
};
use crate::ratings::{self, Rating, SeatResult};

/// What to simulate.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct SimulateOptions {
    /// Number of games.
    pub games: u64,
    /// Seats per game, 2 to 4.
    pub seats: u8,
    /// Holes per game, 1 to 18.
    pub holes: u8,
    /// The bots of seats 0, 1, ...; a shorter list cycles (`greedy,random` on 4 seats is
    /// greedy, random, greedy, random).
    pub bots: Vec<BotKind>,
    /// The rule options (defaults as for a created game).
    pub rules: RulesInput,
    /// The master seed: game `i`'s server seed is `SHA-256("golf-simulate" ‖ u64be(seed) ‖ u64be(i))`.
    pub seed: u64,
    /// Threads that play games side by side (at least 1).
    pub threads: usize,
}

/// How fast one kind of bot decided. The times are those of a sample of its moves: every move
/// of the `expert`, one in [`TIMED_EVERY`] of the others (reading the clock costs about as much
/// as a greedy decision on some machines: timing every one slowed the games it measures by a
/// sixth, one in 16 by 5 %).
#[derive(Clone, PartialEq, Debug, Serialize)]
pub struct DecisionTimes {
    /// The kind of bot.
    pub bot: BotKind,
    /// Moves it chose.
    pub decisions: u64,
    /// Moves whose time was taken.
    pub timed: u64,
    /// Moves chosen per second of its own deciding (on one thread).
    pub decisions_per_sec: f64,
    /// Median time of a decision, in microseconds.
    pub p50_us: f64,
    /// 99th percentile, in microseconds.
    pub p99_us: f64,
    /// The slowest decision, in microseconds.
    pub max_us: f64,
}

/// One seat's results over all games.
#[derive(Clone, PartialEq, Debug, Serialize)]
pub struct SeatReport {
    /// The seat.
    pub seat: Seat,
    /// Its bot.
    pub bot: BotKind,
    /// Mean final total.
    pub mean_total: f64,
    /// Mean score per hole (the mean total over the holes of a game).
    pub mean_per_hole: f64,
    /// Share of the wins (a shared win counts 1/k for each of k winners).
    pub win_share: f64,
}

/// The results of a simulation.
#[derive(Clone, PartialEq, Debug, Serialize)]
pub struct SimulationReport {
    /// Games played.
    pub games: u64,
    /// Seats per game.
    pub seats: u8,
    /// Holes per game.
    pub holes: u8,
    /// The master seed.
    pub seed: u64,
    /// The resolved rules.
    pub rules: Rules,
    /// Wall-clock time of the simulation, in seconds.
    pub elapsed_secs: f64,
    /// Games per second.
    pub games_per_sec: f64,
    /// Mean number of turns per hole (final turns included).
    pub mean_turns_per_hole: f64,
    /// Share of holes that ended at the turn cap.
    pub turn_cap_share: f64,
    /// Each seat's results.
    pub bots: Vec<SeatReport>,
    /// How fast each kind of bot decided.
    pub decisions: Vec<DecisionTimes>,
    /// Each bot's rating after these games, rated as the server rates a rated game (a bot in
    /// several seats of one game rated by its first), from 1500: what `--seed-ratings` stores.
    pub ratings: Vec<BotRating>,
}

/// A bot's rating after a simulation.
#[derive(Clone, PartialEq, Debug, Serialize)]
pub struct BotRating {
    pub bot: BotKind,
    pub rating: Rating,
}

/// One in this many decisions of the fast bots is timed.
pub const TIMED_EVERY: u64 = 64;

/// What one game left.
struct GameOutcome {
    totals: Vec<i32>,
    winners: Vec<Seat>,
    turns: u64,
    capped_holes: u64,
    /// Decisions, counted by seat.
    decisions: Vec<u64>,
    /// How long the timed decisions took, in nanoseconds, by the kind of bot that made them.
    timings: Vec<(BotKind, u32)>,
}

/// Plays `options.games` games and reports. Fails with [`RuleError::InvalidGameOptions`] (or the
/// size and rule errors of game creation) on invalid options.
pub fn run(options: &SimulateOptions) -> Result<SimulationReport, RuleError> {
    let (seats, holes) = check_game_size(i64::from(options.seats), i64::from(options.holes))?;
    let rules = options.rules.resolve(seats)?;
    let bots = seat_bots(&options.bots, seats)?;
    let mut tally = Tally::new(&bots);
    let started = Instant::now();
    let mut decisions: Vec<(BotKind, u64)> = Vec::new();
    let mut timings: Vec<(BotKind, u32)> = Vec::new();
    for outcome in play_games(options, seats, holes, rules, &bots) {
        let outcome = outcome?;
        tally.rate(&bots, &outcome.totals);
        tally.add(&outcome);
        for (&bot, &count) in bots.iter().zip(&outcome.decisions) {
            add_decisions(&mut decisions, bot, count);
        }
        timings.extend(outcome.timings);
    }
    let elapsed_secs = started.elapsed().as_secs_f64();
    let games = options.games as f64;
    let hole_count = games * f64::from(holes);
    Ok(SimulationReport {
        games: options.games,
        seats,
        holes,
        seed: options.seed,
        rules,
        elapsed_secs,
        games_per_sec: per(games, elapsed_secs),
        mean_turns_per_hole: per(tally.turns as f64, hole_count),
        turn_cap_share: per(tally.capped_holes as f64, hole_count),
        bots: tally.seat_reports(&bots, games, holes),
        ratings: tally.ratings,
        decisions: decision_times(&decisions, timings),
    })
}

/// Every game's outcome, in game order, played on `options.threads` threads (game `i` on thread
/// `i mod threads`).
fn play_games(
    options: &SimulateOptions,
    seats: u8,
    holes: u8,
    rules: Rules,
    bots: &[BotKind],
) -> Vec<Result<GameOutcome, RuleError>> {
    let threads = options.threads.max(1) as u64;
    let mut lanes: Vec<Vec<Result<GameOutcome, RuleError>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|lane| {
                scope.spawn(move || {
                    (lane..options.games)
                        .step_by(threads as usize)
                        .map(|index| play_game(options.seed, index, seats, holes, rules, bots))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("a simulation thread panicked"))
            .collect()
    });
    let mut lanes: Vec<_> = lanes.iter_mut().map(|lane| lane.drain(..)).collect();
    (0..options.games)
        .filter_map(|index| lanes[(index % threads) as usize].next())
        .collect()
}

/// Each kind of bot's decision times, in the order of its first decision: `decisions` counts
/// them, `timings` holds the timed ones (nanoseconds).
fn decision_times(
    decisions: &[(BotKind, u64)],
    timings: Vec<(BotKind, u32)>,
) -> Vec<DecisionTimes> {
    decisions
        .iter()
        .map(|&(bot, count)| {
            let mut nanos: Vec<u32> = timings
                .iter()
                .filter(|(kind, _)| *kind == bot)
                .map(|&(_, took)| took)
                .collect();
            nanos.sort_unstable();
            let micros = |nanos: u32| f64::from(nanos) / 1e3;
            let percentile = |q: f64| {
                nanos
                    .get(((nanos.len().max(1) - 1) as f64 * q).round() as usize)
                    .map_or(0.0, |&took| micros(took))
            };
            let total_secs: f64 = nanos.iter().map(|&took| f64::from(took)).sum::<f64>() / 1e9;
            DecisionTimes {
                bot,
                decisions: count,
                timed: nanos.len() as u64,
                decisions_per_sec: per(nanos.len() as f64, total_secs),
                p50_us: percentile(0.5),
                p99_us: percentile(0.99),
                max_us: percentile(1.0),
            }
        })
        .collect()
}

/// Adds `count` decisions of `bot` to the counts of each kind.
fn add_decisions(decisions: &mut Vec<(BotKind, u64)>, bot: BotKind, count: u64) {
    match decisions.iter_mut().find(|(kind, _)| *kind == bot) {
        Some((_, counted)) => *counted += count,
        None => decisions.push((bot, count)),
    }
}

/// The bot of each seat: `bots` cycled over the seats.
fn seat_bots(bots: &[BotKind], seats: u8) -> Result<Vec<BotKind>, RuleError> {
    if bots.is_empty() {
        return Err(RuleError::InvalidGameOptions(
            "bots must name at least one bot".into(),
        ));
    }
    Ok(bots.iter().copied().cycle().take(seats.into()).collect())
}

/// `x` per `n`, or 0 when `n` is 0.
fn per(x: f64, n: f64) -> f64 {
    if n > 0.0 { x / n } else { 0.0 }
}

/// What the games played so far add up to.
struct Tally {
    /// Each seat's final totals, summed.
    totals: Vec<i64>,
    /// Each seat's wins; a shared win counts 1/k for each of k winners.
    wins: Vec<f64>,
    turns: u64,
    capped_holes: u64,
    /// Each bot's rating so far, in the order of their first seats.
    ratings: Vec<BotRating>,
}

impl Tally {
    fn new(bots: &[BotKind]) -> Tally {
        let mut ratings: Vec<BotRating> = Vec::new();
        for &bot in bots {
            if !ratings.iter().any(|rated| rated.bot == bot) {
                ratings.push(BotRating {
                    bot,
                    rating: Rating::initial(),
                });
            }
        }
        Tally {
            totals: vec![0; bots.len()],
            wins: vec![0.0; bots.len()],
            turns: 0,
            capped_holes: 0,
            ratings,
        }
    }

    /// Rates the game whose seats `bots` ended with `totals`.
    fn rate(&mut self, bots: &[BotKind], totals: &[i32]) {
        let rating_of = |bot: BotKind| {
            self.ratings
                .iter()
                .find(|rated| rated.bot == bot)
                .map_or_else(Rating::initial, |rated| rated.rating)
        };
        let seats: Vec<SeatResult> = bots
            .iter()
            .zip(totals)
            .map(|(&bot, &total)| SeatResult {
                before: rating_of(bot),
                total,
                forfeit: false,
            })
            .collect();
        let after = ratings::rate(&seats);
        for rated in &mut self.ratings {
            if let Some(seat) = bots.iter().position(|&bot| bot == rated.bot) {
                rated.rating = after[seat];
            }
        }
    }

    fn add(&mut self, outcome: &GameOutcome) {
        for (sum, total) in self.totals.iter_mut().zip(&outcome.totals) {
            *sum += i64::from(*total);
        }
        for &winner in &outcome.winners {
            self.wins[usize::from(winner)] += 1.0 / outcome.winners.len() as f64;
        }
        self.turns += outcome.turns;
        self.capped_holes += outcome.capped_holes;
    }

    /// Each seat's mean total and share of the wins over `games` games.
    fn seat_reports(&self, bots: &[BotKind], games: f64, holes: u8) -> Vec<SeatReport> {
        bots.iter()
            .enumerate()
            .map(|(seat, &bot)| SeatReport {
                seat: seat as Seat,
                bot,
                mean_total: per(self.totals[seat] as f64, games),
                mean_per_hole: per(self.totals[seat] as f64, games * f64::from(holes)),
                win_share: per(self.wins[seat], games),
            })
            .collect()
    }
}

/// Plays game `index`: create, seat the bots, then let the seat to move choose until the end.
fn play_game(
    master_seed: u64,
    index: u64,
    seats: u8,
    holes: u8,
    rules: Rules,
    bots: &[BotKind],
) -> Result<GameOutcome, RuleError> {
    let server_seed = server_seed(master_seed, index);
    let mut table = Table {
        state: State::default(),
        secrets: Secrets {
            server_seed,
            decks: Vec::new(),
        },
    };
    table.run(&Command::Create {
        game_id: Uuid::from_u64_pair(master_seed, index),
        seats,
        holes,
        rules,
        commitment: shuffle::commitment(&server_seed),
        stacked: false,
        rated: false,
    })?;
    table.seat(bots)?;
    table.play_out(bots, index, &mut StdRng::from_seed(server_seed))
}

/// Whether decision `decision` of game `game` is among the timed one in [`TIMED_EVERY`]: by a
/// hash of the two, as a fixed stride would fall on the same seat and stage of every turn.
fn sampled(game: u64, decision: u64) -> bool {
    let mixed =
        (game ^ decision.wrapping_mul(0x9E37_79B9_7F4A_7C15)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    (mixed >> 32).is_multiple_of(TIMED_EVERY)
}

/// Game `index`'s server seed: `SHA-256("golf-simulate" ‖ u64be(master_seed) ‖ u64be(index))`.
fn server_seed(master_seed: u64, index: u64) -> [u8; 32] {
    Sha256::new()
        .chain_update(b"golf-simulate")
        .chain_update(master_seed.to_be_bytes())
        .chain_update(index.to_be_bytes())
        .finalize()
        .into()
}

/// A game being simulated, its commands all executed at the same (default) time.
struct Table {
    state: State,
    secrets: Secrets,
}

impl Table {
    fn run(&mut self, command: &Command) -> Result<Vec<Event>, RuleError> {
        execute(
            &mut self.state,
            command,
            &self.secrets,
            Timestamp::default(),
        )
    }

    /// Joins a bot to each seat, named after its bot and seat.
    fn seat(&mut self, bots: &[BotKind]) -> Result<(), RuleError> {
        for (seat, &bot) in bots.iter().enumerate() {
            self.run(&Command::Join {
                name: PlayerName::parse(&format!("{} {seat}", bot.name()))?,
                bot: Some(bot),
                client_seed: ClientSeed::default(),
                account: None,
            })?;
        }
        Ok(())
    }

    /// Lets the seat to move choose until the game is finished, counting turns (draws and
    /// knocks) and holes
    /// that ended at the turn cap.
    fn play_out(
        mut self,
        bots: &[BotKind],
        game: u64,
        rng: &mut StdRng,
    ) -> Result<GameOutcome, RuleError> {
        let (mut turns, mut capped_holes) = (0, 0);
        let (mut decisions, mut timings) = (vec![0; bots.len()], Vec::new());
        let mut decided = 0;
        let mut events = Vec::new();
        while let Some(seat) = seat_to_move(&self.state) {
            let bot = bots[usize::from(seat)];
            let timed = bot == BotKind::Expert || sampled(game, decided);
            let deciding = timed.then(Instant::now);
            let mv = choose(bot, &observe(&self.state, seat), rng);
            if let Some(deciding) = deciding {
                let nanos = deciding.elapsed().as_nanos();
                timings.push((bot, u32::try_from(nanos).unwrap_or(u32::MAX)));
            }
            decisions[usize::from(seat)] += 1;
            decided += 1;
            turns += u64::from(matches!(mv, Move::Draw { .. } | Move::Knock));
            let (state, secrets) = (&mut self.state, &self.secrets);
            execute_play(state, seat, &mv, secrets, Timestamp::default(), &mut events)?;
            capped_holes += events
                .iter()
                .filter(|e| {
                    matches!(
                        e,
                        Event::HoleEnded {
                            reason: EndReason::TurnCap,
                            ..
                        }
                    )
                })
                .count() as u64;
        }
        Ok(GameOutcome {
            totals: self.state.players.iter().map(|p| p.total).collect(),
            winners: self.state.winners.unwrap_or_default(),
            turns,
            capped_holes,
            decisions,
            timings,
        })
    }
}

/// The seat to move: the current seat, or during the reveal the first seat that has not revealed;
/// `None` once finished.
fn seat_to_move(state: &State) -> Option<Seat> {
    match state.stage {
        Some(Stage::Reveal) => state
            .players
            .iter()
            .position(|p| !p.revealed)
            .map(|seat| seat as Seat),
        _ => state.current_seat,
    }
}

impl SimulationReport {
    /// The report for people: speed, turns per hole and a table of seats.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} games ({} seats, {} holes, seed {}) in {:.3} s: {:.0} games/s",
            self.games, self.seats, self.holes, self.seed, self.elapsed_secs, self.games_per_sec
        );
        let _ = writeln!(
            out,
            "rules: final_turns={}, flip_after_discard={}, max_turns_per_hole={}",
            self.rules.final_turns,
            self.rules.flip_after_discard.name(),
            self.rules.max_turns_per_hole
        );
        if self.rules.has_variants() {
            let rules = &self.rules;
            let _ = writeln!(
                out,
                "variants: grid={}, initial_reveal={}, jokers={}, joker_value={}, \
                 negative_pairs={}, four_of_a_kind={}, knock={}",
                rules.grid.name(),
                rules.initial_reveal,
                rules.jokers,
                rules.joker_value,
                rules.negative_pairs.name(),
                rules.four_of_a_kind,
                rules.knock
            );
        }
        let _ = writeln!(
            out,
            "mean turns per hole: {:.2} (turn cap reached in {:.2}% of holes)",
            self.mean_turns_per_hole,
            100.0 * self.turn_cap_share
        );
        self.render_tables(&mut out);
        out
    }

    /// The seats' table, the bots' decision times and the bots' ratings.
    fn render_tables(&self, out: &mut String) {
        let _ = writeln!(out, "seat  bot     mean total  per hole  win share");
        for seat in &self.bots {
            let _ = writeln!(
                out,
                "{:<4}  {:<6}  {:>10.2}  {:>8.2}  {:>8.1}%",
                seat.seat,
                seat.bot.name(),
                seat.mean_total,
                seat.mean_per_hole,
                100.0 * seat.win_share
            );
        }
        let _ = writeln!(
            out,
            "bot     decisions  per second  p50 (us)  p99 (us)  max (us)"
        );
        for times in &self.decisions {
            let _ = writeln!(
                out,
                "{:<6}  {:>9}  {:>10.0}  {:>8.1}  {:>8.1}  {:>8.1}",
                times.bot.name(),
                times.decisions,
                times.decisions_per_sec,
                times.p50_us,
                times.p99_us,
                times.max_us
            );
        }
        for rated in &self.ratings {
            let _ = writeln!(
                out,
                "rating of {}: {:.1} (deviation {:.1})",
                rated.bot.name(),
                rated.rating.value,
                rated.rating.deviation
            );
        }
    }
}
