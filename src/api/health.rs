//! Operational endpoints: liveness, readiness and metrics.

use actix_web::web::Data;
use actix_web::{HttpResponse, get};
use serde::Serialize;
use utoipa::ToSchema;

use crate::api::problem::ApiError;
use crate::api::{AppState, docs};
use crate::metrics::Metrics;

/// The body of the health endpoints.
#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    /// `ok` for liveness, `ready` for readiness.
    #[schema(example = "ok")]
    pub status: &'static str,
}

/// Liveness: answers while the process runs.
#[utoipa::path(tag = "operations", responses((status = 200, description = "The process runs", body = Health, example = json!({"status": "ok"}))))]
#[get("/healthz")]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(Health { status: "ok" })
}

/// Readiness: answers 200 when the database answers, 503 when it does not.
#[utoipa::path(
    tag = "operations",
    responses(
        (status = 200, description = "The database answers", body = Health, example = json!({"status": "ready"})),
        docs::DatabaseFailures,
    )
)]
#[get("/readyz")]
pub async fn readyz(state: Data<AppState>) -> Result<HttpResponse, ApiError> {
    state.services.store().ping().await?;
    Ok(HttpResponse::Ok().json(Health { status: "ready" }))
}

/// Prometheus metrics in the text exposition format.
#[utoipa::path(
    tag = "operations",
    responses((status = 200, description = "Prometheus text format", body = String, content_type = "text/plain; version=0.0.4"))
)]
#[get("/metrics")]
pub async fn metrics(metrics: Data<Metrics>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(metrics.render())
}
