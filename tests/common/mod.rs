//! Test support: a real server on port 0 over a fresh database of either backend.

#![allow(dead_code)] // each test binary uses a different part of this module

use std::time::Duration;

use golf_server::config::{Config, LogFormat};
use golf_server::startup::Application;
use sqlx::Connection;
use sqlx::postgres::PgConnection;
use uuid::Uuid;

/// The backends every persistence test runs against.
#[derive(Debug, Clone, Copy)]
pub enum Backend {
    Postgres,
    Sqlite,
}

/// The PostgreSQL server that tests create their databases on: `DATABASE_URL` when it names a
/// PostgreSQL server, else the local one.
pub fn postgres_server_url() -> String {
    match std::env::var("DATABASE_URL") {
        Ok(url) if url.starts_with("postgres") => url,
        _ => "postgres://postgres@127.0.0.1:5432/postgres".to_owned(),
    }
}

/// Replaces the database name of a PostgreSQL URL.
pub fn with_database(server_url: &str, database: &str) -> String {
    let (base, query) = match server_url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (server_url, None),
    };
    let authority_end = base
        .find("://")
        .map(|scheme| scheme + 3)
        .and_then(|start| base[start..].find('/').map(|slash| start + slash))
        .unwrap_or(base.len());
    let mut url = format!("{}/{}", &base[..authority_end], database);
    if let Some(query) = query {
        url.push('?');
        url.push_str(query);
    }
    url
}

/// A fresh, empty database; SQLite files live in a temporary directory kept alive by the value.
pub struct TestDatabase {
    pub url: String,
    pub name: Option<String>,
    _dir: Option<tempfile::TempDir>,
}

impl TestDatabase {
    pub async fn new(backend: Backend) -> Self {
        match backend {
            Backend::Postgres => {
                let name = format!("golf_test_{}", Uuid::new_v4().simple());
                let server = postgres_server_url();
                let mut admin = PgConnection::connect(&server)
                    .await
                    .unwrap_or_else(|error| {
                        panic!(
                            "PostgreSQL does not answer at {server} ({error}). Start it with \
                         `pg_ctlcluster --skip-systemctl-redirect 15 main start` (or run \
                         scripts/test, which does), or set DATABASE_URL to a PostgreSQL server."
                        )
                    });
                sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
                    .execute(&mut admin)
                    .await
                    .expect("create a test database");
                TestDatabase {
                    url: with_database(&server, &name),
                    name: Some(name),
                    _dir: None,
                }
            }
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("temporary directory");
                let url = format!("sqlite://{}", dir.path().join("golf.db").display());
                TestDatabase {
                    url,
                    name: None,
                    _dir: Some(dir),
                }
            }
        }
    }

    /// Drops a PostgreSQL test database, closing the server's connections to it.
    pub async fn drop_postgres(&self) {
        if let Some(name) = &self.name {
            drop_database(name.clone()).await;
        }
    }
}

async fn drop_database(name: String) {
    if let Ok(mut admin) = PgConnection::connect(&postgres_server_url()).await {
        let statement = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
        // Cleanup only: a database left behind is harmless, so a failure here is ignored.
        let _ = sqlx::query(sqlx::AssertSqlSafe(statement))
            .execute(&mut admin)
            .await;
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        if let Some(name) = self.name.take() {
            // Drop runs inside the test's runtime, which cannot block: clean up on a thread.
            let cleanup = std::thread::spawn(move || {
                if let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    runtime.block_on(drop_database(name));
                }
            });
            let _ = cleanup.join();
        }
    }
}

/// A running server and a client for it.
pub struct TestApp {
    pub address: String,
    pub client: reqwest::Client,
    pub database: TestDatabase,
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.address, path)
    }

    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.client
            .get(self.url(path))
            .send()
            .await
            .expect("request reaches the server")
    }
}

/// Starts the real server on 127.0.0.1:0 over a fresh database.
pub async fn spawn_app(backend: Backend) -> TestApp {
    let database = TestDatabase::new(backend).await;
    let config = Config {
        bind: "127.0.0.1:0".parse().expect("socket address"),
        database_url: database.url.clone(),
        log_format: LogFormat::Text,
        log_filter: "warn".to_owned(),
        db_max_connections: 5,
        db_acquire_timeout: Duration::from_secs(1),
    };
    let app = Application::build(&config)
        .await
        .expect("the server starts");
    let address = format!("http://{}", app.address());
    tokio::spawn(app.run_until_stopped());
    TestApp {
        address,
        client: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("HTTP client"),
        database,
    }
}

/// Generates one `#[tokio::test]` per backend for each listed async test function taking a
/// [`Backend`].
#[macro_export]
macro_rules! on_both_backends {
    ($($test:ident),* $(,)?) => {
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    super::$test($crate::common::Backend::Postgres).await;
                }
            )*
        }
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    super::$test($crate::common::Backend::Sqlite).await;
                }
            )*
        }
    };
}
