//! golf-server: six-card Golf for 2 to 4 players over a REST/JSON API, every game an
//! append-only, hash-chained event log.
//!
//! # Layout
//! - [`engine`]: the rules of six-card Golf: pure, deterministic `decide` and `apply`, the
//!   replay of logs, views, bots. No I/O, no clock, no OS randomness.
//! - [`store`]: the event store behind the [`store::EventStore`] trait, PostgreSQL or embedded
//!   SQLite, its migrations, the hash chain, and the codec between rows and engine types.
//! - [`ratings`]: the Weng-Lin ratings of accounts and bots, and their update by a rated
//!   game's result. Pure, as the engine.
//! - [`service`]: the use cases: load, authenticate, decide, run bots, append, answer.
//! - [`api`]: HTTP handlers (one file per resource), problem errors and the OpenAPI document.
//! - [`audit`]: the offline audit of a finished game's log (chain, seeds, deals, every move
//!   re-decided), over stored entries or an exported NDJSON file. No I/O.
//! - [`commands`]: the entry points of the binary: `serve`, `openapi`, `simulate`, `check-db`,
//!   `verify`.
//! - [`jobs`]: every piece of background work of an instance, under one supervisor.
//! - [`startup`]: wires the service and the jobs into a running HTTP server.
//! - [`config`]: typed settings from environment variables.
//! - [`telemetry`]: the log subscriber and the redacting request span.
//! - [`metrics`]: Prometheus counters and histograms.

pub mod api;
pub mod audit;
pub mod commands;
pub mod config;
pub mod engine;
pub mod jobs;
pub mod metrics;
pub mod ratings;
pub mod service;
pub mod startup;
pub mod store;
pub mod telemetry;
