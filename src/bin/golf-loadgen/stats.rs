//! What a run counts (acknowledged moves, view reads, finished games, errors by status) and
//! measures (latencies), the once-a-second progress line, and the final report.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::Serialize;

/// The span of time a run's latencies are also grouped by, from the start of measuring: a run
/// whose games start over `--ramp-s` shows apart what its ramp cost.
const WINDOW: Duration = Duration::from_secs(10);

/// The counters every task of a run shares. Moves, views and their latencies count only while
/// measuring (views and streams modes set their games up first); errors count always.
#[derive(Default)]
pub struct Stats {
    measuring_since: OnceLock<Instant>,
    moves: AtomicU64,
    views: AtomicU64,
    games_finished: AtomicU64,
    games_started: AtomicU64,
    games_abandoned: AtomicU64,
    conflicts: AtomicU64,
    /// Streams mode: streams opened and held.
    streams_opened: AtomicU64,
    /// Streams mode: bytes the held streams carried while measuring (keep-alives, mostly).
    stream_bytes: AtomicU64,
    /// Move and view latencies by the `WINDOW` of the run they ended in (all of them, together).
    move_micros_by_window: Mutex<BTreeMap<u64, Vec<u32>>>,
    view_micros_by_window: Mutex<BTreeMap<u64, Vec<u32>>>,
    /// Move latencies by the hole the move was chosen in, when the view said.
    move_micros_by_hole: Mutex<BTreeMap<u64, Vec<u32>>>,
    /// Players mode: from a move's acknowledgment to its entry on each other seat's stream.
    delivery_micros: Mutex<Vec<u32>>,
    /// Players mode with accounts: from an account event's time to its arrival on the stream.
    account_event_micros: Mutex<Vec<u32>>,
    errors: Mutex<BTreeMap<String, u64>>,
    finished_ids: Mutex<Vec<String>>,
}

impl Stats {
    pub fn start_measuring(&self) {
        self.measuring_since.get_or_init(Instant::now);
    }

    pub fn is_measuring(&self) -> bool {
        self.measuring_since.get().is_some()
    }

    /// The start of the `WINDOW` of the run a sample ending now falls in, in seconds since
    /// measuring began.
    fn window(&self) -> Option<u64> {
        let since = self.measuring_since.get()?;
        let window = WINDOW.as_secs();
        Some(since.elapsed().as_secs() / window * window)
    }

    pub fn move_acked(&self, hole: Option<u64>, took: Duration) {
        let Some(window) = self.window() else {
            return;
        };
        self.moves.fetch_add(1, Ordering::Relaxed);
        push_keyed(&self.move_micros_by_window, window, took);
        if let Some(hole) = hole {
            push_keyed(&self.move_micros_by_hole, hole, took);
        }
    }

    /// Another seat's stream carried an acknowledged move's entry `lag` after its answer.
    pub fn delivered(&self, lag: Duration) {
        if self.is_measuring() {
            push_micros(&self.delivery_micros, lag);
        }
    }

    /// An account's stream carried an event `lag` after the write that stored it.
    pub fn account_event(&self, lag: Duration) {
        if self.is_measuring() {
            push_micros(&self.account_event_micros, lag);
        }
    }

    pub fn view_read(&self, took: Duration) {
        let Some(window) = self.window() else {
            return;
        };
        self.views.fetch_add(1, Ordering::Relaxed);
        push_keyed(&self.view_micros_by_window, window, took);
    }

    /// A move refused because the game moved on (409 or 412): the mover reloads and goes on.
    pub fn conflict(&self) {
        self.conflicts.fetch_add(1, Ordering::Relaxed);
    }

    /// An answer that was not a success, by status code, or `connect` for a transport error.
    pub fn error(&self, kind: &str) {
        let mut errors = self.errors.lock().expect("errors lock");
        *errors.entry(kind.to_owned()).or_default() += 1;
    }

    /// Streams mode: a stream answered 200 and is held open.
    pub fn stream_opened(&self) {
        self.streams_opened.fetch_add(1, Ordering::Relaxed);
    }

    /// Streams mode: a held stream carried `bytes`.
    pub fn stream_read(&self, bytes: usize) {
        if self.is_measuring() {
            self.stream_bytes.fetch_add(bytes as u64, Ordering::Relaxed);
        }
    }

    pub fn game_started(&self) {
        self.games_started.fetch_add(1, Ordering::Relaxed);
    }

