//! Leaving a running game: the greedy bot takes the caller's seat.

use actix_web::http::StatusCode;
use actix_web::web::{Data, Path};
use actix_web::{HttpRequest, HttpResponse, post};
use uuid::Uuid;

use crate::api::http::{answer_response, bearer};
use crate::api::problem::{ApiError, Problem};
use crate::api::{AppState, docs};
use crate::engine::View;
use crate::service::Answer;

/// Leave a running game: the greedy bot takes the seat.
///
/// The bot plays the seat for the rest of the game (`bot_took_seat`, reason `left`), starting
/// with any turn the seat owes now. The seat's token still reads its view (with no
/// `legal_moves`); its moves, and a second leave, get 409 `seat_taken_by_bot`.
#[utoipa::path(
    tag = "games",
    params(("id" = Uuid, Path, description = "The game")),
    security(("bearer" = [])),
    responses(
        docs::SeatLeft,
        docs::Unauthorized,
        docs::NoSuchGame,
        (status = 409, description = "game_not_started, game_finished, seat_taken_by_bot, write_conflict, database_busy", body = Problem, content_type = "application/problem+json"),
        docs::DatabaseFailures,
    )
)]
#[post("/v1/games/{id}/leave")]
pub async fn leave_game(
    state: Data<AppState>,
    request: HttpRequest,
    id: Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let token = bearer(&request);
    let view = state.service.leave(*id, token.as_deref()).await?;
    Ok(answer_response(&Answer::Fresh(view), |view: &View| {
        (StatusCode::OK, view.version)
    }))
}
