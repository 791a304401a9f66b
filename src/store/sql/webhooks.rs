//! [`WebhookStore`] on both backends. The statements read the same in both dialects but for the
//! two reads that claim rows ([`WebhookStatements`]): PostgreSQL skips the rows another
//! instance holds (`FOR UPDATE SKIP LOCKED`), SQLite's write lock holds the whole database. On a
//! distributed PostgreSQL (Citus), which takes no row lock across shards, the passes of every
//! instance take turns under one advisory lock instead.

use async_trait::async_trait;
use sqlx::types::Json;
use sqlx::{Executor, FromRow};
use uuid::Uuid;

use super::{Backend, Bind, SqlStore};
use crate::engine::Timestamp;
use crate::store::accounts::{NewAccountEvent, wake_key};
use crate::store::webhooks::{
    AttemptMade, AttemptRecord, ClaimedDelivery, NextStep, WebhookRecord, WebhookStore,
};
use crate::store::{AccountEventRecord, StoreError};

/// The statements on webhooks whose text differs between the dialects.
pub struct WebhookStatements {
    /// Up to `$1` enabled webhooks with events past their place ([`PendingHook`]), taken for
    /// the transaction.
    pub hooks_behind: &'static str,
    /// Up to `$2` deliveries due at `$1` ([`DeliveryRow`]), earliest first, taken for the
    /// transaction.
    pub due_deliveries: &'static str,
    /// [`WebhookStatements::hooks_behind`] without its row locks, which Citus cannot take
    /// across shards: on a distributed database the passes of every instance take turns under
    /// [`Backend::KEY_LOCK`] instead.
    pub hooks_behind_unlocked: &'static str,
    /// [`WebhookStatements::due_deliveries`] without its row locks (see
    /// [`WebhookStatements::hooks_behind_unlocked`]).
    pub due_deliveries_unlocked: &'static str,
}

/// [`WebhookStatements::hooks_behind`] without its row locks: the same text in both dialects.
macro_rules! hooks_behind {
    () => {
        "\
            SELECT w.account, w.enqueued_to, w.events, a.last_event_id \
            FROM webhooks AS w JOIN accounts AS a ON a.username = w.account \
            WHERE NOT w.disabled AND a.last_event_id > w.enqueued_to \
            ORDER BY w.account LIMIT $1"
    };
}

/// [`WebhookStatements::due_deliveries`] without its row locks: the same text in both dialects.
macro_rules! due_deliveries {
    () => {
        "\
            SELECT d.account, d.event_id, d.attempts, w.url, w.secret, w.failing_since, e.at, \
                e.type, e.game_id, e.data \
            FROM webhook_deliveries AS d JOIN webhooks AS w ON w.account = d.account \
                LEFT JOIN account_events AS e ON e.account = d.account AND e.id = d.event_id \
            WHERE d.due_at <= $1 \
                AND d.event_id = (SELECT min(o.event_id) FROM webhook_deliveries AS o \
                                  WHERE o.account = d.account AND o.due_at <= $1) \
                AND NOT EXISTS (SELECT 1 FROM webhook_deliveries AS f \
                                WHERE f.account = d.account AND f.lease IS NOT NULL \
                                    AND f.due_at > $1) \
            ORDER BY d.due_at LIMIT $2"
    };
}

pub(crate) use due_deliveries;
pub(crate) use hooks_behind;

/// The key that the webhook passes of every instance take turns on, on a distributed database.
const PASSES_KEY: &str = "webhook passes";

/// Events read per webhook by one pass of [`WebhookStore::enqueue_deliveries`].
const EVENTS_PER_PASS: i64 = 500;

#[derive(FromRow)]
pub struct PendingHook {
    account: String,
    enqueued_to: i64,
    events: Option<String>,
    last_event_id: i64,
}

#[derive(FromRow)]
pub struct DeliveryRow {
    account: String,
    event_id: i64,
    attempts: i32,
    url: String,
    secret: String,
    failing_since: Option<String>,
    at: Option<String>,
    #[sqlx(rename = "type")]
    kind: Option<String>,
    game_id: Option<Uuid>,
    data: Option<Json<serde_json::Value>>,
}

#[derive(FromRow)]
pub struct WebhookRow {
    url: String,
    events: Option<String>,
    secret: String,
    failing_since: Option<String>,
    disabled: bool,
}

#[derive(FromRow)]
pub struct AttemptRow {
    event_id: i64,
    attempt: i32,
    at: String,
    status: Option<i32>,
    error: Option<String>,
    duration_ms: i64,
}

/// The event types a filter stored as JSON text takes (`None`: every type).
fn parse_filter(events: Option<&str>) -> Result<Option<Vec<String>>, StoreError> {
    events
        .map(serde_json::from_str)
        .transpose()
        .map_err(|e| StoreError::Corrupt(format!("a webhook's events: {e}")))
}

