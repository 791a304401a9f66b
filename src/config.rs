//! Typed settings read once from environment variables at start.
//!
//! Every variable has a default so that `cargo run` works on a fresh machine; a value that is
//! present but wrong stops the program with one line naming the variable. The HTTP edge's
//! settings are read in `http.rs`.

use std::net::SocketAddr;
use std::time::Duration;

use thiserror::Error;

use crate::engine::TURN_TIMEOUT_S;
use crate::service::{DEFAULT_CACHED_GAMES, DEFAULT_MATCH_TURN_TIMEOUT_S};
use crate::store::PoolOptions;

mod http;

pub use http::{
    ClientIpHeader, DEFAULT_EXPENSIVE_READS_PER_MIN, DEFAULT_MAX_STREAMS_PER_CLIENT,
    DEFAULT_WRITES_PER_MIN, HttpSettings, Network,
};

/// The embedded default: a SQLite file in the working directory, created if missing.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://golf.db";
/// Where the service listens by default.
pub const DEFAULT_BIND: &str = "127.0.0.1:8080";

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line, for log shippers.
    Json,
}

/// Everything the service needs to start.
#[derive(Debug, Clone)]
pub struct Config {
    /// `GOLF_BIND`: the socket address to listen on.
    pub bind: SocketAddr,
    /// `DATABASE_URL`: `sqlite://...` or `postgres://...`.
    pub database_url: String,
    /// `GOLF_LOG`: `text` or `json`.
    pub log_format: LogFormat,
    /// `RUST_LOG`: the tracing filter directives.
    pub log_filter: String,
    /// `GOLF_DB_MAX_CONNECTIONS`: the size of the database pool.
    pub db_max_connections: u32,
    /// `GOLF_DB_ACQUIRE_TIMEOUT_MS`: how long a request waits for a database connection
    /// before it is answered with 503.
    pub db_acquire_timeout: Duration,
    /// `GOLF_DB_STATEMENT_TIMEOUT_MS`: PostgreSQL only, how long one statement may run (and, for
    /// half of it, wait for a lock) before it fails. See [`PoolOptions::statement_timeout`].
    pub db_statement_timeout: Duration,
    /// `GOLF_TURN_TIMEOUT_S`: the `turn_timeout_s` of games whose creator gives none (10 to
    /// 604800 seconds); unset: no timeout.
    pub turn_timeout_s: Option<u32>,
    /// `GOLF_MATCH_TURN_TIMEOUT_S`: the `turn_timeout_s` of rated games and of the games of seeks
    /// and challenges whose creator gives none, when `GOLF_TURN_TIMEOUT_S` is unset (10 minutes):
    /// such games always have a clock, so that stalling cannot dodge a loss.
    pub match_turn_timeout_s: u32,
    /// `GOLF_WAITING_EXPIRY_S`: how long a game may wait for players before it is cancelled.
    pub waiting_expiry: Duration,
    /// `GOLF_CHALLENGE_EXPIRY_S`: how long a challenge stays open for its answers (a day).
    pub challenge_expiry: Duration,
    /// `GOLF_SEEK_EXPIRY_S`: how long a seek waits for its match (ten minutes).
    pub seek_expiry: Duration,
    /// `GOLF_SWEEP_INTERVAL_MS`: how often each instance looks for turn timeouts and expired
    /// waiting games.
    pub sweep_interval: Duration,
    /// `GOLF_ANALYSIS_THREADS`: threads that analyse finished games, at the lowest priority
    /// (default 1; 0 turns analyses off).
    pub analysis_threads: usize,
    /// `GOLF_CACHED_GAMES`: the games whose state each instance keeps in memory (16,384): at
    /// least the games in play on it, or most moves and views load their game first.
    pub cached_games: usize,
    /// What the HTTP edge allows: limits, proxies, CORS, slow clients.
    pub http: HttpSettings,
    /// How webhooks are delivered.
    pub webhooks: WebhookSettings,
}

