//! Builds the HTTP server: binds its listener, connects the store and wires the middleware.

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::Duration;

use actix_cors::Cors;
use actix_web::dev::Server;
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::middleware::{Condition, Next, from_fn};
use actix_web::web::Data;
use actix_web::{App, HttpMessage, HttpServer};
use anyhow::Context;
use tokio_util::sync::CancellationToken;
use tracing_actix_web::{RequestId, TracingLogger};

use crate::api::limits::{Limits, body_deadline};
use crate::api::{self, AppState};
use crate::config::Config;
use crate::jobs::{JobSettings, Jobs};
use crate::metrics::{Metrics, track_requests};
use crate::service::accounts::webhook_client::{AddressGuard, SharedResolver, SystemResolver};
use crate::service::{Clock, Services, Settings, Webhooks};
use crate::store::{self, EventStore};
use crate::telemetry::RedactingRootSpan;

/// How long in-flight requests may take to finish after SIGTERM or SIGINT.
const SHUTDOWN_GRACE_SECONDS: u64 = 30;

/// A bound, ready-to-run server, and the jobs of its instance.
pub struct Application {
    address: SocketAddr,
    server: Server,
    jobs: Jobs,
}

impl Application {
    /// Connects the database (running migrations) and binds `config.bind` (port 0 picks a free
    /// port, which tests use).
    pub async fn build(config: &Config) -> anyhow::Result<Self> {
        Self::build_with_clock(config, Clock::system()).await
    }

    /// As [`Application::build`], on `clock`: a test that keeps a clone of it can move the
    /// server's time forward, past a turn timeout or a waiting game's expiry.
    pub async fn build_with_clock(config: &Config, clock: Clock) -> anyhow::Result<Self> {
        Self::build_with_resolver(config, clock, Arc::new(SystemResolver)).await
    }

    /// As [`Application::build_with_clock`], looking up the hosts of webhook URLs with
    /// `resolver`: a test maps names to addresses of its choosing, with no outside network.
    pub async fn build_with_resolver(
        config: &Config,
        clock: Clock,
        resolver: SharedResolver,
    ) -> anyhow::Result<Self> {
        let store = store::connect(&config.database_url, &config.pool_options())
            .await
            .context("cannot open the database named by DATABASE_URL")?;
        Self::build_over_with(config, clock, store, resolver)
    }

    /// As [`Application::build_with_clock`], over `store` rather than one it connects: a test
    /// can stand a store of its own (one that fails on demand) between the service and the
    /// database.
    pub fn build_over(
        config: &Config,
        clock: Clock,
        store: Arc<dyn EventStore>,
    ) -> anyhow::Result<Self> {
        Self::build_over_with(config, clock, store, Arc::new(SystemResolver))
    }

    fn build_over_with(
        config: &Config,
        clock: Clock,
        store: Arc<dyn EventStore>,
        resolver: SharedResolver,
    ) -> anyhow::Result<Self> {
        let listener = TcpListener::bind(config.bind)
            .with_context(|| format!("cannot listen on GOLF_BIND={}", config.bind))?;
        let address = listener.local_addr()?;

        let metrics = Data::new(Metrics::new());
        let stopping = CancellationToken::new();
        let settings = Settings {
            clock,
            cached_games: config.cached_games,
            default_turn_timeout_s: config.turn_timeout_s,
            match_turn_timeout_s: config.match_turn_timeout_s,
            webhooks: Arc::new(Webhooks::new(
                resolver,
                AddressGuard {
                    allow_private: config.webhooks.allow_private,
                    ports: config.webhooks.ports.clone(),
                },
                config.webhooks.retry_delays.clone(),
            )),
            challenge_expiry: config.challenge_expiry,
            seek_expiry: config.seek_expiry,
            analyses: config.analysis_threads > 0,
        };
        let services = Services::new(store, metrics.games(), settings);
        let jobs = Jobs::start(
            &services,
            &JobSettings {
                sweep_interval: config.sweep_interval,
                waiting_expiry: config.waiting_expiry,
                analysis_threads: config.analysis_threads,
            },
        );
        let state = api::state(services, stopping.clone());
        let stop = async move {
            stop_requested().await;
            stopping.cancel();
        };
        let server = serve(config, state, metrics, listener, stop)?;
        Ok(Application {
            address,
            server,
            jobs,
        })
    }

