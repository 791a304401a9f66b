//! golf-server: six-card Golf for 2 to 4 players over a REST/JSON API, every game an
//! append-only, hash-chained event log.
//!
//! # Layout
//! - [`config`]: typed settings from environment variables.
//! - [`telemetry`]: the log subscriber and the redacting request span.
//! - [`metrics`]: Prometheus counters and histograms.
//! - [`engine`]: the rules of six-card Golf: pure, deterministic `decide` and `apply`, the
//!   replay of logs, views, bots.
//! - [`simulate`]: bot games played in-process, for strategy studies and as the engine benchmark.
//! - [`store`]: the event store, PostgreSQL or embedded SQLite, and its migrations.
//! - [`service`]: the use cases: load, authenticate, decide, run bots, append, answer.
//! - [`check`]: audits stored games: hash chains, and replays against projections.
//! - [`api`]: HTTP handlers, problem errors and the OpenAPI document.
//! - [`startup`]: wires the above into a running server.

pub mod api;
pub mod check;
pub mod cli;
pub mod config;
pub mod engine;
pub mod metrics;
pub mod service;
pub mod simulate;
pub mod startup;
pub mod store;
pub mod telemetry;
