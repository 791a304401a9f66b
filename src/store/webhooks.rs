//! Webhooks (v1.2): the [`WebhookStore`] trait and its data types. An account's webhook, the
//! deliveries of its events waiting for an attempt, and the log of attempts. The store decides
//! nothing: the schedule of retries, the signatures and the address checks live in
//! `service::webhooks` and `service::webhook_client`.
//!
//! Deliveries are made from `account_events`, never by the append that stores an event: each
//! webhook remembers the last event enqueued, so an event stored just before a crash is enqueued
//! by whichever instance runs next, and a move costs what it did.

use async_trait::async_trait;
use uuid::Uuid;

use super::{AccountEventRecord, NewAccountEvent, StoreError};
use crate::engine::Timestamp;

/// An account's webhook as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookRecord {
    pub url: String,
    /// The event types to deliver; `None` for every type.
    pub events: Option<Vec<String>>,
    /// `whsec_` and the base64 of the key.
    pub secret: String,
    /// When the first attempt failed since the last that succeeded (store's RFC 3339 text).
    pub failing_since: Option<String>,
    /// Set by a 410: nothing is delivered until the webhook is registered again.
    pub disabled: bool,
}

/// A delivery claimed for one attempt, with what the attempt needs.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimedDelivery {
    pub account: String,
    pub event_id: i64,
    /// Attempts made before this one.
    pub attempts: i32,
    pub url: String,
    pub secret: String,
    /// Since when every attempt of the webhook has failed, if they have.
    pub failing_since: Option<String>,
    /// The event, unless it was purged meanwhile (then the delivery is dropped).
    pub event: Option<AccountEventRecord>,
}

/// One attempt as the log keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptRecord {
    pub event_id: i64,
    /// 1 for the first attempt of an event.
    pub attempt: i32,
    /// When it started (store's RFC 3339 text).
    pub at: String,
    /// The HTTP status answered, if any came.
    pub status: Option<i32>,
    /// Why it failed without a status, or with one that is not 2xx.
    pub error: Option<String>,
    pub duration_ms: i64,
}

/// What becomes of a delivery after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextStep {
    /// Acknowledged, or given up: the delivery is removed.
    Finished,
    /// Tried again at this time.
    RetryAt(Timestamp),
    /// The receiver answered 410, or failed every attempt for a day: the webhook is disabled,
    /// its deliveries dropped, and the account told.
    Disable,
}

/// An attempt made under a claim, to record.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptMade {
    pub account: String,
    /// The claim it was made under: recorded only if the delivery still carries it.
    pub lease: Uuid,
    pub record: AttemptRecord,
    /// A 2xx came back.
    pub acknowledged: bool,
    pub next: NextStep,
    /// The account event that tells of it, stored with it (when it disables the webhook).
    pub notice: Option<NewAccountEvent>,
}

/// The webhooks' tables. Every call is one transaction.
#[async_trait]
pub trait WebhookStore: Send + Sync {
    /// Registers (or replaces) `account`'s webhook, enabled, starting after the account's last
    /// event; a replaced webhook that was enabled keeps its place in the events.
    async fn put_webhook(
        &self,
        account: &str,
        url: &str,
        events: Option<&[String]>,
        secret: &str,
    ) -> Result<(), StoreError>;

    /// `account`'s webhook, if it has one.
    async fn webhook(&self, account: &str) -> Result<Option<WebhookRecord>, StoreError>;

    /// Removes `account`'s webhook, its pending deliveries and its log; whether it had one.
    async fn delete_webhook(&self, account: &str) -> Result<bool, StoreError>;

    /// The last `limit` attempts of `account`'s deliveries, newest first.
    async fn webhook_attempts(
        &self,
        account: &str,
        limit: i64,
    ) -> Result<Vec<AttemptRecord>, StoreError>;

    /// The accounts with an enabled webhook: whose events the delivery worker listens for.
    async fn webhook_accounts(&self) -> Result<Vec<String>, StoreError>;

    /// Turns the events stored past each enabled webhook's place into deliveries due at `now`
    /// (those its filter takes), for up to `limit` webhooks, and moves their places, in one
    /// transaction; a webhook another instance is enqueuing for is skipped. Returns the number
    /// of deliveries made.
    async fn enqueue_deliveries(&self, now: Timestamp, limit: i64) -> Result<u64, StoreError>;

    /// Claims up to `limit` deliveries due at `now`, earliest first, under `lease` until
    /// `until`: no other claim takes them before then. At most one per account (its earliest
    /// due), and none of an account with a delivery in flight (claimed, its lease not over), so
    /// that one account's slow receiver holds one place only. A claim whose instance dies is
    /// taken up again once `until` passes.
    async fn claim_deliveries(
        &self,
        now: Timestamp,
        until: Timestamp,
        lease: Uuid,
        limit: i64,
    ) -> Result<Vec<ClaimedDelivery>, StoreError>;

    /// Records an attempt and what follows it, if the delivery still carries its lease (a
    /// claim that outlived its lease was taken up by another attempt): whether it did.
    async fn record_attempt(&self, attempt: &AttemptMade) -> Result<bool, StoreError>;

    /// When the earliest delivery of an account with none in flight at `now` is due, if any
    /// waits (a delivery in flight counts as due when its claim ends).
    async fn next_delivery_due(&self, now: Timestamp) -> Result<Option<Timestamp>, StoreError>;

    /// Deletes attempts made before `before`; returns how many.
    async fn purge_webhook_attempts(&self, before: Timestamp) -> Result<u64, StoreError>;
}
