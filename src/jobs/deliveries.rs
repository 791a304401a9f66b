//! The delivery of webhooks: a task in every instance that turns new account events into
//! deliveries, claims the deliveries due, makes each attempt and records it.
//!
//! Fair between accounts: up to [`IN_FLIGHT`] attempts run at once, each of a different account
//! (the store never claims a second delivery of an account with one in flight), and a free place
//! is filled as soon as an attempt ends. A receiver that takes its whole 5 s holds one place, not
//! the others' turns; one that failed every attempt for a day is disabled.
//!
//! Nothing of it is on the path of a move: the append stores the account event as before, and
//! this task finds it past the webhook's place in the events (`store::webhooks`). It sleeps on
//! the store's wake-up hub under the keys of the accounts with a webhook (the same wake-up as
//! their event streams, from any instance), and on a timer for the retries due and as a safety
//! net for a lost wake-up. Every instance runs it; the store's claims give each attempt to one.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::select_all;
use tokio::task::JoinSet;
use tokio::time::Instant;
use uuid::Uuid;

use crate::engine::Timestamp;
use crate::service::accounts::events::{AccountEvent, shown};
use crate::service::accounts::webhook_client::{DELIVERY_TIMEOUT, Delivery, Outcome};
use crate::service::{Clock, Services, Webhooks};
use crate::store::accounts::{ACCOUNT_EVENTS_TTL, NewAccountEvent, wake_key};
use crate::store::webhooks::{AttemptMade, AttemptRecord, ClaimedDelivery, NextStep};
use crate::store::{EventStore, StoreError, Subscription};

/// The longest sleep between two passes.
const POLL: Duration = Duration::from_secs(5);

/// Webhooks whose new events one pass enqueues at most (the rest wait for the next pass).
const HOOKS_PER_PASS: i64 = 100;

/// Attempts made at once, each of a different account.
const IN_FLIGHT: usize = 16;

/// How soon to look again for deliveries due that another instance's claim was taking.
const RECHECK: Duration = Duration::from_millis(250);

/// How long a webhook may fail every attempt before it is disabled.
const FAILING_FOR: Duration = Duration::from_secs(24 * 60 * 60);

/// How long a claim holds a delivery: an attempt and its record take well under it; a claim
/// lost with its instance is taken up again after it.
const LEASE: Duration = Duration::from_secs(DELIVERY_TIMEOUT.as_secs() + 10);

/// How often old attempts are purged from the log.
const PURGE_EVERY: Duration = Duration::from_secs(60 * 60);

/// The delivery job's reach: the store, the service's time, and how webhooks are delivered.
/// Cheap to clone: each attempt runs as a task of its own with a clone.
#[derive(Clone)]
pub struct Deliveries {
    store: Arc<dyn EventStore>,
    clock: Clock,
    webhooks: Arc<Webhooks>,
}

impl Deliveries {
    /// The deliveries of the webhooks that `services` registers.
    pub fn new(services: &Services) -> Self {
        Deliveries {
            store: Arc::clone(services.store()),
            clock: services.clock().clone(),
            webhooks: Arc::clone(services.accounts.webhooks()),
        }
    }

    fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// Delivers webhooks until the jobs stop: see the module's documentation. Each attempt is a
    /// task of its own, so that it runs (and its timeout and its claim hold) while this loop
    /// waits on the database; stopping the job aborts the attempts in flight, whose claims lapse
    /// for another instance or the next start.
    pub async fn run(self) {
        let mut listening: HashMap<String, Subscription> = HashMap::new();
        let mut next_purge = Instant::now();
        let mut in_flight = JoinSet::new();
        loop {
            if let Err(error) = self.listen_to_webhook_accounts(&mut listening).await {
                tracing::warn!(%error, "cannot read the accounts with a webhook");
            }
            if Instant::now() >= next_purge {
                next_purge = Instant::now() + PURGE_EVERY;
                self.purge_webhook_attempts().await;
            }
            let free = IN_FLIGHT - in_flight.len();
            let wait = match self.delivery_pass(free).await {
                Ok((claimed, lease, wait)) => {
                    for delivery in claimed {
                        let this = self.clone();
                        in_flight
                            .spawn(async move { this.attempt_delivery(delivery, lease).await });
                    }
                    wait
                }
                Err(error) => {
                    tracing::warn!(%error, "webhook deliveries failed to run");
                    POLL
                }
            };
            tokio::select! {
                Some(ended) = in_flight.join_next(), if !in_flight.is_empty() => {
                    match ended {
                        Ok(Ok(())) => {}
                        Ok(Err(error)) => {
                            tracing::warn!(%error, "a webhook attempt could not be recorded");
                        }
                        Err(error) => tracing::warn!(%error, "a webhook attempt failed to run"),
                    }
                }
                _ = any_change(&mut listening) => {}
                _ = self.webhooks.registered.notified() => {}
                _ = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// Subscribes to the events of every account with an enabled webhook, and drops the others.
    async fn listen_to_webhook_accounts(
        &self,
        listening: &mut HashMap<String, Subscription>,
    ) -> Result<(), StoreError> {
        let accounts = self.store.webhooks().webhook_accounts().await?;
        listening.retain(|account, _| accounts.binary_search(account).is_ok());
        for account in accounts {
            let key = wake_key(&account);
            listening
                .entry(account)
                .or_insert_with(|| self.store.changes().subscribe(key));
        }
        Ok(())
    }

    /// Enqueues the new events, then claims up to `free` deliveries due (under one lease);
    /// answers them and how long to sleep before looking again (at most [`POLL`]; the end of an
    /// attempt in flight wakes the loop sooner). The deliveries of accounts with an attempt in
    /// flight are not looked for, so a slow receiver's backlog costs no claims.
    async fn delivery_pass(
        &self,
        free: usize,
    ) -> Result<(Vec<ClaimedDelivery>, Uuid, Duration), StoreError> {
        let webhooks = self.store.webhooks();
        webhooks
            .enqueue_deliveries(self.now(), HOOKS_PER_PASS)
            .await?;
        let lease = Uuid::new_v4();
        let now = self.now();
        let due_now = |due: Option<Timestamp>| due.is_some_and(|due| due <= now);
        let mut claimed = Vec::new();
        if free > 0 && due_now(webhooks.next_delivery_due(now).await?) {
            let until = Timestamp(now.0 + LEASE.as_micros() as i64);
            claimed = webhooks
                .claim_deliveries(now, until, lease, free as i64)
                .await?;
        }
        let wait = match webhooks.next_delivery_due(now).await? {
            None => POLL,
            Some(due) if due > now => until(now, due).min(POLL),
            // Due, but another instance's claim holds them for a moment.
            Some(_) if claimed.len() < free => RECHECK,
            // More due than places: an attempt's end frees one.
            Some(_) => POLL,
        };
        Ok((claimed, lease, wait))
    }

    /// Makes one attempt of `delivery` and records it.
    async fn attempt_delivery(
        &self,
        delivery: ClaimedDelivery,
        lease: Uuid,
    ) -> Result<(), StoreError> {
        let started = self.now();
        let attempt = delivery.attempts + 1;
        let outcome = match &delivery.event {
            Some(event) => {
                let body = shown(event).to_string();
                let id = format!("evt_{}_{}", delivery.account, delivery.event_id);
                let sent = Delivery {
                    url: &delivery.url,
                    secret: &delivery.secret,
                    id: &id,
                    timestamp: started.0.div_euclid(1_000_000),
                    body: &body,
                };
                self.webhooks.client.deliver(&sent).await
            }
            None => Outcome {
                status: None,
                error: Some("the event was purged before it could be delivered".to_owned()),
                duration: Duration::ZERO,
            },
        };
        let (next, notice) = self.after_attempt(&delivery, &outcome, started);
        let made = AttemptMade {
            account: delivery.account,
            lease,
            acknowledged: outcome.acknowledged(),
            next,
            notice,
            record: AttemptRecord {
                event_id: delivery.event_id,
                attempt,
                at: started.to_string(),
                status: outcome.status.map(i32::from),
                error: outcome.error,
                duration_ms: i64::try_from(outcome.duration.as_millis()).unwrap_or(i64::MAX),
            },
        };
        if !self.store.webhooks().record_attempt(&made).await? {
            tracing::info!(
                event_id = made.record.event_id,
                "a webhook attempt outlived its claim: another attempt's record stands"
            );
        }
        Ok(())
    }

    /// What follows `outcome`, the attempt of `delivery` started at `started`: the next step, and
    /// the account event that tells of a webhook disabled (by a 410, or by failing every attempt
    /// for [`FAILING_FOR`]).
    fn after_attempt(
        &self,
        delivery: &ClaimedDelivery,
        outcome: &Outcome,
        started: Timestamp,
    ) -> (NextStep, Option<NewAccountEvent>) {
        let failing_since = match outcome.acknowledged() {
            true => None,
            false => Some(
                delivery
                    .failing_since
                    .clone()
                    .unwrap_or(started.to_string()),
            ),
        };
        let (attempt, purged) = (delivery.attempts + 1, delivery.event.is_none());
        // A delivery's first failure gets its retry: a webhook idle since an old failure is
        // not "failing for a day" until it fails again.
        let next = match failing_since.as_deref() {
            Some(since) if attempt > 1 && !purged && self.failing_too_long(since) => {
                NextStep::Disable
            }
            _ => self.next_step(attempt, outcome, purged),
        };
        let notice = (next == NextStep::Disable).then(|| {
            let reason = match outcome.status {
                Some(410) => "gone",
                _ => "failing",
            };
            let disabled = AccountEvent::WebhookDisabled {
                reason: reason.to_owned(),
                failing_since,
            };
            disabled.for_account(&delivery.account, self.now())
        });
        (next, notice)
    }

    /// Whether a webhook failing every attempt since `since` has failed for [`FAILING_FOR`].
    fn failing_too_long(&self, since: &str) -> bool {
        Timestamp::parse(since).is_ok_and(|since| {
            let failing = self.now().0.saturating_sub(since.0);
            failing >= FAILING_FOR.as_micros() as i64
        })
    }

    /// What follows attempt number `attempt` of a webhook not failing for too long: the retries
    /// of the schedule, then giving up (a 410 disables it).
    fn next_step(&self, attempt: i32, outcome: &Outcome, purged: bool) -> NextStep {
        if outcome.acknowledged() || purged {
            return NextStep::Finished;
        }
        if outcome.status == Some(410) {
            return NextStep::Disable;
        }
        let retried = usize::try_from(attempt - 1).unwrap_or(usize::MAX);
        match self.webhooks.retry_delays.get(retried) {
            Some(delay) => NextStep::RetryAt(Timestamp(
                self.now().0.saturating_add(delay.as_micros() as i64),
            )),
            None => NextStep::Finished,
        }
    }

    /// Deletes the attempts older than the account events they delivered.
    async fn purge_webhook_attempts(&self) {
        let before = Timestamp(self.now().0 - ACCOUNT_EVENTS_TTL.as_micros() as i64);
        match self.store.webhooks().purge_webhook_attempts(before).await {
            Ok(purged) => tracing::debug!(purged, "old webhook attempts deleted"),
            Err(error) => tracing::warn!(%error, "could not delete old webhook attempts"),
        }
    }
}

/// How long from `now` until `due`.
fn until(now: Timestamp, due: Timestamp) -> Duration {
    Duration::from_micros(u64::try_from(due.0 - now.0).unwrap_or(0))
}

/// Resolves when an event of one of the accounts listened to is stored (never without any).
async fn any_change(listening: &mut HashMap<String, Subscription>) {
    if listening.is_empty() {
        return std::future::pending().await;
    }
    let changes = listening
        .values_mut()
        .map(|subscription| Box::pin(subscription.changed()));
    select_all(changes).await;
}