    pub fn game_finished(&self, id: &str) {
        if self.is_measuring() {
            self.games_finished.fetch_add(1, Ordering::Relaxed);
        }
        self.finished_ids
            .lock()
            .expect("finished lock")
            .push(id.to_owned());
    }

    /// A game given up after too many refusals in a row.
    pub fn game_abandoned(&self) {
        self.games_abandoned.fetch_add(1, Ordering::Relaxed);
    }

    /// Every game that finished during the run, measured or not (for `--check`).
    pub fn finished_ids(&self) -> Vec<String> {
        self.finished_ids.lock().expect("finished lock").clone()
    }

    fn snapshot(&self) -> (u64, u64, u64, u64) {
        let errors = self.errors.lock().expect("errors lock").values().sum();
        (
            self.moves.load(Ordering::Relaxed),
            self.views.load(Ordering::Relaxed),
            self.games_finished.load(Ordering::Relaxed),
            errors,
        )
    }

    /// The report of a run that measured for `elapsed`.
    pub fn report(&self, elapsed: Duration) -> Report {
        let seconds = elapsed.as_secs_f64().max(1e-9);
        let (moves, views, games, _) = self.snapshot();
        let rate = |count: u64| round(count as f64 / seconds, 1);
        // Read apart: a guard held through the report's expression would deadlock Latency::of.
        let delivered = !self
            .delivery_micros
            .lock()
            .expect("samples lock")
            .is_empty();
        let account_events = self
            .account_event_micros
            .lock()
            .expect("samples lock")
            .len();
        Report {
            elapsed_s: round(seconds, 3),
            moves_acked: moves,
            views_read: views,
            games_started: self.games_started.load(Ordering::Relaxed),
            games_finished: games,
            games_abandoned: self.games_abandoned.load(Ordering::Relaxed),
            moves_per_sec: rate(moves),
            views_per_sec: rate(views),
            games_per_sec: rate(games),
            move_latency_ms: Latency::of_all(&self.move_micros_by_window),
            move_latency_by_hole_ms: Latency::by_key(&self.move_micros_by_hole),
            move_latency_by_window_ms: Latency::by_key(&self.move_micros_by_window),
            view_latency_ms: Latency::of_all(&self.view_micros_by_window),
            view_latency_by_window_ms: Latency::by_key(&self.view_micros_by_window),
            delivery_lag_ms: delivered.then(|| Latency::of(&self.delivery_micros)),
            account_events: account_events as u64,
            account_event_lag_ms: (account_events > 0)
                .then(|| Latency::of(&self.account_event_micros)),
            conflicts: self.conflicts.load(Ordering::Relaxed),
            streams_opened: self.streams_opened.load(Ordering::Relaxed),
            stream_bytes: self.stream_bytes.load(Ordering::Relaxed),
            errors: self.errors.lock().expect("errors lock").clone(),
            check: None,
        }
    }
}

fn micros(took: Duration) -> u32 {
    u32::try_from(took.as_micros()).unwrap_or(u32::MAX)
}

fn push_micros(samples: &Mutex<Vec<u32>>, took: Duration) {
    samples.lock().expect("samples lock").push(micros(took));
}

fn push_keyed(samples: &Mutex<BTreeMap<u64, Vec<u32>>>, key: u64, took: Duration) {
    let mut samples = samples.lock().expect("samples lock");
    samples.entry(key).or_default().push(micros(took));
}

fn round(value: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (value * scale).round() / scale
}

/// Percentiles of a set of latencies, in milliseconds (all zero when there was none).
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Latency {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
    pub mean: f64,
}

impl Latency {
    /// The percentiles a person reads.
    fn human(&self) -> String {
        format!(
            "p50 {:.1} ms, p90 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            self.p50, self.p90, self.p99, self.max
        )
    }

    fn of(samples: &Mutex<Vec<u32>>) -> Latency {
        Latency::of_samples(samples.lock().expect("samples lock").clone())
    }

    /// Of every sample, whatever its key.
    fn of_all(samples: &Mutex<BTreeMap<u64, Vec<u32>>>) -> Latency {
        let samples = samples.lock().expect("samples lock");
        Latency::of_samples(samples.values().flatten().copied().collect())
    }

    fn by_key(samples: &Mutex<BTreeMap<u64, Vec<u32>>>) -> BTreeMap<u64, Latency> {
        let samples = samples.lock().expect("samples lock");
        samples
            .iter()
            .map(|(key, samples)| (*key, Latency::of_samples(samples.clone())))
            .collect()
    }