impl From<DeliveryRow> for ClaimedDelivery {
    fn from(row: DeliveryRow) -> Self {
        // The event's columns are all null when it is gone (purged); `game_id` is also null for
        // the events of a challenge, which has no game yet.
        let event = match (row.at, row.kind, row.data) {
            (Some(at), Some(kind), Some(data)) => Some(AccountEventRecord {
                id: row.event_id,
                at,
                kind,
                game_id: row.game_id,
                data: data.0,
            }),
            _ => None,
        };
        ClaimedDelivery {
            account: row.account,
            event_id: row.event_id,
            attempts: row.attempts,
            url: row.url,
            secret: row.secret,
            failing_since: row.failing_since,
            event,
        }
    }
}

impl From<AttemptRow> for AttemptRecord {
    fn from(row: AttemptRow) -> Self {
        AttemptRecord {
            event_id: row.event_id,
            attempt: row.attempt,
            at: row.at,
            status: row.status,
            error: row.error,
            duration_ms: row.duration_ms,
        }
    }
}

#[async_trait]
impl<DB> WebhookStore for SqlStore<DB>
where
    DB: Backend,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    String: Bind<DB>,
    Option<String>: Bind<DB>,
    Option<i32>: Bind<DB>,
    for<'a> &'a str: Bind<DB>,
    i32: Bind<DB>,
    i64: Bind<DB>,
    Uuid: Bind<DB>,
    Option<Uuid>: Bind<DB>,
    for<'a> Json<&'a serde_json::Value>: Bind<DB>,
    for<'r> PendingHook: FromRow<'r, DB::Row>,
    for<'r> DeliveryRow: FromRow<'r, DB::Row>,
    for<'r> WebhookRow: FromRow<'r, DB::Row>,
    for<'r> AttemptRow: FromRow<'r, DB::Row>,
    for<'r> (i64, String): FromRow<'r, DB::Row>,
    for<'r> (String,): FromRow<'r, DB::Row>,
    for<'r> (Option<String>,): FromRow<'r, DB::Row>,
    for<'r> (i64,): FromRow<'r, DB::Row>,
{
    async fn put_webhook(
        &self,
        account: &str,
        url: &str,
        events: Option<&[String]>,
        secret: &str,
    ) -> Result<(), StoreError> {
        let events = events
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| StoreError::Internal(e.to_string()))?;
        // A webhook registered again after a 410 starts afresh, as a new one does.
        sqlx::query(
            "INSERT INTO webhooks (account, url, events, secret, enqueued_to, failing_since, \
                 disabled) \
             SELECT $1, $2, $3, $4, last_event_id, NULL, false FROM accounts WHERE username = $1 \
             ON CONFLICT (account) DO UPDATE SET url = excluded.url, events = excluded.events, \
                 secret = excluded.secret, failing_since = NULL, disabled = false, \
                 enqueued_to = CASE WHEN webhooks.disabled THEN excluded.enqueued_to \
                     ELSE webhooks.enqueued_to END",
        )
        .bind(account)
        .bind(url)
        .bind(events)
        .bind(secret)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn webhook(&self, account: &str) -> Result<Option<WebhookRecord>, StoreError> {
        let row: Option<WebhookRow> = sqlx::query_as(
            "SELECT url, events, secret, failing_since, disabled FROM webhooks \
             WHERE account = $1",
        )
        .bind(account)
        .fetch_optional(&self.pool)
        .await?;
        row.map(|row| {
            Ok(WebhookRecord {
                events: parse_filter(row.events.as_deref())?,
                url: row.url,
                secret: row.secret,
                failing_since: row.failing_since,
                disabled: row.disabled,
            })
        })
        .transpose()
    }

    async fn delete_webhook(&self, account: &str) -> Result<bool, StoreError> {
        let mut tx = DB::begin_write(&self.pool).await?;
        for statement in [
            "DELETE FROM webhook_attempts WHERE account = $1",
            "DELETE FROM webhook_deliveries WHERE account = $1",
        ] {
            sqlx::query(statement)
                .bind(account)
                .execute(&mut *tx)
                .await?;
        }
        let deleted = sqlx::query("DELETE FROM webhooks WHERE account = $1")
            .bind(account)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(DB::rows_affected(&deleted) == 1)
    }

    async fn webhook_attempts(
        &self,
        account: &str,
        limit: i64,
    ) -> Result<Vec<AttemptRecord>, StoreError> {
        let rows: Vec<AttemptRow> = sqlx::query_as(
            "SELECT event_id, attempt, at, status, error, duration_ms FROM webhook_attempts \
             WHERE account = $1 ORDER BY at DESC, event_id DESC, attempt DESC LIMIT $2",
        )
        .bind(account)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(AttemptRecord::from).collect())
    }

    async fn webhook_accounts(&self) -> Result<Vec<String>, StoreError> {
        let rows: Vec<(String,)> =
            sqlx::query_as("SELECT account FROM webhooks WHERE NOT disabled ORDER BY account")
                .fetch_all(&self.pool)
                .await?;
        Ok(rows.into_iter().map(|(account,)| account).collect())
    }

    async fn enqueue_deliveries(&self, now: Timestamp, limit: i64) -> Result<u64, StoreError> {
        // A read first: most passes find nothing new, and need not take SQLite's write lock
        // (or a transaction) to learn it.
        let behind: Option<(i64,)> = sqlx::query_as(
            "SELECT a.last_event_id FROM webhooks AS w JOIN accounts AS a \
                 ON a.username = w.account \
             WHERE NOT w.disabled AND a.last_event_id > w.enqueued_to LIMIT 1",
        )
        .fetch_optional(&self.pool)
        .await?;
        if behind.is_none() {
            return Ok(0);
        }
        let mut tx = DB::begin_write(&self.pool).await?;
        let statements = &DB::WEBHOOK_STATEMENTS;
        let statement = match self.take_turns(&mut tx).await? {
            true => statements.hooks_behind_unlocked,
            false => statements.hooks_behind,
        };
        let hooks: Vec<PendingHook> = sqlx::query_as(statement)
            .bind(limit)
            .fetch_all(&mut *tx)
            .await?;
        let due = now.to_string();
        let mut enqueued = 0;
        for hook in hooks {
            enqueued += Self::enqueue_for(&mut tx, &hook, &due).await?;
        }
        tx.commit().await?;
        Ok(enqueued)
    }

    async fn claim_deliveries(
        &self,
        now: Timestamp,
        until: Timestamp,
        lease: Uuid,
        limit: i64,
    ) -> Result<Vec<ClaimedDelivery>, StoreError> {
        let mut tx = DB::begin_write(&self.pool).await?;
        let statements = &DB::WEBHOOK_STATEMENTS;
        let statement = match self.take_turns(&mut tx).await? {
            true => statements.due_deliveries_unlocked,
            false => statements.due_deliveries,
        };
        let rows: Vec<DeliveryRow> = sqlx::query_as(statement)
            .bind(now.to_string())
            .bind(limit)
            .fetch_all(&mut *tx)
            .await?;
        for row in &rows {
            sqlx::query(
                "UPDATE webhook_deliveries SET due_at = $3, lease = $4 \
                 WHERE account = $1 AND event_id = $2",
            )
            .bind(&row.account)
            .bind(row.event_id)
            .bind(until.to_string())
            .bind(lease)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(rows.into_iter().map(ClaimedDelivery::from).collect())
    }

    async fn record_attempt(&self, attempt: &AttemptMade) -> Result<bool, StoreError> {
        let (account, record) = (&attempt.account, &attempt.record);
        let mut tx = DB::begin_write(&self.pool).await?;
        let held = match attempt.next {
            NextStep::RetryAt(due) => sqlx::query(
                "UPDATE webhook_deliveries SET attempts = $3, due_at = $4, lease = NULL \
                 WHERE account = $1 AND event_id = $2 AND lease = $5",
            )
            .bind(account)
            .bind(record.event_id)
            .bind(record.attempt)
            .bind(due.to_string())
            .bind(attempt.lease),
            NextStep::Finished | NextStep::Disable => sqlx::query(
                "DELETE FROM webhook_deliveries \
                 WHERE account = $1 AND event_id = $2 AND lease = $3",
            )
            .bind(account)
            .bind(record.event_id)
            .bind(attempt.lease),
        }
        .execute(&mut *tx)
        .await?;
        if DB::rows_affected(&held) == 0 {
            // Another attempt took the delivery up: its record stands, not this one.
            return Ok(false);
        }
        sqlx::query(
            "INSERT INTO webhook_attempts (account, event_id, attempt, at, status, error, \
                 duration_ms) VALUES ($1, $2, $3, $4, $5, $6, $7) \
             ON CONFLICT (account, event_id, attempt) DO NOTHING",
        )
        .bind(account)
        .bind(record.event_id)
        .bind(record.attempt)
        .bind(&record.at)
        .bind(record.status)
        .bind(record.error.clone())
        .bind(record.duration_ms)
        .execute(&mut *tx)
        .await?;
        Self::record_health(&mut tx, attempt).await?;
        let notices: Vec<NewAccountEvent> = attempt.notice.iter().cloned().collect();
        Self::insert_notices(&mut tx, &notices, None).await?;
        tx.commit().await?;
        for notice in &notices {
            self.announce(wake_key(&notice.account));
        }
        Ok(true)
    }

    async fn next_delivery_due(&self, now: Timestamp) -> Result<Option<Timestamp>, StoreError> {
        let (due,): (Option<String>,) = sqlx::query_as(
            "SELECT min(d.due_at) FROM webhook_deliveries AS d \
             WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries AS f \
                               WHERE f.account = d.account AND f.lease IS NOT NULL \
                                   AND f.due_at > $1 AND f.event_id <> d.event_id)",
        )
        .bind(now.to_string())
        .fetch_one(&self.pool)
        .await?;
        due.map(|due| Timestamp::parse(&due))
            .transpose()
            .map_err(|e| StoreError::Corrupt(e.to_string()))
    }

    async fn purge_webhook_attempts(&self, before: Timestamp) -> Result<u64, StoreError> {
        let purged = sqlx::query("DELETE FROM webhook_attempts WHERE at < $1")
            .bind(before.to_string())
            .execute(&self.pool)
            .await?;
        Ok(DB::rows_affected(&purged))
    }
}