/// The operator's settings of webhook deliveries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookSettings {
    /// `GOLF_WEBHOOK_ALLOW_PRIVATE`: `true` lets webhooks reach any address (loopback, private
    /// networks, ...) over `http` too; `false` (the default) takes only `https` URLs whose host
    /// resolves to public addresses. For development and tests on one machine only.
    pub allow_private: bool,
    /// `GOLF_WEBHOOK_RETRY_DELAYS_MS`: the waits before each retry of a failed delivery, in
    /// milliseconds, comma-separated; after the last, the delivery is given up.
    /// [`DEFAULT_WEBHOOK_RETRY_DELAYS`] unless set.
    pub retry_delays: Vec<Duration>,
    /// `GOLF_WEBHOOK_PORTS`: the ports a webhook URL may name, comma-separated (443 alone
    /// unless set), so that registrations cannot probe other services' ports. Any port where
    /// private addresses are allowed.
    pub ports: Vec<u16>,
}

/// The waits before each retry of a webhook delivery: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h.
pub const DEFAULT_WEBHOOK_RETRY_DELAYS: [Duration; 7] = [
    Duration::from_secs(5),
    Duration::from_secs(5 * 60),
    Duration::from_secs(30 * 60),
    Duration::from_secs(2 * 60 * 60),
    Duration::from_secs(5 * 60 * 60),
    Duration::from_secs(10 * 60 * 60),
    Duration::from_secs(10 * 60 * 60),
];

impl Default for WebhookSettings {
    fn default() -> Self {
        WebhookSettings {
            allow_private: false,
            retry_delays: DEFAULT_WEBHOOK_RETRY_DELAYS.to_vec(),
            ports: vec![443],
        }
    }
}

/// How long a game waits for players by default: a day.
pub const DEFAULT_WAITING_EXPIRY_S: u32 = 24 * 60 * 60;

/// How long a challenge waits for its answers by default: a day.
pub const DEFAULT_CHALLENGE_EXPIRY_S: u32 = 24 * 60 * 60;

/// How long a seek waits for its match, unless `GOLF_SEEK_EXPIRY_S` says otherwise.
pub const DEFAULT_SEEK_EXPIRY_S: u32 = 600;

/// A variable that is set to a value the service cannot use.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("{var}={value:?} is not valid: {expected}")]
pub struct ConfigError {
    /// The environment variable's name.
    pub var: &'static str,
    /// The value it holds.
    pub value: String,
    /// What it should hold instead.
    pub expected: &'static str,
}

impl Config {
    /// Reads the process environment.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads settings through `lookup`, so tests need not touch the process environment.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let bind = bind(&lookup)?;
        let database_url = database_url(&lookup)?;
        let log_format = log_format(&lookup)?;
        let log_filter = log_filter(&lookup)?;

        let db_max_connections = parse_number(&lookup, "GOLF_DB_MAX_CONNECTIONS", 10)?;
        let acquire_ms = parse_number(&lookup, "GOLF_DB_ACQUIRE_TIMEOUT_MS", 3000)?;
        let statement_ms = parse_number(&lookup, "GOLF_DB_STATEMENT_TIMEOUT_MS", 5000)?;
        let turn_timeout_s = turn_timeout_in(&lookup, "GOLF_TURN_TIMEOUT_S")?;
        let match_turn_timeout_s = turn_timeout_in(&lookup, "GOLF_MATCH_TURN_TIMEOUT_S")?
            .unwrap_or(DEFAULT_MATCH_TURN_TIMEOUT_S);
        let waiting_expiry_s =
            parse_number(&lookup, "GOLF_WAITING_EXPIRY_S", DEFAULT_WAITING_EXPIRY_S)?;
        let challenge_expiry_s = parse_number(
            &lookup,
            "GOLF_CHALLENGE_EXPIRY_S",
            DEFAULT_CHALLENGE_EXPIRY_S,
        )?;
        let seek_expiry_s = parse_number(&lookup, "GOLF_SEEK_EXPIRY_S", DEFAULT_SEEK_EXPIRY_S)?;
        let sweep_interval_ms = parse_number(&lookup, "GOLF_SWEEP_INTERVAL_MS", 1000)?;
        let analysis_threads = parse_count(&lookup, "GOLF_ANALYSIS_THREADS", 1)?;
        let cached_games = parse_number(&lookup, "GOLF_CACHED_GAMES", DEFAULT_CACHED_GAMES as u32)?;

