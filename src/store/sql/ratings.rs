//! [`RatingStore`] on both backends: applying a rated game's end, the history and the
//! leaderboard. What differs between the dialects (the lock, booleans in index predicates, row
//! locks) is in [`RatingStatements`].

use async_trait::async_trait;
use sqlx::types::Json;
use sqlx::{Executor, FromRow};
use uuid::Uuid;

use super::{Backend, Bind, SqlStore};
use crate::ratings::Rating;
use crate::store::accounts::wake_key;
use crate::store::codec::projection_state;
use crate::store::ratings::{
    AccountRating, DueRating, LeaderboardCursor, Ranked, RatedGame, RatingChange, RatingStore,
};
use crate::store::{RawJson, StoreError};

/// The statements on ratings whose text differs between the dialects.
pub struct RatingStatements {
    /// Serializes rating updates across instances until the transaction ends (none on SQLite,
    /// whose write transaction holds the database's write lock).
    pub lock: Option<&'static str>,
    /// The id, projection and end time ([`DueRow`]) of the finished rated game not yet applied
    /// that ended first (the partial index `games_ratings_due`).
    pub due_game: &'static str,
    /// The rating of account `$1` (value, deviation, games), its row locked where the dialect
    /// locks rows.
    pub rating_of: &'static str,
    /// The first `$1` established ratings ([`RankedRow`]), best first (`accounts_leaderboard`).
    pub leaderboard: &'static str,
    /// The next `$1` after rating value `$2` and username `$3`.
    pub leaderboard_after: &'static str,
}

#[derive(FromRow)]
pub struct DueRow {
    id: Uuid,
    projection: Json<RawJson>,
    at: String,
}

#[derive(FromRow)]
pub struct HistoryRow {
    game_id: Uuid,
    at: String,
    games: i32,
    before_value: f64,
    before_deviation: f64,
    after_value: f64,
    after_deviation: f64,
}

#[derive(FromRow)]
pub struct RankedRow {
    username: String,
    display_name: String,
    rating_value: f64,
    rating_deviation: f64,
    rated_games: i32,
}

/// The rating of account `$1` (value, deviation, games), read without a lock.
const READ_RATING: &str =
    "SELECT rating_value, rating_deviation, rated_games FROM accounts WHERE username = $1";

/// Sets an account's rating: `$1` username, `$2` value, `$3` deviation, `$4` games, `$5`
/// provisional.
const SET_RATING: &str = "\
    UPDATE accounts SET rating_value = $2, rating_deviation = $3, rated_games = $4, \
        rating_provisional = $5 \
    WHERE username = $1";

/// Seeds an account's rating, keeping its count of rated games (which numbers its history):
/// `$1` username, `$2` value, `$3` deviation, `$4` provisional.
const SEED_RATING: &str = "\
    UPDATE accounts SET rating_value = $2, rating_deviation = $3, rating_provisional = $4 \
    WHERE username = $1";

/// Records one update: `$1` account, `$2` game, `$3` end time, `$4` games after it, `$5`-`$8`
/// value and deviation before and after.
const INSERT_HISTORY: &str = "\
    INSERT INTO rating_history (account, game_id, at, games, before_value, before_deviation, \
        after_value, after_deviation) \
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";

impl<DB> SqlStore<DB>
where
    DB: Backend,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'a> &'a str: Bind<DB>,
    Uuid: Bind<DB>,
    f64: Bind<DB>,
    i32: Bind<DB>,
    bool: Bind<DB>,
    for<'r> (f64, f64, i32): FromRow<'r, DB::Row>,
{
    /// `account`'s rating now (a new account's when there is none), read by `statement`
    /// ([`READ_RATING`], or the dialect's locking `rating_of`).
    async fn rating_in(
        conn: &mut DB::Connection,
        statement: &'static str,
        account: &str,
    ) -> Result<Rating, StoreError> {
        let row: Option<(f64, f64, i32)> = sqlx::query_as(statement)
            .bind(account)
            .fetch_optional(&mut *conn)
            .await?;
        Ok(
            row.map_or_else(Rating::initial, |(value, deviation, games)| {
                Rating::new(value, deviation, games)
            }),
        )
    }

    /// Stores each account's rating after the game and its history, for game `game_id` that
    /// ended `at`.
    async fn store_ratings(conn: &mut DB::Connection, rated: &RatedGame) -> Result<(), StoreError> {
        for AccountRating {
            account,
            before,
            after,
        } in &rated.accounts
        {
            let updated = sqlx::query(SET_RATING)
                .bind(account.as_str())
                .bind(after.value)
                .bind(after.deviation)
                .bind(after.games)
                .bind(after.provisional)
                .execute(&mut *conn)
                .await?;
            if DB::rows_affected(&updated) == 0 {
                continue;
            }
            sqlx::query(INSERT_HISTORY)
                .bind(account.as_str())
                .bind(rated.game_id)
                .bind(rated.at.as_str())
                .bind(after.games)
                .bind(before.value)
                .bind(before.deviation)
                .bind(after.value)
                .bind(after.deviation)
                .execute(&mut *conn)
                .await?;
        }
        Ok(())
    }
}