impl<DB> SqlStore<DB>
where
    DB: Backend,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'a> &'a str: Bind<DB>,
    i64: Bind<DB>,
    for<'r> (i64, String): FromRow<'r, DB::Row>,
{
    /// On a distributed database, waits for the other instances' webhook passes to end and holds
    /// the turn until `tx` ends; answers whether it did (else the row locks take turns).
    async fn take_turns(
        &self,
        tx: &mut sqlx::Transaction<'static, DB>,
    ) -> Result<bool, StoreError> {
        match DB::KEY_LOCK {
            Some(lock) if self.distributed.is_some() => {
                sqlx::query(lock)
                    .bind(PASSES_KEY)
                    .execute(&mut **tx)
                    .await?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Turns `hook`'s events past its place into deliveries due at `due`, and moves its place;
    /// answers how many deliveries it made.
    async fn enqueue_for(
        tx: &mut sqlx::Transaction<'static, DB>,
        hook: &PendingHook,
        due: &str,
    ) -> Result<u64, StoreError> {
        let mut enqueued = 0;
        let filter = parse_filter(hook.events.as_deref())?;
        // Bounded by the last id read with the webhook: a later event is the next pass's.
        let events: Vec<(i64, String)> = sqlx::query_as(
            "SELECT id, type FROM account_events \
             WHERE account = $1 AND id > $2 AND id <= $3 ORDER BY id LIMIT $4",
        )
        .bind(hook.account.as_str())
        .bind(hook.enqueued_to)
        .bind(hook.last_event_id)
        .bind(EVENTS_PER_PASS)
        .fetch_all(&mut **tx)
        .await?;
        let reached = match events.last() {
            Some((id, _)) if events.len() as i64 == EVENTS_PER_PASS => *id,
            // Every event up to the last id was read (or purged).
            _ => hook.last_event_id,
        };
        let wanted = events.iter().filter(|(_, kind)| {
            filter
                .as_ref()
                .is_none_or(|types| types.iter().any(|t| t == kind))
        });
        for (id, _) in wanted {
            let inserted = sqlx::query(
                "INSERT INTO webhook_deliveries (account, event_id, attempts, due_at) \
                 VALUES ($1, $2, 0, $3) ON CONFLICT (account, event_id) DO NOTHING",
            )
            .bind(hook.account.as_str())
            .bind(*id)
            .bind(due)
            .execute(&mut **tx)
            .await?;
            enqueued += DB::rows_affected(&inserted);
        }
        sqlx::query("UPDATE webhooks SET enqueued_to = $2 WHERE account = $1")
            .bind(hook.account.as_str())
            .bind(reached)
            .execute(&mut **tx)
            .await?;
        Ok(enqueued)
    }

    /// What an attempt says of its webhook: working again, failing since when, or disabled by
    /// a 410 (its other deliveries dropped).
    async fn record_health(
        tx: &mut sqlx::Transaction<'static, DB>,
        attempt: &AttemptMade,
    ) -> Result<(), StoreError> {
        let account = attempt.account.as_str();
        let health = match (attempt.acknowledged, attempt.next) {
            (true, _) => "UPDATE webhooks SET failing_since = NULL WHERE account = $1",
            (false, NextStep::Disable) => {
                "UPDATE webhooks SET disabled = true, \
                     failing_since = COALESCE(failing_since, $2) WHERE account = $1"
            }
            (false, _) => {
                "UPDATE webhooks SET failing_since = COALESCE(failing_since, $2) \
                 WHERE account = $1"
            }
        };
        let query = sqlx::query(health).bind(account);
        let query = match attempt.acknowledged {
            true => query,
            false => query.bind(attempt.record.at.as_str()),
        };
        query.execute(&mut **tx).await?;
        if attempt.next == NextStep::Disable {
            sqlx::query("DELETE FROM webhook_deliveries WHERE account = $1")
                .bind(account)
                .execute(&mut **tx)
                .await?;
        }
        Ok(())
    }
}