        let http = http::http_settings(&lookup)?;
        let webhooks = webhook_settings(&lookup)?;

        Ok(Config {
            bind,
            database_url,
            log_format,
            log_filter,
            db_max_connections,
            db_acquire_timeout: Duration::from_millis(u64::from(acquire_ms)),
            db_statement_timeout: Duration::from_millis(u64::from(statement_ms)),
            turn_timeout_s,
            match_turn_timeout_s,
            waiting_expiry: Duration::from_secs(u64::from(waiting_expiry_s)),
            challenge_expiry: Duration::from_secs(u64::from(challenge_expiry_s)),
            seek_expiry: Duration::from_secs(u64::from(seek_expiry_s)),
            sweep_interval: Duration::from_millis(u64::from(sweep_interval_ms)),
            analysis_threads: analysis_threads as usize,
            cached_games: cached_games as usize,
            http,
            webhooks,
        })
    }
}

fn webhook_settings(
    lookup: &impl Fn(&str) -> Option<String>,
) -> Result<WebhookSettings, ConfigError> {
    let allow_private = match lookup("GOLF_WEBHOOK_ALLOW_PRIVATE").as_deref() {
        None | Some("false") => false,
        Some("true") => true,
        Some(other) => {
            return Err(ConfigError {
                var: "GOLF_WEBHOOK_ALLOW_PRIVATE",
                value: other.to_owned(),
                expected: "true or false",
            });
        }
    };
    let var = "GOLF_WEBHOOK_RETRY_DELAYS_MS";
    let retry_delays = match lookup(var) {
        None => DEFAULT_WEBHOOK_RETRY_DELAYS.to_vec(),
        Some(value) => {
            let delays: Option<Vec<Duration>> = list(lookup, var)
                .iter()
                .map(|ms| ms.parse::<u64>().ok().map(Duration::from_millis))
                .collect();
            delays.ok_or(ConfigError {
                var,
                value,
                expected: "milliseconds, comma-separated, such as 5000,300000",
            })?
        }
    };
    let var = "GOLF_WEBHOOK_PORTS";
    let ports = match lookup(var) {
        None => vec![443],
        Some(value) => {
            let ports: Option<Vec<u16>> = list(lookup, var)
                .iter()
                .map(|port| port.parse::<u16>().ok().filter(|&port| port > 0))
                .collect();
            ports.filter(|ports| !ports.is_empty()).ok_or(ConfigError {
                var,
                value,
                expected: "ports, comma-separated, such as 443,8443",
            })?
        }
    };
    Ok(WebhookSettings {
        allow_private,
        retry_delays,
        ports,
    })
}

fn bind(lookup: &impl Fn(&str) -> Option<String>) -> Result<SocketAddr, ConfigError> {
    let value = lookup("GOLF_BIND").unwrap_or_else(|| DEFAULT_BIND.to_owned());
    value.parse().map_err(|_| ConfigError {
        var: "GOLF_BIND",
        value,
        expected: "a socket address such as 127.0.0.1:8080 or 0.0.0.0:8080",
    })
}

fn database_url(lookup: &impl Fn(&str) -> Option<String>) -> Result<String, ConfigError> {
    let url = lookup("DATABASE_URL").unwrap_or_else(|| DEFAULT_DATABASE_URL.to_owned());
    if !is_supported_database_url(&url) {
        return Err(ConfigError {
            var: "DATABASE_URL",
            value: without_credentials(&url),
            expected: "a URL starting with sqlite: or postgres:// (or postgresql://)",
        });
    }
    Ok(url)
}

fn log_format(lookup: &impl Fn(&str) -> Option<String>) -> Result<LogFormat, ConfigError> {
    match lookup("GOLF_LOG").as_deref() {
        None | Some("text") => Ok(LogFormat::Text),
        Some("json") => Ok(LogFormat::Json),
        Some(other) => Err(ConfigError {
            var: "GOLF_LOG",
            value: other.to_owned(),
            expected: "text or json",
        }),
    }
}

