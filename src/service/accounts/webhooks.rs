//! An account's webhook as its holder manages it: registering one (the URL checked by the
//! address guard, a fresh secret each time), reading it, removing it, and reading the log of
//! delivery attempts. The deliveries themselves are `crate::jobs::deliveries`'s.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::Notify;
use utoipa::ToSchema;

use crate::service::accounts::events::AccountEventType;
use crate::service::accounts::webhook_client::{
    AddressGuard, SharedResolver, SystemResolver, WebhookClient, new_secret,
};
use crate::service::paging::check_limit;
use crate::service::{Accounts, ServiceError};
use crate::store::webhooks::AttemptRecord;

/// How this instance delivers webhooks: the client behind the address guard, and the waits
/// before each retry.
pub struct Webhooks {
    pub(crate) client: WebhookClient,
    pub(crate) retry_delays: Vec<Duration>,
    /// Wakes the delivery worker when a webhook is registered here, so that it listens for the
    /// account's events at once.
    pub(crate) registered: Notify,
}

impl Webhooks {
    /// Deliveries through `resolver`, to the URLs `guard` allows.
    pub fn new(resolver: SharedResolver, guard: AddressGuard, retry_delays: Vec<Duration>) -> Self {
        Webhooks {
            client: WebhookClient::new(resolver, guard),
            retry_delays,
            registered: Notify::new(),
        }
    }
}

impl Default for Webhooks {
    /// The system's resolver, public https on port 443 only, no retry.
    fn default() -> Self {
        Webhooks::new(
            Arc::new(SystemResolver),
            AddressGuard::default(),
            Vec::new(),
        )
    }
}

/// `PUT /v1/account/webhook`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"url": "https://example.org/golf-hook", "events": ["your_turn", "game_ended"]}))]
pub struct WebhookRequest {
    /// Where events are POSTed: `https`, resolving only to public addresses.
    #[schema(max_length = 2048)]
    pub url: String,
    /// The event types to deliver (at least one); every type when absent or null.
    #[serde(default)]
    pub events: Option<Vec<AccountEventType>>,
}

/// The webhook registered, with its new secret (shown on each registration only).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RegisteredWebhook {
    pub url: String,
    /// The event types delivered; null for every type.
    pub events: Option<Vec<String>>,
    /// `whsec_` and the base64 of 32 random bytes: the key of the `webhook-signature`s.
    pub secret: String,
}

/// An account's webhook.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Webhook {
    pub url: String,
    /// The event types delivered; null for every type.
    pub events: Option<Vec<String>>,
    /// When the first attempt failed since the last one that succeeded; null while it works.
    pub failing_since: Option<String>,
    /// Set when the receiver answered 410: nothing is delivered until the webhook is
    /// registered again.
    pub disabled: bool,
}

/// One attempt to deliver an event.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WebhookDelivery {
    /// The account event delivered (its `webhook-id` is the same on every attempt).
    pub event_id: i64,
    /// 1 for the first attempt of the event.
    pub attempt: i32,
    /// When the attempt started.
    pub at: String,
    /// The status answered, null when none came.
    pub status: Option<i32>,
    /// Why it failed (no answer, a refused address, a status that is not 2xx); null if it
    /// was acknowledged.
    pub error: Option<String>,
    pub duration_ms: i64,
}

/// The last attempts, newest first.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WebhookDeliveriesPage {
    pub deliveries: Vec<WebhookDelivery>,
}

impl From<AttemptRecord> for WebhookDelivery {
    fn from(record: AttemptRecord) -> Self {
        WebhookDelivery {
            event_id: record.event_id,
            attempt: record.attempt,
            at: record.at,
            status: record.status,
            error: record.error,
            duration_ms: record.duration_ms,
        }
    }
}

/// The names of a filter, sorted and each once.
fn filter_names(
    events: Option<Vec<AccountEventType>>,
) -> Result<Option<Vec<String>>, ServiceError> {
    let Some(mut events) = events else {
        return Ok(None);
    };
    if events.is_empty() {
        return Err(ServiceError::OutOfRange(
            "events names no type: leave it out to receive every type.".to_owned(),
        ));
    }
    events.sort();
    events.dedup();
    Ok(Some(
        events.iter().map(|kind| kind.name().to_owned()).collect(),
    ))
}

impl Accounts {
    /// Registers (or replaces) the webhook of `token`'s account, with a fresh secret.
    pub async fn put_webhook(
        &self,
        token: Option<&str>,
        request: WebhookRequest,
    ) -> Result<RegisteredWebhook, ServiceError> {
        let account = self.account_of(token).await?;
        let events = filter_names(request.events)?;
        let url = self
            .webhooks
            .client
            .check_url(&request.url)
            .await
            .map_err(|refused| ServiceError::InvalidWebhookUrl(refused.0))?;
        let secret = new_secret();
        self.store
            .webhooks()
            .put_webhook(&account.username, url.as_str(), events.as_deref(), &secret)
            .await?;
        self.webhooks.registered.notify_one();
        Ok(RegisteredWebhook {
            url: url.into(),
            events,
            secret,
        })
    }

    /// The webhook of `token`'s account; `not_found` without one.
    pub async fn webhook(&self, token: Option<&str>) -> Result<Webhook, ServiceError> {
        let account = self.account_of(token).await?;
        let record = self
            .store
            .webhooks()
            .webhook(&account.username)
            .await?
            .ok_or(ServiceError::NotFound("This account has no webhook."))?;
        Ok(Webhook {
            url: record.url,
            events: record.events,
            failing_since: record.failing_since,
            disabled: record.disabled,
        })
    }

    /// Removes the webhook of `token`'s account, with its pending deliveries and its log (done
    /// already if it had none).
    pub async fn delete_webhook(&self, token: Option<&str>) -> Result<(), ServiceError> {
        let account = self.account_of(token).await?;
        self.store
            .webhooks()
            .delete_webhook(&account.username)
            .await?;
        Ok(())
    }

    /// The last `limit` (1 to 100, default 20) delivery attempts of `token`'s account.
    pub async fn webhook_deliveries(
        &self,
        token: Option<&str>,
        limit: Option<i64>,
    ) -> Result<WebhookDeliveriesPage, ServiceError> {
        let account = self.account_of(token).await?;
        let limit = check_limit(limit, 20, 100)?;
        let attempts = self
            .store
            .webhooks()
            .webhook_attempts(&account.username, limit)
            .await?;
        Ok(WebhookDeliveriesPage {
            deliveries: attempts.into_iter().map(WebhookDelivery::from).collect(),
        })
    }
}