    fn of_samples(mut samples: Vec<u32>) -> Latency {
        if samples.is_empty() {
            return Latency::default();
        }
        samples.sort_unstable();
        let ms = |micros: u32| round(f64::from(micros) / 1000.0, 3);
        // Nearest rank: the smallest sample with at least q of all samples at or below it.
        let at = |q: f64| {
            let rank = (q * samples.len() as f64).ceil() as usize;
            ms(samples[rank.clamp(1, samples.len()) - 1])
        };
        let total: u64 = samples.iter().map(|&micros| u64::from(micros)).sum();
        Latency {
            p50: at(0.50),
            p90: at(0.90),
            p99: at(0.99),
            max: ms(*samples.last().expect("not empty")),
            mean: round(total as f64 / samples.len() as f64 / 1000.0, 3),
        }
    }
}

/// The audit of every finished game (`--check`).
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Check {
    pub checked: u64,
    pub verified: u64,
    /// Games whose audit said `verified: false`, or could not be read.
    pub failed: u64,
}

/// What a run reports, as `--json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub elapsed_s: f64,
    pub moves_acked: u64,
    pub views_read: u64,
    pub games_started: u64,
    pub games_finished: u64,
    pub games_abandoned: u64,
    pub moves_per_sec: f64,
    pub views_per_sec: f64,
    pub games_per_sec: f64,
    pub move_latency_ms: Latency,
    /// Move latencies by the hole each move was chosen in: a move late in a game should cost
    /// what one early in it costs.
    pub move_latency_by_hole_ms: BTreeMap<u64, Latency>,
    /// Move latencies by the ten seconds of the run they ended in, keyed by their first second
    /// since measuring began: a ramp's cost, a stall, a slow drift show apart.
    pub move_latency_by_window_ms: BTreeMap<u64, Latency>,
    pub view_latency_ms: Latency,
    pub view_latency_by_window_ms: BTreeMap<u64, Latency>,
    /// Players mode: from a move's acknowledgment to its entry on each other seat's stream.
    pub delivery_lag_ms: Option<Latency>,
    /// Players mode with accounts: the events the accounts' streams carried while measuring.
    pub account_events: u64,
    /// And from each one's `at` (the write that stored it) to its arrival.
    pub account_event_lag_ms: Option<Latency>,
    /// Moves refused with 409 or 412 because the game moved on (also counted in `errors`).
    pub conflicts: u64,
    /// Streams mode: the streams opened and held.
    pub streams_opened: u64,
    /// Streams mode: the bytes they carried while measuring.
    pub stream_bytes: u64,
    /// Answers that were not a success, by status code; `connect` counts transport errors.
    pub errors: BTreeMap<String, u64>,
    pub check: Option<Check>,
}

impl Report {
    /// The summary a person reads.
    pub fn human(&self) -> String {
        let mut text = self.rates();
        text += &self.latencies();
        text += &self.errors();
        if self.games_abandoned > 0 {
            text += &format!(
                "{} games given up after repeated refusals\n",
                self.games_abandoned
            );
        }
        if let Some(check) = &self.check {
            text += &format!(
                "audit: {} of {} finished games verified, {} failed\n",
                check.verified, check.checked, check.failed
            );
        }
        text
    }

    /// The summary's first line: what was done, and how much of it per second.
    fn rates(&self) -> String {
        // A resumed run starts no game.
        let started = match self.games_started {
            0 => String::new(),
            started => format!(" of {started}"),
        };
        format!(
            "{:.1} s: {} moves acknowledged ({:.1}/s), {} views read ({:.1}/s), \
             {}{started} games finished ({:.2}/s)\n",
            self.elapsed_s,
            self.moves_acked,
            self.moves_per_sec,
            self.views_read,
            self.views_per_sec,
            self.games_finished,
            self.games_per_sec,
        )
    }

