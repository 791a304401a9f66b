//! Prometheus metrics: one registry per process, rendered in the text exposition format.
//!
//! Every instance counts its own requests; Prometheus sums them across instances, so nothing
//! here needs to be shared between servers.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use actix_web::Error;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::middleware::Next;
use actix_web::web::Data;
use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts, Registry,
    TextEncoder,
};

/// The process's metrics.
#[derive(Clone)]
pub struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
    open_streams: IntGauge,
    activity: Activity,
}

impl Metrics {
    /// Creates the registry and registers every metric.
    pub fn new() -> Self {
        let registry = Registry::new();
        let requests = IntCounterVec::new(
            Opts::new(
                "http_requests_total",
                "HTTP requests answered, by route and status",
            ),
            &["method", "route", "status"],
        )
        .expect("static metric definition");
        let latency = HistogramVec::new(
            HistogramOpts::new(
                "http_request_duration_seconds",
                "Time from request to response, by route",
            )
            .buckets(vec![
                0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
            ]),
            &["method", "route"],
        )
        .expect("static metric definition");
        let open_streams = IntGauge::new(
            "golf_open_streams",
            "Server-sent event streams open on this instance (games' and accounts')",
        )
        .expect("static metric definition");
        let metrics = Metrics {
            registry,
            requests,
            latency,
            open_streams,
            activity: Activity::default(),
        };
        metrics.register(metrics.requests.clone());
        metrics.register(metrics.latency.clone());
        metrics.register(metrics.open_streams.clone());
        metrics
    }

    /// Registers the game counters on this registry.
    pub fn games(&self) -> GameMetrics {
        let counter = |name: &str, help: &str| {
            let counter = IntCounter::new(name, help).expect("static metric definition");
            self.register(counter.clone());
            counter
        };
        let moves = IntCounterVec::new(
            Opts::new(
                "golf_moves_total",
                "Moves applied, by type (bots' included)",
            ),
            &["type"],
        )
        .expect("static metric definition");
        self.register(moves.clone());
        let seats_taken_by_bots = IntCounterVec::new(
            Opts::new(
                "golf_seats_taken_by_bots_total",
                "Seats the greedy bot took, by reason (turn_timeout, left)",
            ),
            &["reason"],
        )
        .expect("static metric definition");
        self.register(seats_taken_by_bots.clone());
        GameMetrics {
            games_created: counter("golf_games_created_total", "Games created"),
            games_started: counter(
                "golf_games_started_total",
                "Games whose last seat was taken",
            ),
            games_finished: counter("golf_games_finished_total", "Games played to the end"),
            conflicts: counter(
                "golf_write_conflicts_total",
                "Writes that lost a race to another writer and were tried again",
            ),
            moves,
            seats_taken_by_bots,
            activity: self.activity.clone(),
            waiting_games_expired: counter(
                "golf_waiting_games_expired_total",
                "Waiting games cancelled for want of players",
            ),
            audits_replayed: counter(
                "golf_audits_replayed_total",
                "Finished games' logs replayed by the audit worker",
            ),
        }
    }

    fn register(&self, collector: impl prometheus::core::Collector + 'static) {
        self.registry
            .register(Box::new(collector))
            .expect("metric registered once");
    }

    /// Records one answered request.
    pub fn observe_request(&self, method: &str, route: &str, status: u16, seconds: f64) {
        self.requests
            .with_label_values(&[method, route, &status.to_string()])
            .inc();
        self.latency
            .with_label_values(&[method, route])
            .observe(seconds);
    }

    /// Counts a stream as open until the returned guard is dropped.
    pub fn stream_opened(&self) -> OpenStream {
        self.open_streams.inc();
        OpenStream(self.open_streams.clone())
    }

    /// The Prometheus text exposition of every metric.
    pub fn render(&self) -> String {
        let mut buffer = Vec::new();
        TextEncoder::new()
            .encode(&self.registry.gather(), &mut buffer)
            .expect("text encoding into memory cannot fail");
        String::from_utf8(buffer).expect("the text format is UTF-8")
    }
}

/// An open stream, counted in `golf_open_streams` while it lives.
pub struct OpenStream(IntGauge);

impl Drop for OpenStream {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// Counters of what happens to games.
#[derive(Clone)]
pub struct GameMetrics {
    /// Games created.
    pub games_created: IntCounter,
    /// Games whose hole 1 was dealt.
    pub games_started: IntCounter,
    /// Games that ended.
    pub games_finished: IntCounter,
    /// Moves applied, by type.
    pub moves: IntCounterVec,
    /// Writes retried after losing a race.
    pub conflicts: IntCounter,
    /// Seats the greedy bot took, by reason.
    pub seats_taken_by_bots: IntCounterVec,
    /// Waiting games cancelled by the waiting games job.
    pub waiting_games_expired: IntCounter,
    /// Finished games' logs replayed by the audit worker.
    pub audits_replayed: IntCounter,
    /// The requests this process has begun.
    pub activity: Activity,
}

/// A count of the requests this process has begun, by which background work that shares the
/// cores with the request workers (analyses) sees whether they are busy.
#[derive(Clone, Default)]
pub struct Activity(Arc<AtomicU64>);

impl Activity {
    /// The requests begun so far.
    pub fn begun(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    pub(crate) fn begin(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

/// The label of a request's method: one of the methods HTTP defines, or `other`. A client may send
/// any token as a method, and a label per token would grow the series without bound.
fn method_label(method: &Method) -> &'static str {
    const KNOWN: [&str; 9] = [
        "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
    ];
    KNOWN
        .into_iter()
        .find(|known| *known == method.as_str())
        .unwrap_or("other")
}

/// Middleware that counts every request by its route pattern (not its path, which would give
/// every game its own series) and status.
pub async fn track_requests(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let started = Instant::now();
    let metrics = request.app_data::<Data<Metrics>>().cloned();
    if let Some(metrics) = &metrics {
        metrics.activity.begin();
    }
    let method = method_label(request.method());
    let response = next.call(request).await?;
    if let Some(metrics) = metrics {
        let route = response
            .request()
            .match_pattern()
            .unwrap_or_else(|| "unmatched".to_owned());
        metrics.observe_request(
            method,
            &route,
            response.status().as_u16(),
            started.elapsed().as_secs_f64(),
        );
    }
    Ok(response)
}
