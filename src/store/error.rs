//! The store's error type and the one place that classifies database errors.

/// What can go wrong in a store call. Database errors never panic: they end up here.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// The game does not exist (or was cancelled).
    #[error("not found")]
    NotFound,
    /// Another writer got there first: the expected version is stale, a seq or seat is already
    /// taken, or an idempotency key is already recorded. Reload and retry, or replay.
    #[error("conflict with a concurrent write")]
    Conflict,
    /// Another writer held the game (PostgreSQL's `lock_timeout`) or the database (SQLite's
    /// `busy_timeout`) for longer than the store waits. Nothing was written; the wait is over, so
    /// a retry belongs to the client, not to a loop that would wait as long again.
    #[error("another writer held the database for too long")]
    Busy,
    /// The game cannot be cancelled because it is no longer waiting for players.
    #[error("the game is not waiting for players")]
    NotWaiting,
    /// The database cannot be reached, or is too busy to answer in time (HTTP 503).
    #[error("database unavailable: {0}")]
    Unavailable(String),
    /// Stored data does not have the shape the store wrote (a wrong hash length, bad JSON, ...).
    #[error("corrupt data: {0}")]
    Corrupt(String),
    /// A bug or a misconfiguration (bad URL, failed migration, invalid argument).
    #[error("internal store error: {0}")]
    Internal(String),
}

impl From<sqlx::Error> for StoreError {
    fn from(err: sqlx::Error) -> Self {
        use sqlx::Error as E;
        match err {
            E::Database(db) => {
                let code = db.code().map(|c| c.into_owned()).unwrap_or_default();
                let is_sqlite = db.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some();
                let class = if is_sqlite {
                    sqlite_class(code.parse().unwrap_or_default())
                } else {
                    postgres_class(&code, db.message())
                };
                match class {
                    Class::Conflict => StoreError::Conflict,
                    Class::Busy => StoreError::Busy,
                    Class::Unavailable => StoreError::Unavailable(db.to_string()),
                    Class::Other => StoreError::Internal(format!("database error {code}: {db}")),
                }
            }
            E::PoolTimedOut
            | E::PoolClosed
            | E::WorkerCrashed
            | E::Io(_)
            | E::Tls(_)
            | E::Protocol(_)
            | E::BeginFailed => StoreError::Unavailable(err.to_string()),
            E::RowNotFound
            | E::ColumnDecode { .. }
            | E::Decode(_)
            | E::ColumnNotFound(_)
            | E::ColumnIndexOutOfBounds { .. }
            | E::TypeNotFound { .. } => StoreError::Corrupt(err.to_string()),
            E::Migrate(migrate) => match *migrate {
                sqlx::migrate::MigrateError::Execute(inner) => match StoreError::from(inner) {
                    StoreError::Unavailable(reason) => StoreError::Unavailable(reason),
                    other => StoreError::Internal(format!("migration failed: {other}")),
                },
                other => StoreError::Internal(format!("migration failed: {other}")),
            },
            other => StoreError::Internal(other.to_string()),
        }
    }
}

/// What a database's own error code means to a caller.
#[derive(Debug, PartialEq, Eq)]
enum Class {
    /// A concurrent write won: reload and retry.
    Conflict,
    /// Another writer held a lock for longer than the store waits.
    Busy,
    /// The database cannot serve now: try later.
    Unavailable,
    Other,
}

