//! An account's webhook (v1.2): register it, read it, remove it, and read the log of its
//! delivery attempts.

use actix_web::web::{Bytes, Data, Query};
use actix_web::{HttpRequest, HttpResponse, delete, get, put};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::api::http::{bearer, parse_body, private, read_body};
use crate::api::limits::WriteAdmitted;
use crate::api::problem::{ApiError, Problem};
use crate::api::{AppState, docs};
use crate::service::accounts::webhooks::{
    RegisteredWebhook, Webhook, WebhookDeliveriesPage, WebhookRequest,
};

/// A webhook URL, as the examples show it.
const URL_EXAMPLE: &str = "https://example.org/golf-hook";

/// The query of `GET /v1/account/webhook/deliveries`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DeliveriesQuery {
    /// Attempts to show, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
}

/// Register the account's webhook (or replace it): its events are POSTed to `url`, signed as
/// Standard Webhooks sign them with the secret of the reply, which each registration renews.
#[utoipa::path(
    tag = "accounts",
    request_body(content = WebhookRequest, example = json!({"url": URL_EXAMPLE, "events": ["your_turn", "game_ended"]})),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The webhook and its new secret (shown here only)", body = RegisteredWebhook, example = json!({"url": URL_EXAMPLE, "events": ["game_ended", "your_turn"], "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwqL0BHfT3u6A="})),
        docs::Unauthorized,
        docs::BodyProblems,
        (status = 409, description = "database_busy: another write held the webhook past the lock timeout (nothing was applied)", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "invalid_webhook_url: not https on an allowed port at a public name or address (one refusal for every such reason, which says nothing of the network); out_of_range: an empty events", body = Problem, content_type = "application/problem+json"),
        docs::RateLimited,
        docs::DatabaseFailures,
    )
)]
#[put("/v1/account/webhook")]
pub async fn put_webhook(
    _: WriteAdmitted,
    state: Data<AppState>,
    request: HttpRequest,
    body: Result<Bytes, actix_web::Error>,
) -> Result<HttpResponse, ApiError> {
    let token = bearer(&request);
    // A bad token is reported before a bad body.
    state.services.accounts.account_of(token.as_deref()).await?;
    let parsed: WebhookRequest = parse_body(&read_body(body)?)?;
    let registered = state
        .services
        .accounts
        .put_webhook(token.as_deref(), parsed)
        .await?;
    Ok(private(HttpResponse::Ok()).json(registered))
}

/// The account's webhook and how its deliveries go.
#[utoipa::path(
    tag = "accounts",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The webhook", body = Webhook, example = json!({"url": URL_EXAMPLE, "events": null, "failing_since": null, "disabled": false})),
        docs::Unauthorized,
        (status = 404, description = "not_found: the account has no webhook", body = Problem, content_type = "application/problem+json"),
        docs::DatabaseFailures,
    )
)]
#[get("/v1/account/webhook")]
pub async fn get_webhook(
    state: Data<AppState>,
    request: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let webhook = state
        .services
        .accounts
        .webhook(bearer(&request).as_deref())
        .await?;
    Ok(private(HttpResponse::Ok()).json(webhook))
}

/// Remove the account's webhook, its pending deliveries and its log (204 also when it had none).
#[utoipa::path(
    tag = "accounts",
    security(("bearer" = [])),
    responses(
        (status = 204, description = "Removed: nothing more is delivered"),
        docs::Unauthorized,
        (status = 409, description = "database_busy: another write held the webhook past the lock timeout (nothing was applied)", body = Problem, content_type = "application/problem+json"),
        docs::DatabaseFailures,
    )
)]
#[delete("/v1/account/webhook")]
pub async fn delete_webhook(
    state: Data<AppState>,
    request: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    state
        .services
        .accounts
        .delete_webhook(bearer(&request).as_deref())
        .await?;
    Ok(private(HttpResponse::NoContent()).finish())
}

/// The last attempts to deliver the account's events, newest first (kept 30 days).
#[utoipa::path(
    tag = "accounts",
    params(DeliveriesQuery),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The last attempts", body = WebhookDeliveriesPage, example = json!({"deliveries": [
            {"event_id": 9, "attempt": 2, "at": "2026-05-01T12:00:05.120000Z", "status": 204, "error": null, "duration_ms": 48},
            {"event_id": 9, "attempt": 1, "at": "2026-05-01T12:00:00.003000Z", "status": 503, "error": "answered 503", "duration_ms": 31},
        ]})),
        (status = 400, description = "malformed_request: a parameter does not parse", body = Problem, content_type = "application/problem+json"),
        docs::Unauthorized,
        (status = 422, description = "out_of_range: a limit that is not 1 to 100", body = Problem, content_type = "application/problem+json"),
        docs::DatabaseFailures,
    )
)]
#[get("/v1/account/webhook/deliveries")]
pub async fn webhook_deliveries(
    state: Data<AppState>,
    request: HttpRequest,
    query: Query<DeliveriesQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = state
        .services
        .accounts
        .webhook_deliveries(bearer(&request).as_deref(), query.limit)
        .await?;
    Ok(private(HttpResponse::Ok()).json(page))
}
