//! The analysis of a finished game: every decision's expected points lost, computed once by the
//! analysis threads and stored.

use actix_web::http::header;
use actix_web::web::{Data, Path};
use actix_web::{HttpRequest, HttpResponse, get};
use uuid::Uuid;

use crate::api::http::bearer;
use crate::api::limits::ReadAdmitted;
use crate::api::problem::ApiError;
use crate::api::{AppState, docs};
use crate::engine::AnalysisStatus;
use crate::service::post_game::analysis::AnalysisReply;

/// The analysis of a finished game: for every decision of every seat, the mover's expected hole
/// score after the move played and after the best one, estimated from what that seat could see
/// then, the points lost and a label; each seat's summary. 202 while it is computed.
#[utoipa::path(
    tag = "log",
    params(("id" = Uuid, Path, description = "The game")),
    security((), ("bearer" = [])),
    responses(
        docs::AnalysisShown,
        docs::Unauthorized,
        docs::NoSuchGame,
        docs::ReadsRateLimited,
        docs::DatabaseFailures,
    )
)]
#[get("/v1/games/{id}/analysis")]
pub async fn analysis(
    _: ReadAdmitted,
    state: Data<AppState>,
    request: HttpRequest,
    id: Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let token = bearer(&request);
    match state
        .services
        .post_game
        .analysis(*id, token.as_deref())
        .await?
    {
        AnalysisReply::Done(json) => Ok(HttpResponse::Ok()
            .insert_header((header::CACHE_CONTROL, "no-cache"))
            .content_type("application/json")
            .body(json)),
        AnalysisReply::Pending => Ok(HttpResponse::Accepted()
            .insert_header((header::CACHE_CONTROL, "no-cache"))
            .json(docs::AnalysisPending {
                status: AnalysisStatus::Pending,
            })),
    }
}
