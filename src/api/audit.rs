//! The audit of a game: where its log stands, and once it is finished, whether it checks out.

use actix_web::http::header;
use actix_web::web::{Data, Path};
use actix_web::{HttpRequest, HttpResponse, get};
use uuid::Uuid;

use crate::api::http::bearer;
use crate::api::limits::ReadAdmitted;
use crate::api::problem::ApiError;
use crate::api::{AppState, docs};

/// The commitment and head hash of the game's log; once the game is finished, its seed and the
/// result of the full check of its log, computed once when it ended (`verified`, `first_bad_seq`).
#[utoipa::path(
    tag = "log",
    params(("id" = Uuid, Path, description = "The game")),
    security((), ("bearer" = [])),
    responses(
        docs::AuditShown,
        docs::Unauthorized,
        docs::NoSuchGame,
        docs::ReadsRateLimited,
        docs::DatabaseFailures,
    )
)]
#[get("/v1/games/{id}/audit")]
pub async fn audit(
    _: ReadAdmitted,
    state: Data<AppState>,
    request: HttpRequest,
    id: Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let token = bearer(&request);
    let audit = state
        .services
        .post_game
        .audit(*id, token.as_deref())
        .await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .json(audit))
}
