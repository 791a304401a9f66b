//! Distributing the PostgreSQL schema over a Citus cluster (`golf-server distribute`): which
//! table goes where, and the one pass that puts them there, on a fresh or an existing database.
//!
//! - The game tables are distributed by the game's id and colocated, so an append, a view and a
//!   log page each touch one shard. `account_games` is one of them: the append writes it with the
//!   game's rows, and an account's list reads it across the shards, joined to `games` on its
//!   shard.
//! - The account tables are distributed by the account's name and colocated with each other.
//! - `create_idempotency` is distributed by its key, on its own.
//! - Seeks and challenges are reference tables (a copy on every node): the matcher reads a pool
//!   across accounts under a row lock, which only one shard or a reference table can take.
//!
//! Citus refuses a foreign key between tables distributed by different keys, and from a reference
//! table to a distributed one, and a unique index that leaves out the distribution column; those
//! are dropped (the service writes both sides in one transaction), and `accounts.token_hash`
//! keeps a plain index. Each step is skipped when already done, so the pass can run again.

use std::str::FromStr;

use sqlx::Connection;
use sqlx::postgres::{PgConnectOptions, PgConnection};

use super::StoreError;

/// The game tables and their game id column, `games` first: the others colocate with it.
const GAME_TABLES: &[(&str, &str)] = &[
    ("games", "id"),
    ("events", "game_id"),
    ("seats", "game_id"),
    ("move_idempotency", "game_id"),
    ("snapshots", "game_id"),
    ("analyses", "game_id"),
    ("account_games", "game_id"),
];

/// The account tables and their account column, `accounts` first.
const ACCOUNT_TABLES: &[(&str, &str)] = &[
    ("accounts", "username"),
    ("account_events", "account"),
    ("webhooks", "account"),
    ("webhook_deliveries", "account"),
    ("webhook_attempts", "account"),
    ("rating_history", "account"),
];

/// The tables with a copy on every node, each after those it refers to.
const REFERENCE_TABLES: &[&str] = &["challenges", "challenge_invitees", "seeks"];

/// The foreign keys that cross from one distribution to another.
const CROSSING_KEYS: &[(&str, &str)] = &[
    ("games", "games_host_account_fkey"),
    ("seats", "seats_account_fkey"),
    ("account_games", "account_games_account_fkey"),
    ("rating_history", "rating_history_game_id_fkey"),
    ("challenges", "challenges_author_fkey"),
    ("challenges", "challenges_game_id_fkey"),
    ("challenge_invitees", "challenge_invitees_account_fkey"),
    ("seeks", "seeks_account_fkey"),
    ("seeks", "seeks_game_id_fkey"),
];

/// Runs the migrations on the coordinator at `url`, then distributes every table not yet
/// distributed; returns one line per step taken, empty when there was nothing left to do.
pub async fn distribute(url: &str) -> Result<Vec<String>, StoreError> {
    let mut conn = PgConnection::connect_with(&PgConnectOptions::from_str(url)?).await?;
    let citus: Option<String> =
        sqlx::query_scalar("SELECT extversion FROM pg_extension WHERE extname = 'citus'")
            .fetch_optional(&mut conn)
            .await?;
    if citus.is_none() {
        return Err(StoreError::Internal(
            "the database has no citus extension: run `CREATE EXTENSION citus` on the \
             coordinator and add the workers (scripts/citus does both)"
                .to_owned(),
        ));
    }
    sqlx::migrate!("migrations/postgres").run(&mut conn).await?;
    let mut steps = Vec::new();
    for (table, constraint) in CROSSING_KEYS {
        if constraint_exists(&mut conn, table, constraint).await? {
            execute(
                &mut conn,
                &format!("ALTER TABLE {table} DROP CONSTRAINT {constraint}"),
            )
            .await?;
            steps.push(format!("dropped the foreign key {constraint} of {table}"));
        }
    }
    if constraint_exists(&mut conn, "accounts", "accounts_token_hash_key").await? {
        execute(
            &mut conn,
            "ALTER TABLE accounts DROP CONSTRAINT accounts_token_hash_key; \
             CREATE INDEX accounts_by_token ON accounts (token_hash)",
        )
        .await?;
        steps.push("replaced the unique key of accounts.token_hash by an index".to_owned());
    }
    distribute_group(&mut conn, GAME_TABLES, &mut steps).await?;
    distribute_group(&mut conn, ACCOUNT_TABLES, &mut steps).await?;
    distribute_group(&mut conn, &[("create_idempotency", "key")], &mut steps).await?;
    for table in REFERENCE_TABLES {
        if placement(&mut conn, table).await?.as_deref() != Some("reference") {
            let statement = format!("SELECT create_reference_table('{table}')");
            execute(&mut conn, &statement).await?;
            steps.push(format!("{table}: a reference table"));
        }
    }
    Ok(steps)
}

/// Distributes each of `tables` by its column, colocated with the first.
async fn distribute_group(
    conn: &mut PgConnection,
    tables: &[(&str, &str)],
    steps: &mut Vec<String>,
) -> Result<(), StoreError> {
    let (first, _) = tables[0];
    for (table, column) in tables {
        if placement(conn, table).await?.as_deref() == Some("distributed") {
            continue;
        }
        let (colocation, step) = if *table == first {
            ("none", format!("{table}: distributed by {column}"))
        } else {
            (
                first,
                format!("{table}: distributed by {column}, colocated with {first}"),
            )
        };
        let statement = format!(
            "SELECT create_distributed_table('{table}', '{column}', colocate_with => '{colocation}')"
        );
        execute(conn, &statement).await?;
        steps.push(step);
    }
    Ok(())
}

/// How Citus holds `table` (`distributed`, `reference` or `local`), or `None` if it does not.
async fn placement(conn: &mut PgConnection, table: &str) -> Result<Option<String>, StoreError> {
    let method: Option<String> = sqlx::query_scalar(
        "SELECT citus_table_type FROM citus_tables WHERE table_name = $1::regclass",
    )
    .bind(table)
    .fetch_optional(conn)
    .await?;
    Ok(method)
}

async fn constraint_exists(
    conn: &mut PgConnection,
    table: &str,
    constraint: &str,
) -> Result<bool, StoreError> {
    let found: Option<i32> = sqlx::query_scalar(
        "SELECT 1 FROM pg_constraint WHERE conrelid = $1::regclass AND conname = $2",
    )
    .bind(table)
    .bind(constraint)
    .fetch_optional(conn)
    .await?;
    Ok(found.is_some())
}

async fn execute(conn: &mut PgConnection, statement: &str) -> Result<(), StoreError> {
    sqlx::raw_sql(sqlx::AssertSqlSafe(statement.to_owned()))
        .execute(conn)
        .await?;
    Ok(())
}
