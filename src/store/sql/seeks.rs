//! [`SeekStore`] on both backends: its statements read the same in both dialects but for the
//! lock on a pool ([`Backend::KEY_LOCK`]): PostgreSQL takes an advisory lock per pool for
//! the transaction, SQLite already holds the database's write lock.

use async_trait::async_trait;
use serde_json::Value;
use sqlx::types::Json;
use sqlx::{Executor, FromRow};
use uuid::Uuid;

use super::{Backend, Bind, SqlStore};
use crate::engine::{Rules, Timestamp};
use crate::store::challenges::SeatedGame;
use crate::store::seeks::{Matcher, SeekRecord, SeekStore};
use crate::store::{RawJson, StoreError};

/// The columns of a seek, as [`SeekRow`] reads them.
const SEEK_COLUMNS: &str = "id, account, display_name, rating, seats, holes, rules, rated, pool, \
    range_lo, range_hi, bots_after_s, status, game_id, seat, created_at, expires_at, bots_at";

#[derive(FromRow)]
pub struct SeekRow {
    id: Uuid,
    account: String,
    display_name: String,
    rating: f64,
    seats: i32,
    holes: i32,
    rules: Json<Rules>,
    rated: bool,
    pool: String,
    range_lo: Option<f64>,
    range_hi: Option<f64>,
    bots_after_s: Option<i32>,
    status: String,
    game_id: Option<Uuid>,
    seat: Option<i32>,
    created_at: String,
    expires_at: String,
    bots_at: Option<String>,
}

impl From<SeekRow> for SeekRecord {
    fn from(row: SeekRow) -> Self {
        SeekRecord {
            id: row.id,
            account: row.account,
            display_name: row.display_name,
            rating: row.rating,
            seats: row.seats,
            holes: row.holes,
            rules: row.rules.0,
            rated: row.rated,
            pool: row.pool,
            range: row.range_lo.zip(row.range_hi),
            bots_after_s: row.bots_after_s,
            status: row.status,
            game_id: row.game_id,
            seat: row.seat,
            created_at: row.created_at,
            expires_at: row.expires_at,
            bots_at: row.bots_at,
        }
    }
}