    /// A line for each kind of request measured: moves, moves in the first and last holes
    /// measured (when they differ), views.
    fn latencies(&self) -> String {
        let mut text = String::new();
        if self.moves_acked > 0 {
            text += &format!("moves: {}\n", self.move_latency_ms.human());
        }
        let holes = &self.move_latency_by_hole_ms;
        if let (Some((first, early)), Some((last, late))) =
            (holes.first_key_value(), holes.last_key_value())
            && first != last
        {
            text += &format!("moves in hole {first}: {}\n", early.human());
            text += &format!("moves in hole {last}: {}\n", late.human());
        }
        text += &by_window("moves", &self.move_latency_by_window_ms);
        if self.views_read > 0 {
            text += &format!("views: {}\n", self.view_latency_ms.human());
        }
        text += &by_window("views", &self.view_latency_by_window_ms);
        if self.streams_opened > 0 {
            text += &format!(
                "streams: {} held open, {} bytes received while measuring\n",
                self.streams_opened, self.stream_bytes
            );
        }
        if let Some(lag) = &self.delivery_lag_ms {
            text += &format!("delivery to the other seats' streams: {}\n", lag.human());
        }
        if let Some(lag) = &self.account_event_lag_ms {
            text += &format!(
                "{} account events, from their write to the account's stream: {}\n",
                self.account_events,
                lag.human()
            );
        }
        text
    }

    /// The errors line: counts by status, and the conflicts among them.
    fn errors(&self) -> String {
        if self.errors.is_empty() {
            return "errors: none\n".to_owned();
        }
        let errors: Vec<String> = self
            .errors
            .iter()
            .map(|(kind, count)| format!("{kind}: {count}"))
            .collect();
        format!(
            "errors: {} ({} conflicts reloaded)\n",
            errors.join(", "),
            self.conflicts
        )
    }
}

/// A line for each window of a run that measured more than one.
fn by_window(what: &str, windows: &BTreeMap<u64, Latency>) -> String {
    if windows.len() < 2 {
        return String::new();
    }
    windows
        .iter()
        .map(|(from, latency)| {
            let to = from + WINDOW.as_secs();
            format!("  {what} from {from} s to {to} s: {}\n", latency.human())
        })
        .collect()
}

/// Prints a line on stderr each second with the counts and the rates of the last second, until
/// the task is aborted.
pub async fn progress(stats: std::sync::Arc<Stats>) {
    let start = Instant::now();
    let mut last = stats.snapshot();
    let mut ticks = tokio::time::interval(Duration::from_secs(1));
    ticks.tick().await;
    loop {
        ticks.tick().await;
        let now = stats.snapshot();
        eprintln!(
            "[{:>4}s] moves {} ({}/s)  views {} ({}/s)  games finished {}  errors {}",
            start.elapsed().as_secs(),
            now.0,
            now.0 - last.0,
            now.1,
            now.1 - last.1,
            now.2,
            now.3,
        );
        last = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank_in_milliseconds() {
        let samples = Mutex::new((1..=100).map(|ms| ms * 1000).collect::<Vec<u32>>());
        let latency = Latency::of(&samples);
        assert_eq!(
            (latency.p50, latency.p90, latency.p99, latency.max),
            (50.0, 90.0, 99.0, 100.0)
        );
        assert_eq!(latency.mean, 50.5);
    }

    #[test]
    fn no_samples_give_zeros() {
        let latency = Latency::of(&Mutex::new(Vec::new()));
        assert_eq!((latency.p50, latency.max), (0.0, 0.0));
    }

    #[test]
    fn nothing_counts_before_measuring() {
        let stats = Stats::default();
        stats.move_acked(Some(1), Duration::from_millis(3));
        stats.view_read(Duration::from_millis(3));
        stats.game_finished("a");
        stats.start_measuring();
        stats.move_acked(Some(1), Duration::from_millis(5));
        stats.move_acked(Some(18), Duration::from_millis(7));
        stats.move_acked(None, Duration::from_millis(6));
        let report = stats.report(Duration::from_secs(1));
        assert_eq!(
            (report.moves_acked, report.views_read, report.games_finished),
            (3, 0, 0)
        );
        assert_eq!(report.move_latency_ms.max, 7.0);
        let by_hole: Vec<(u64, f64)> = report
            .move_latency_by_hole_ms
            .iter()
            .map(|(hole, latency)| (*hole, latency.max))
            .collect();
        assert_eq!(by_hole, [(1, 5.0), (18, 7.0)]);
        let by_window: Vec<(u64, f64)> = report
            .move_latency_by_window_ms
            .iter()
            .map(|(from, latency)| (*from, latency.max))
            .collect();
        assert_eq!(by_window, [(0, 7.0)]);
        assert_eq!(stats.finished_ids(), ["a"]);
    }
}