/// Classifies a PostgreSQL SQLSTATE, with its message.
fn postgres_class(sqlstate: &str, message: &str) -> Class {
    match sqlstate {
        // unique_violation (a seq, seat, game id or idempotency key already taken),
        // serialization_failure, deadlock_detected
        "23505" | "40001" | "40P01" => Class::Conflict,
        // Citus reports a unique violation among the rows it copied to a worker (an INSERT ...
        // SELECT made on the coordinator, as a distributed append's) as an internal error that
        // carries the worker's message.
        "XX000" if message.starts_with(UNIQUE_VIOLATION) => Class::Conflict,
        // lock_not_available: a row lock still held by another writer after lock_timeout
        "55P03" => Class::Busy,
        // too_many_connections; invalid_catalog_name (the database was dropped under us);
        // object_not_in_prerequisite_state, which is what a new connection gets from a database
        // that does not accept connections (ALLOW_CONNECTIONS false, during maintenance)
        "53300" | "3D000" | "55000" => Class::Unavailable,
        // class 08: connection exception; class 57: operator intervention (admin_shutdown is what
        // a backend ended by pg_terminate_backend or a restart sends)
        s if s.starts_with("08") || s.starts_with("57") => Class::Unavailable,
        _ => Class::Other,
    }
}

/// How PostgreSQL's message of a unique violation begins.
const UNIQUE_VIOLATION: &str = "duplicate key value violates unique constraint";

/// Classifies a SQLite extended result code.
fn sqlite_class(code: i32) -> Class {
    const CONSTRAINT_PRIMARYKEY: i32 = 1555;
    const CONSTRAINT_UNIQUE: i32 = 2067;
    match (code, code & 0xff) {
        (CONSTRAINT_PRIMARYKEY | CONSTRAINT_UNIQUE, _) => Class::Conflict,
        // BUSY and LOCKED, with their extended codes (BUSY_SNAPSHOT, ...): another writer still
        // held the database after busy_timeout.
        (_, 5 | 6) => Class::Busy,
        // IOERR, FULL, CANTOPEN
        (_, 10 | 13 | 14) => Class::Unavailable,
        _ => Class::Other,
    }
}

impl From<sqlx::migrate::MigrateError> for StoreError {
    fn from(err: sqlx::migrate::MigrateError) -> Self {
        StoreError::from(sqlx::Error::Migrate(Box::new(err)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_busy_and_locked_are_busy_and_constraint_violations_conflicts() {
        // BUSY, BUSY_RECOVERY, BUSY_SNAPSHOT, BUSY_TIMEOUT, LOCKED, LOCKED_SHAREDCACHE
        for code in [5, 261, 517, 773, 6, 262] {
            assert_eq!(sqlite_class(code), Class::Busy, "{code}");
        }
        // CONSTRAINT_PRIMARYKEY, CONSTRAINT_UNIQUE
        for code in [1555, 2067] {
            assert_eq!(sqlite_class(code), Class::Conflict, "{code}");
        }
        // IOERR, IOERR_WRITE, FULL, CANTOPEN
        for code in [10, 778, 13, 14] {
            assert_eq!(sqlite_class(code), Class::Unavailable, "{code}");
        }
        // CONSTRAINT_FOREIGNKEY is a bug, not a race
        assert_eq!(sqlite_class(787), Class::Other);
    }

    #[test]
    fn postgres_lock_timeouts_are_busy_and_statement_timeouts_unavailable() {
        for sqlstate in ["23505", "40001", "40P01"] {
            assert_eq!(postgres_class(sqlstate, ""), Class::Conflict, "{sqlstate}");
        }
        assert_eq!(postgres_class("55P03", ""), Class::Busy);
        for sqlstate in ["57014", "57P01", "08006", "53300", "3D000", "55000"] {
            assert_eq!(
                postgres_class(sqlstate, ""),
                Class::Unavailable,
                "{sqlstate}"
            );
        }
        assert_eq!(postgres_class("42P01", ""), Class::Other);
    }

    #[test]
    fn a_unique_violation_that_citus_reports_as_internal_is_a_conflict() {
        let citus =
            "duplicate key value violates unique constraint \"move_idempotency_pkey_102034\"";
        assert_eq!(postgres_class("XX000", citus), Class::Conflict);
        assert_eq!(
            postgres_class("XX000", "could not create distributed plan"),
            Class::Other
        );
    }
}
