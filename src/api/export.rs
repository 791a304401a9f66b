//! The export of a finished game's complete log, as the NDJSON file `golf-server verify` audits.

use actix_web::http::header;
use actix_web::web::{Data, Path};
use actix_web::{HttpRequest, HttpResponse, get};
use uuid::Uuid;

use crate::api::http::{bearer, etag, none_match};
use crate::api::limits::ReadAdmitted;
use crate::api::problem::ApiError;
use crate::api::{AppState, docs};

/// The complete log of a finished game, one entry a line (RFC 8785 canonical JSON), as a file to
/// download and audit offline (`golf-server verify`). 409 `not_finished` before the end. Its
/// `ETag` is the game's last version: 304 to an `If-None-Match` that names it, without
/// rebuilding the file.
#[utoipa::path(
    tag = "log",
    params(
        ("id" = Uuid, Path, description = "The game"),
        ("If-None-Match" = Option<String>, Header, description = docs::IF_NONE_MATCH),
    ),
    security((), ("bearer" = [])),
    responses(
        docs::LogExported,
        docs::Unauthorized,
        docs::NoSuchGame,
        docs::ReadsRateLimited,
        docs::DatabaseFailures,
    )
)]
#[get("/v1/games/{id}/export")]
pub async fn export_log(
    _: ReadAdmitted,
    state: Data<AppState>,
    request: HttpRequest,
    id: Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let token = bearer(&request);
    let exported = state
        .services
        .views
        .export(*id, token.as_deref(), |version| {
            none_match(&request, &etag(version))
        })
        .await?;
    let mut response = match exported.ndjson {
        Some(_) => HttpResponse::Ok(),
        None => HttpResponse::NotModified(),
    };
    // The game is finished: its log never changes again, so its version tags it for good.
    response
        .insert_header((header::ETAG, etag(exported.version)))
        .insert_header((header::CACHE_CONTROL, docs::IMMUTABLE));
    Ok(match exported.ndjson {
        Some(log) => response
            .content_type(docs::NDJSON)
            .insert_header((
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"golf-{}.ndjson\"", *id),
            ))
            .body(log),
        None => response.finish(),
    })
}