impl<DB> SqlStore<DB>
where
    DB: Backend,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'a> &'a str: Bind<DB>,
    String: Bind<DB>,
    Uuid: Bind<DB>,
    Option<Uuid>: Bind<DB>,
    i64: Bind<DB>,
    i32: Bind<DB>,
    Option<i32>: Bind<DB>,
    f64: Bind<DB>,
    Option<f64>: Bind<DB>,
    bool: Bind<DB>,
    Option<String>: Bind<DB>,
    for<'a> Json<&'a Rules>: Bind<DB>,
{
    /// Holds the lock of `pool` until the transaction ends (PostgreSQL; SQLite's write lock is
    /// already held).
    async fn lock_pool(conn: &mut DB::Connection, pool: &str) -> Result<(), StoreError> {
        if let Some(lock) = DB::KEY_LOCK {
            sqlx::query(lock).bind(pool).execute(conn).await?;
        }
        Ok(())
    }

    /// Up to `candidates` waiting seeks of `seek`'s pool, oldest first, whose rating its range
    /// admits and whose range admits its rating, of other accounts and not past their expiry:
    /// seeks whose ranges admit nobody cannot fill the candidates (`seeks_waiting_by_pool`, or
    /// for a narrow range `seeks_waiting_by_rating`). Seeks past their expiry that no sweep has
    /// marked yet are left out.
    async fn admitting(
        conn: &mut DB::Connection,
        seek: &SeekRecord,
        candidates: i64,
    ) -> Result<Vec<SeekRecord>, StoreError>
    where
        for<'r> SeekRow: FromRow<'r, DB::Row>,
    {
        let statement = format!(
            "SELECT {SEEK_COLUMNS} FROM seeks \
             WHERE pool = $1 AND status = 'waiting' AND account <> $3 AND expires_at > $4 \
                 AND (range_lo IS NULL OR (range_lo <= $5 AND $5 <= range_hi)) \
                 AND rating >= $6 AND rating <= $7 \
             ORDER BY created_at, id LIMIT $2"
        );
        let (lo, hi) = seek.range.unwrap_or((f64::MIN, f64::MAX));
        let waiting: Vec<SeekRow> = sqlx::query_as(sqlx::AssertSqlSafe(statement))
            .bind(seek.pool.as_str())
            .bind(candidates)
            .bind(seek.account.as_str())
            .bind(seek.created_at.as_str())
            .bind(seek.rating)
            .bind(lo)
            .bind(hi)
            .fetch_all(conn)
            .await?;
        Ok(waiting.into_iter().map(SeekRecord::from).collect())
    }

    async fn insert_seek(conn: &mut DB::Connection, seek: &SeekRecord) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO seeks (id, account, display_name, rating, seats, holes, rules, rated, \
                pool, range_lo, range_hi, bots_after_s, status, game_id, seat, created_at, \
                expires_at, bots_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, \
                $17, $18)",
        )
        .bind(seek.id)
        .bind(seek.account.as_str())
        .bind(seek.display_name.as_str())
        .bind(seek.rating)
        .bind(seek.seats)
        .bind(seek.holes)
        .bind(Json(&seek.rules))
        .bind(seek.rated)
        .bind(seek.pool.as_str())
        .bind(seek.range.map(|(lo, _)| lo))
        .bind(seek.range.map(|(_, hi)| hi))
        .bind(seek.bots_after_s)
        .bind(seek.status.as_str())
        .bind(seek.game_id)
        .bind(seek.seat)
        .bind(seek.created_at.as_str())
        .bind(seek.expires_at.as_str())
        .bind(seek.bots_at.clone())
        .execute(conn)
        .await?;
        Ok(())
    }

    /// Marks the waiting seek `id` matched into `game_id` at `seat`; `Conflict` if it no
    /// longer waits.
    async fn mark_matched(
        conn: &mut DB::Connection,
        id: Uuid,
        game_id: Uuid,
        seat: i32,
    ) -> Result<(), StoreError> {
        let matched = sqlx::query(
            "UPDATE seeks SET status = 'matched', game_id = $2, seat = $3 \
             WHERE id = $1 AND status = 'waiting'",
        )
        .bind(id)
        .bind(game_id)
        .bind(seat)
        .execute(conn)
        .await?;
        match DB::rows_affected(&matched) {
            1 => Ok(()),
            _ => Err(StoreError::Conflict),
        }
    }
}

