//! The log of a game: its pages, and replays of the view after any entry.

use actix_web::web::{Data, Path, Query};
use actix_web::{HttpRequest, HttpResponse, get};
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;

use crate::service::ParsedLater;

use crate::api::http::{Privacy, bearer, private, view_response};
use crate::api::limits::ReadAdmitted;
use crate::api::problem::{ApiError, Problem};
use crate::api::{AppState, docs};

/// Log paging query.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// Entries with `seq` above this (default 0).
    #[param(minimum = 0)]
    pub after: Option<i64>,
    /// Entries per page, 1 to 1000 (default 100).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<i64>,
}

/// A page of the game's log: redacted for the caller while the game runs, complete once it is
/// finished.
#[utoipa::path(
    tag = "log",
    params(("id" = Uuid, Path, description = "The game"), EventsQuery),
    security((), ("bearer" = [])),
    responses(
        docs::EventsPageShown,
        (status = 400, description = "malformed_request: a parameter does not parse", body = Problem, content_type = "application/problem+json"),
        docs::Unauthorized,
        docs::NoSuchGame,
        (status = 422, description = "out_of_range: limit is not 1 to 1000, or after is negative", body = Problem, content_type = "application/problem+json"),
        docs::ReadsRateLimited,
        docs::DatabaseFailures,
    )
)]
#[get("/v1/games/{id}/events")]
pub async fn list_events(
    _: ReadAdmitted,
    state: Data<AppState>,
    request: HttpRequest,
    id: Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let token = bearer(&request);
    // Parsed here rather than by an extractor, so that an unknown game (404) or a bad token (401)
    // wins over a parameter that does not parse (400), as docs/API.md orders them.
    let query = match Query::<EventsQuery>::from_query(request.query_string()) {
        Ok(query) => ParsedLater::parsed((query.after, query.limit)),
        Err(error) => ParsedLater::malformed(error.to_string()),
    };
    let page = state
        .services
        .views
        .events(*id, token.as_deref(), query)
        .await?;
    Ok(private(HttpResponse::Ok()).json(page))
}

/// The view the caller would have had right after entry `seq`.
#[utoipa::path(
    tag = "log",
    params(
        ("id" = Uuid, Path, description = "The game"),
        ("seq" = i64, Path, description = "A log entry, from 1"),
        ("If-None-Match" = Option<String>, Header, description = docs::IF_NONE_MATCH),
    ),
    security((), ("bearer" = [])),
    responses(
        docs::CallersView,
        docs::Unauthorized,
        (status = 404, description = "not_found: no such game, or no entry with that seq", body = Problem, content_type = "application/problem+json"),
        docs::ReadsRateLimited,
        docs::DatabaseFailures,
    )
)]
#[get("/v1/games/{id}/replay/{seq}")]
pub async fn replay(
    _: ReadAdmitted,
    state: Data<AppState>,
    request: HttpRequest,
    path: Path<(Uuid, i64)>,
) -> Result<HttpResponse, ApiError> {
    let token = bearer(&request);
    let (id, seq) = path.into_inner();
    let view = state
        .services
        .views
        .replay(id, seq, token.as_deref())
        .await?;
    Ok(view_response(&request, &view, Privacy::Secret))
}