fn log_filter(lookup: &impl Fn(&str) -> Option<String>) -> Result<String, ConfigError> {
    let filter = lookup("RUST_LOG").unwrap_or_else(|| "info".to_owned());
    if tracing_subscriber::EnvFilter::try_new(&filter).is_err() {
        return Err(ConfigError {
            var: "RUST_LOG",
            value: filter,
            expected: "tracing filter directives such as info or golf_server=debug,info",
        });
    }
    Ok(filter)
}

/// The turn timeout of `var`: none unless set, and then within the rules' range.
fn turn_timeout_in(
    lookup: &impl Fn(&str) -> Option<String>,
    var: &'static str,
) -> Result<Option<u32>, ConfigError> {
    let Some(value) = lookup(var) else {
        return Ok(None);
    };
    match value.parse::<i64>() {
        Ok(seconds) if TURN_TIMEOUT_S.contains(&seconds) => Ok(Some(seconds as u32)),
        _ => Err(ConfigError {
            var,
            value,
            expected: "a whole number of seconds from 10 to 604800",
        }),
    }
}

/// The items of a comma-separated variable, trimmed, without empty ones.
fn list(lookup: &impl Fn(&str) -> Option<String>, var: &str) -> Vec<String> {
    lookup(var)
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}

impl Config {
    /// The database pool settings.
    pub fn pool_options(&self) -> PoolOptions {
        PoolOptions {
            max_connections: self.db_max_connections,
            acquire_timeout: self.db_acquire_timeout,
            statement_timeout: self.db_statement_timeout,
            listen: true,
        }
    }
}