#[async_trait]
impl<DB> SeekStore for SqlStore<DB>
where
    DB: Backend,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'a> &'a str: Bind<DB>,
    String: Bind<DB>,
    Uuid: Bind<DB>,
    Option<Uuid>: Bind<DB>,
    i64: Bind<DB>,
    i32: Bind<DB>,
    Option<i32>: Bind<DB>,
    f64: Bind<DB>,
    Option<f64>: Bind<DB>,
    bool: Bind<DB>,
    Vec<u8>: Bind<DB>,
    Option<String>: Bind<DB>,
    Option<Json<Value>>: Bind<DB>,
    for<'a> Json<&'a Value>: Bind<DB>,
    for<'a> Json<&'a RawJson>: Bind<DB>,
    for<'a> Json<&'a Rules>: Bind<DB>,
    for<'r> (i64,): FromRow<'r, DB::Row>,
    for<'r> (String, Option<String>): FromRow<'r, DB::Row>,
    for<'r> SeekRow: FromRow<'r, DB::Row>,
{
    async fn place_seek(
        &self,
        seek: SeekRecord,
        candidates: i64,
        matcher: &Matcher<'_>,
    ) -> Result<SeekRecord, StoreError> {
        let mut tx = DB::begin_write(&self.pool).await?;
        sqlx::query(
            "UPDATE seeks SET status = 'expired' \
             WHERE account = $1 AND status = 'waiting' AND expires_at <= $2",
        )
        .bind(seek.account.as_str())
        .bind(seek.created_at.as_str())
        .execute(&mut *tx)
        .await?;
        Self::lock_pool(&mut tx, &seek.pool).await?;
        let waiting = Self::admitting(&mut tx, &seek, candidates).await?;
        let mut placed = seek;
        let Some(found) = matcher(&placed, &waiting)? else {
            Self::insert_seek(&mut tx, &placed).await?;
            tx.commit().await?;
            return Ok(placed);
        };
        let seated = &found.game;
        let game_id = seated.game.id;
        self.write_new_game(&mut tx, &seated.game, seated.events.clone(), &seated.update)
            .await?;
        for &(id, seat) in &found.seats {
            if id == placed.id {
                placed.status = "matched".to_owned();
                placed.game_id = Some(game_id);
                placed.seat = Some(seat);
            } else {
                Self::mark_matched(&mut tx, id, game_id, seat).await?;
            }
        }
        Self::insert_seek(&mut tx, &placed).await?;
        tx.commit().await?;
        self.announce_all(&[], Some(&found.game));
        Ok(placed)
    }

    async fn load_seek(&self, id: Uuid) -> Result<Option<SeekRecord>, StoreError> {
        let statement = format!("SELECT {SEEK_COLUMNS} FROM seeks WHERE id = $1");
        let row: Option<SeekRow> = sqlx::query_as(sqlx::AssertSqlSafe(statement))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(SeekRecord::from))
    }

    async fn waiting_seek(&self, account: &str) -> Result<Option<SeekRecord>, StoreError> {
        let statement =
            format!("SELECT {SEEK_COLUMNS} FROM seeks WHERE account = $1 AND status = 'waiting'");
        let row: Option<SeekRow> = sqlx::query_as(sqlx::AssertSqlSafe(statement))
            .bind(account)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(SeekRecord::from))
    }

    async fn close_seek(&self, id: Uuid, status: &'static str) -> Result<(), StoreError> {
        let closed =
            sqlx::query("UPDATE seeks SET status = $2 WHERE id = $1 AND status = 'waiting'")
                .bind(id)
                .bind(status)
                .execute(&self.pool)
                .await?;
        match DB::rows_affected(&closed) {
            1 => Ok(()),
            _ => Err(StoreError::Conflict),
        }
    }

    async fn seeks_due_for_bots(
        &self,
        now: Timestamp,
        limit: i64,
    ) -> Result<Vec<SeekRecord>, StoreError> {
        // The order of seeks_waiting_bots, read as it is; expired seeks are left out here.
        let now = now.to_string();
        let statement = format!(
            "SELECT {SEEK_COLUMNS} FROM seeks \
             WHERE status = 'waiting' AND bots_at IS NOT NULL AND bots_at <= $1 \
             ORDER BY bots_at LIMIT $2"
        );
        let rows: Vec<SeekRow> = sqlx::query_as(sqlx::AssertSqlSafe(statement))
            .bind(now.as_str())
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        let due = rows.into_iter().map(SeekRecord::from);
        Ok(due.filter(|seek| seek.expires_at > now).collect())
    }

    async fn fill_seek(
        &self,
        seek: &SeekRecord,
        seat: i32,
        game: SeatedGame,
    ) -> Result<(), StoreError> {
        let mut tx = DB::begin_write(&self.pool).await?;
        Self::lock_pool(&mut tx, &seek.pool).await?;
        self.write_new_game(&mut tx, &game.game, game.events.clone(), &game.update)
            .await?;
        Self::mark_matched(&mut tx, seek.id, game.game.id, seat).await?;
        tx.commit().await?;
        self.announce_all(&[], Some(&game));
        Ok(())
    }

    async fn expire_seeks(&self, now: Timestamp, limit: i64) -> Result<u64, StoreError> {
        let expired = sqlx::query(
            "UPDATE seeks SET status = 'expired' \
             WHERE id IN (SELECT id FROM seeks WHERE status = 'waiting' AND expires_at <= $1 \
                 LIMIT $2)",
        )
        .bind(now.to_string())
        .bind(limit)
        .execute(&self.pool)
        .await?;
        Ok(DB::rows_affected(&expired))
    }
}