#[async_trait]
impl<DB> RatingStore for SqlStore<DB>
where
    DB: Backend,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'a> &'a str: Bind<DB>,
    String: Bind<DB>,
    Uuid: Bind<DB>,
    f64: Bind<DB>,
    i32: Bind<DB>,
    i64: Bind<DB>,
    bool: Bind<DB>,
    for<'r> (f64, f64, i32): FromRow<'r, DB::Row>,
    for<'r> DueRow: FromRow<'r, DB::Row>,
    for<'r> HistoryRow: FromRow<'r, DB::Row>,
    for<'r> RankedRow: FromRow<'r, DB::Row>,
    Option<Uuid>: Bind<DB>,
    for<'a> Json<&'a serde_json::Value>: Bind<DB>,
    for<'r> (i64,): FromRow<'r, DB::Row>,
{
    async fn first_due_rating(&self) -> Result<Option<DueRating>, StoreError> {
        let due: Option<DueRow> = sqlx::query_as(DB::RATING_STATEMENTS.due_game)
            .fetch_optional(&self.pool)
            .await?;
        due.map(|due| {
            Ok(DueRating {
                state: projection_state(due.id, &due.projection.0)?,
                game_id: due.id,
                at: due.at,
            })
        })
        .transpose()
    }

    async fn ratings_of(&self, accounts: &[String]) -> Result<Vec<Rating>, StoreError> {
        let mut conn = self.pool.acquire().await?;
        let mut ratings = Vec::with_capacity(accounts.len());
        for account in accounts {
            ratings.push(Self::rating_in(&mut conn, READ_RATING, account).await?);
        }
        Ok(ratings)
    }

    async fn apply_ratings(&self, rated: &RatedGame) -> Result<(), StoreError> {
        let mut tx = DB::begin_write(&self.pool).await?;
        if let Some(lock) = DB::RATING_STATEMENTS.lock {
            sqlx::query(lock).execute(&mut *tx).await?;
        }
        let due: Option<DueRow> = sqlx::query_as(DB::RATING_STATEMENTS.due_game)
            .fetch_optional(&mut *tx)
            .await?;
        if due.is_none_or(|due| due.id != rated.game_id) {
            return Err(StoreError::Conflict);
        }
        // Rows locked in username order, so that two updates never deadlock.
        let mut accounts: Vec<&AccountRating> = rated.accounts.iter().collect();
        accounts.sort_unstable_by(|a, b| a.account.cmp(&b.account));
        for account in accounts {
            let locking = DB::RATING_STATEMENTS.rating_of;
            if Self::rating_in(&mut tx, locking, &account.account).await? != account.before {
                return Err(StoreError::Conflict);
            }
        }
        Self::store_ratings(&mut tx, rated).await?;
        Self::insert_notices(&mut tx, &rated.events, Some(rated.game_id)).await?;
        sqlx::query("UPDATE games SET ratings_applied = $2 WHERE id = $1")
            .bind(rated.game_id)
            .bind(true)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        for event in &rated.events {
            self.announce(wake_key(&event.account));
        }
        Ok(())
    }

    async fn rating_history(
        &self,
        account: &str,
        limit: i64,
    ) -> Result<Vec<RatingChange>, StoreError> {
        let mut rows: Vec<HistoryRow> = sqlx::query_as(
            "SELECT game_id, at, games, before_value, before_deviation, after_value, \
                after_deviation \
             FROM rating_history WHERE account = $1 ORDER BY games DESC LIMIT $2",
        )
        .bind(account)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        rows.reverse();
        Ok(rows
            .into_iter()
            .map(|row| RatingChange {
                game_id: row.game_id,
                at: row.at,
                before: Rating::new(row.before_value, row.before_deviation, row.games - 1),
                after: Rating::new(row.after_value, row.after_deviation, row.games),
            })
            .collect())
    }

    async fn leaderboard(
        &self,
        cursor: Option<LeaderboardCursor>,
        limit: i64,
    ) -> Result<Vec<Ranked>, StoreError> {
        let rows: Vec<RankedRow> = match cursor {
            None => {
                sqlx::query_as(DB::RATING_STATEMENTS.leaderboard)
                    .bind(limit)
                    .fetch_all(&self.pool)
                    .await?
            }
            Some(cursor) => {
                sqlx::query_as(DB::RATING_STATEMENTS.leaderboard_after)
                    .bind(limit)
                    .bind(cursor.value)
                    .bind(cursor.username)
                    .fetch_all(&self.pool)
                    .await?
            }
        };
        Ok(rows
            .into_iter()
            .map(|row| Ranked {
                username: row.username,
                display_name: row.display_name,
                rating: Rating::new(row.rating_value, row.rating_deviation, row.rated_games),
            })
            .collect())
    }

    async fn set_rating(&self, account: &str, rating: Rating) -> Result<bool, StoreError> {
        let mut tx = DB::begin_write(&self.pool).await?;
        if let Some(lock) = DB::RATING_STATEMENTS.lock {
            sqlx::query(lock).execute(&mut *tx).await?;
        }
        let updated = sqlx::query(SEED_RATING)
            .bind(account)
            .bind(rating.value)
            .bind(rating.deviation)
            .bind(rating.provisional)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(DB::rows_affected(&updated) == 1)
    }
}