    /// The address the server listens on.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Serves until SIGTERM or SIGINT, then lets in-flight requests finish, stops the jobs and
    /// closes the database pool, each within the grace period.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        let served = self.server.await;
        self.jobs
            .stop(Duration::from_secs(SHUTDOWN_GRACE_SECONDS))
            .await;
        tracing::info!("stopped: requests finished, jobs stopped, database closed");
        served
    }
}

/// Serves `state` on `listener`: the routes, the middleware around them and the timeouts of
/// `config`. actix stops at once on SIGINT; here `stop` (both signals) drains the requests in
/// flight, and ends the open streams, whose clients resume elsewhere with Last-Event-ID.
fn serve(
    config: &Config,
    state: Data<AppState>,
    metrics: Data<Metrics>,
    listener: TcpListener,
    stop: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<Server> {
    let spec = api::openapi();
    let routes = Data::new(api::RouteTable::new(&spec));
    let limits = Data::new(Limits::new(&config.http));
    let cors_origins = config.http.cors_origins.clone();
    Ok(HttpServer::new(move || {
        App::new()
            .app_data(state.clone())
            .app_data(metrics.clone())
            .app_data(routes.clone())
            .app_data(limits.clone())
            .configure(|config| api::configure(config, &spec))
            .wrap(from_fn(body_deadline))
            .wrap(Condition::new(
                !cors_origins.is_empty(),
                cors(&cors_origins),
            ))
            .wrap(from_fn(api::problem::problems_only))
            .wrap(from_fn(api::head_as_get))
            .wrap(from_fn(api::docs_policy))
            .wrap(from_fn(track_requests))
            .wrap(from_fn(echo_request_id))
            .wrap(TracingLogger::<RedactingRootSpan>::new())
    })
    .shutdown_timeout(SHUTDOWN_GRACE_SECONDS)
    // Slow clients: a connection whose request head is not in within the client timeout is
    // closed (with 408), and its body gets as long again (`body_deadline`); an idle one
    // closes after the keep-alive.
    .client_request_timeout(config.http.client_timeout)
    .keep_alive(config.http.keep_alive)
    .shutdown_signal(stop)
    .listen(listener)?
    .run())
}

/// Lets browsers on `origins` call the API: preflights are answered, the request headers the
/// API reads are allowed, and the response headers a client needs are exposed. Other origins
/// get no CORS header, which browsers take as a refusal.
fn cors(origins: &[String]) -> Cors {
    origins
        .iter()
        .fold(Cors::default(), |cors, origin| cors.allowed_origin(origin))
        .allowed_methods(["GET", "HEAD", "POST", "PUT", "DELETE"])
        .allowed_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            header::IF_MATCH,
            header::IF_NONE_MATCH,
            HeaderName::from_static("idempotency-key"),
            HeaderName::from_static("last-event-id"),
        ])
        .expose_headers([
            header::ETAG,
            header::LOCATION,
            header::RETRY_AFTER,
            HeaderName::from_static("x-request-id"),
        ])
        .block_on_origin_mismatch(false)
        .max_age(600)
}

/// Resolves on the first SIGTERM or SIGINT (Ctrl-C).
async fn stop_requested() {
    #[cfg(unix)]
    let terminate = async {
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("a SIGTERM handler can be installed")
            .recv()
            .await
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<Option<()>>();
    tokio::select! {
        _ = terminate => tracing::info!("SIGTERM received: finishing requests in flight"),
        _ = tokio::signal::ctrl_c() => tracing::info!("SIGINT received: finishing requests in flight"),
    }
}

/// Every response carries the id its log lines carry, so a client can quote it in a report.
async fn echo_request_id(
    request: actix_web::dev::ServiceRequest,
    next: Next<impl actix_web::body::MessageBody>,
) -> Result<actix_web::dev::ServiceResponse<impl actix_web::body::MessageBody>, actix_web::Error> {
    let request_id = request.extensions().get::<RequestId>().copied();
    let mut response = next.call(request).await?;
    if let Some(id) = request_id
        && let Ok(value) = HeaderValue::from_str(&id.to_string())
    {
        response
            .headers_mut()
            .insert(HeaderName::from_static("x-request-id"), value);
    }
    Ok(response)
}
