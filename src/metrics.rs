//! Prometheus metrics: one registry per process, rendered in the text exposition format.
//!
//! Every instance counts its own requests; Prometheus sums them across instances, so nothing
//! here needs to be shared between servers.

use std::time::Instant;

use actix_web::Error;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::web::Data;
use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry, TextEncoder,
};

/// The process's metrics.
#[derive(Clone)]
pub struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
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
        registry
            .register(Box::new(requests.clone()))
            .expect("metric registered once");
        registry
            .register(Box::new(latency.clone()))
            .expect("metric registered once");
        Metrics {
            registry,
            requests,
            latency,
        }
    }

    /// Registers a further counter family (the game counters) on this registry.
    pub fn counter(&self, name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
        let counter =
            IntCounterVec::new(Opts::new(name, help), labels).expect("valid metric definition");
        self.registry
            .register(Box::new(counter.clone()))
            .expect("metric registered once");
        counter
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

    /// The Prometheus text exposition of every metric.
    pub fn render(&self) -> String {
        let mut buffer = Vec::new();
        TextEncoder::new()
            .encode(&self.registry.gather(), &mut buffer)
            .expect("text encoding into memory cannot fail");
        String::from_utf8(buffer).expect("the text format is UTF-8")
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

/// Middleware that counts every request by its route pattern (not its path, which would give
/// every game its own series) and status.
pub async fn track_requests(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let started = Instant::now();
    let metrics = request.app_data::<Data<Metrics>>().cloned();
    let method = request.method().to_string();
    let response = next.call(request).await?;
    if let Some(metrics) = metrics {
        let route = response
            .request()
            .match_pattern()
            .unwrap_or_else(|| "unmatched".to_owned());
        metrics.observe_request(
            &method,
            &route,
            response.status().as_u16(),
            started.elapsed().as_secs_f64(),
        );
    }
    Ok(response)
}