/// The URL with any user and password replaced, fit for an error message.
fn without_credentials(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => match rest.split('/').next().and_then(|host| host.rfind('@')) {
            Some(at) => format!("{scheme}://***@{}", &rest[at + 1..]),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

fn is_supported_database_url(url: &str) -> bool {
    url.starts_with("sqlite:") || url.starts_with("postgres://") || url.starts_with("postgresql://")
}

fn parse_number(
    lookup: &impl Fn(&str) -> Option<String>,
    var: &'static str,
    default: u32,
) -> Result<u32, ConfigError> {
    match lookup(var) {
        None => Ok(default),
        Some(value) => match value.parse::<u32>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(ConfigError {
                var,
                value,
                expected: "a whole number greater than 0",
            }),
        },
    }
}

/// A count that may be 0 (which turns off what it counts).
fn parse_count(
    lookup: &impl Fn(&str) -> Option<String>,
    var: &'static str,
    default: u32,
) -> Result<u32, ConfigError> {
    match lookup(var) {
        None => Ok(default),
        Some(value) => value.parse::<u32>().map_err(|_| ConfigError {
            var,
            value,
            expected: "a whole number (0 turns it off)",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config_with(vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
        Config::from_lookup(|name| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        })
    }

    #[test]
    fn webhook_settings_default_to_public_https_and_the_contract_s_retries() {
        let config = config_with(&[]).unwrap();
        assert_eq!(config.webhooks, WebhookSettings::default());
        assert_eq!(config.webhooks.retry_delays.len(), 7);
        let config = config_with(&[
            ("GOLF_WEBHOOK_ALLOW_PRIVATE", "true"),
            ("GOLF_WEBHOOK_RETRY_DELAYS_MS", "100, 250"),
            ("GOLF_WEBHOOK_PORTS", "443, 8443"),
        ])
        .unwrap();
        assert!(config.webhooks.allow_private);
        assert_eq!(config.webhooks.ports, [443, 8443]);
        assert_eq!(
            config.webhooks.retry_delays,
            [Duration::from_millis(100), Duration::from_millis(250)]
        );
        for (var, bad) in [
            ("GOLF_WEBHOOK_ALLOW_PRIVATE", "yes"),
            ("GOLF_WEBHOOK_RETRY_DELAYS_MS", "5s"),
            ("GOLF_WEBHOOK_RETRY_DELAYS_MS", "-1"),
            ("GOLF_WEBHOOK_PORTS", "0"),
            ("GOLF_WEBHOOK_PORTS", "https"),
        ] {
            assert_eq!(config_with(&[(var, bad)]).unwrap_err().var, var, "{bad}");
        }
    }

    #[test]
    fn defaults_need_no_variable() {
        let config = config_with(&[]).expect("defaults are valid");
        assert_eq!(config.bind.to_string(), DEFAULT_BIND);
        assert_eq!(config.database_url, DEFAULT_DATABASE_URL);
        assert_eq!(config.log_format, LogFormat::Text);
        assert_eq!(config.db_max_connections, 10);
        assert_eq!(config.db_acquire_timeout, Duration::from_secs(3));
        assert_eq!(config.db_statement_timeout, Duration::from_secs(5));
        assert_eq!(config.turn_timeout_s, None);
        assert_eq!(config.waiting_expiry, Duration::from_secs(86_400));
        assert_eq!(config.challenge_expiry, Duration::from_secs(86_400));
        assert_eq!(config.seek_expiry, Duration::from_secs(600));
        assert_eq!(config.sweep_interval, Duration::from_secs(1));
    }

    #[test]
    fn the_default_turn_timeout_is_within_the_rule_s_range() {
        for bad in ["9", "604801", "-10", "1m", ""] {
            let err = config_with(&[("GOLF_TURN_TIMEOUT_S", bad)]).unwrap_err();
            assert_eq!(err.var, "GOLF_TURN_TIMEOUT_S", "{bad}");
        }
        let config = config_with(&[
            ("GOLF_TURN_TIMEOUT_S", "10"),
            ("GOLF_WAITING_EXPIRY_S", "600"),
            ("GOLF_SWEEP_INTERVAL_MS", "250"),
        ])
        .unwrap();
        assert_eq!(config.turn_timeout_s, Some(10));
        assert_eq!(config.waiting_expiry, Duration::from_secs(600));
        assert_eq!(config.sweep_interval, Duration::from_millis(250));
        assert_eq!(
            config_with(&[("GOLF_WAITING_EXPIRY_S", "0")])
                .unwrap_err()
                .var,
            "GOLF_WAITING_EXPIRY_S"
        );
    }

    #[test]
    fn a_bad_value_names_its_variable() {
        let err = config_with(&[("GOLF_BIND", "localhost")]).unwrap_err();
        assert_eq!(err.var, "GOLF_BIND");
        assert!(err.to_string().starts_with("GOLF_BIND=\"localhost\""));
        assert_eq!(
            config_with(&[("GOLF_LOG", "yaml")]).unwrap_err().var,
            "GOLF_LOG"
        );
        assert_eq!(
            config_with(&[("DATABASE_URL", "mysql://x")])
                .unwrap_err()
                .var,
            "DATABASE_URL"
        );
        assert_eq!(
            config_with(&[("RUST_LOG", "[[[")]).unwrap_err().var,
            "RUST_LOG"
        );
        assert_eq!(
            config_with(&[("GOLF_DB_MAX_CONNECTIONS", "0")])
                .unwrap_err()
                .var,
            "GOLF_DB_MAX_CONNECTIONS"
        );
        for bad in ["0", "-1", "5s", ""] {
            let err = config_with(&[("GOLF_DB_STATEMENT_TIMEOUT_MS", bad)]).unwrap_err();
            assert_eq!(err.var, "GOLF_DB_STATEMENT_TIMEOUT_MS");
            assert!(
                err.to_string()
                    .starts_with(&format!("GOLF_DB_STATEMENT_TIMEOUT_MS={bad:?}")),
                "{err}"
            );
        }
    }

    #[test]
    fn the_cache_holds_16384_games_unless_told_and_never_none() {
        assert_eq!(config_with(&[]).unwrap().cached_games, 16_384);
        let larger = config_with(&[("GOLF_CACHED_GAMES", "50000")]).unwrap();
        assert_eq!(larger.cached_games, 50_000);
        let refused = config_with(&[("GOLF_CACHED_GAMES", "0")]).unwrap_err();
        assert_eq!(refused.var, "GOLF_CACHED_GAMES");
    }

    #[test]
    fn analyses_take_one_thread_unless_told_and_zero_turns_them_off() {
        assert_eq!(config_with(&[]).unwrap().analysis_threads, 1);
        let off = config_with(&[("GOLF_ANALYSIS_THREADS", "0")]).unwrap();
        assert_eq!(off.analysis_threads, 0);
        let refused = config_with(&[("GOLF_ANALYSIS_THREADS", "-1")]).unwrap_err();
        assert_eq!(refused.var, "GOLF_ANALYSIS_THREADS");
    }

    #[test]
    fn the_statement_timeout_reaches_the_pool_options() {
        let config = config_with(&[("GOLF_DB_STATEMENT_TIMEOUT_MS", "750")]).unwrap();
        assert_eq!(
            config.pool_options().statement_timeout,
            Duration::from_millis(750)
        );
    }

    #[test]
    fn a_refused_database_url_is_shown_without_its_password() {
        let err = config_with(&[("DATABASE_URL", "mysql://golf:s3cret@db:3306/golf")]).unwrap_err();
        assert_eq!(err.value, "mysql://***@db:3306/golf");
        assert!(!err.to_string().contains("s3cret"));
    }

    #[test]
    fn the_http_settings_are_read_from_their_variables() {
        let defaults = config_with(&[]).unwrap().http;
        assert_eq!(defaults, HttpSettings::default());
        assert_eq!(defaults.writes_per_min, Some(DEFAULT_WRITES_PER_MIN));
        assert_eq!(
            defaults.expensive_reads_per_min,
            Some(DEFAULT_EXPENSIVE_READS_PER_MIN)
        );
        assert!(defaults.cors_origins.is_empty(), "no CORS unless set");
        assert_eq!(defaults.client_ip_header, ClientIpHeader::XForwardedFor);
        let http = config_with(&[
            ("GOLF_RATE_LIMIT_PER_MIN", "30"),
            ("GOLF_READ_RATE_LIMIT_PER_MIN", "0"),
            ("GOLF_MAX_STREAMS_PER_CLIENT", "4"),
            ("GOLF_TRUSTED_PROXIES", " 10.0.0.0/8, 192.0.2.7 ,fd00::/8"),
            ("GOLF_CLIENT_IP_HEADER", "Forwarded"),
            (
                "GOLF_CORS_ORIGINS",
                "https://golf.example.org, http://localhost:3000",
            ),
            ("GOLF_CLIENT_TIMEOUT_MS", "750"),
        ])
        .unwrap()
        .http;
        assert_eq!(http.writes_per_min, Some(30));
        assert_eq!(http.expensive_reads_per_min, None, "0 turns it off");
        assert_eq!(http.max_streams_per_client, 4);
        assert_eq!(http.trusted_proxies.len(), 3);
        assert_eq!(http.client_ip_header, ClientIpHeader::Forwarded);
        assert_eq!(
            http.cors_origins,
            ["https://golf.example.org", "http://localhost:3000"]
        );
        assert_eq!(http.client_timeout, Duration::from_millis(750));
        for (var, bad) in [
            ("GOLF_RATE_LIMIT_PER_MIN", "-1"),
            ("GOLF_READ_RATE_LIMIT_PER_MIN", "lots"),
            ("GOLF_MAX_STREAMS_PER_CLIENT", "many"),
            ("GOLF_TRUSTED_PROXIES", "10.0.0.0/33"),
            ("GOLF_TRUSTED_PROXIES", "proxy.local"),
            ("GOLF_CLIENT_IP_HEADER", "x-real-ip"),
            ("GOLF_CORS_ORIGINS", "*"),
            ("GOLF_CORS_ORIGINS", "https://golf.example.org/play"),
            ("GOLF_KEEP_ALIVE_MS", "-5"),
        ] {
            assert_eq!(config_with(&[(var, bad)]).unwrap_err().var, var, "{bad}");
        }
    }

    #[test]
    fn json_logs_and_postgres_are_selected_by_their_variables() {
        let config = config_with(&[
            ("GOLF_LOG", "json"),
            ("DATABASE_URL", "postgres://postgres@127.0.0.1/golf"),
        ])
        .unwrap();
        assert_eq!(config.log_format, LogFormat::Json);
        assert!(config.database_url.starts_with("postgres://"));
    }
}
