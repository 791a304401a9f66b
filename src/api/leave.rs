//! Leaving a running game: the greedy bot takes the caller's seat.

use actix_web::http::StatusCode;
use actix_web::web::{Data, Path};
use actix_web::{HttpRequest, HttpResponse, post};
use uuid::Uuid;

use crate::api::http::{answer_response, bearer, idempotency_key};
use crate::api::problem::{ApiError, Problem};
use crate::api::{AppState, docs};
use crate::engine::View;
use crate::service::{IdempotencyKey, ParsedLater};

/// Leave a running game: the greedy bot takes the seat.
///
/// The bot plays the seat for the rest of the game (`bot_took_seat`, reason `left`), starting
/// with any turn the seat owes now. The seat's token still reads its view (with no
/// `legal_moves`); its moves, and a second leave, get 409 `seat_taken_by_bot`, unless the second
/// is a retry with the first one's `Idempotency-Key`, which gets the first answer.
#[utoipa::path(
    tag = "games",
    params(
        ("id" = Uuid, Path, description = "The game"),
        ("Idempotency-Key" = Option<String>, Header, description = "Makes a retried leave return the first answer: 1 to 255 visible ASCII characters, scoped to the game and the seat, and shared with the seat's moves", min_length = 1, max_length = 255, pattern = "^[!-~]+$"),
    ),
    security(("bearer" = [])),
    responses(
        docs::SeatLeft,
        (status = 400, description = "malformed_request: the Idempotency-Key header does not parse", body = Problem, content_type = "application/problem+json"),
        docs::Unauthorized,
        docs::NoSuchGame,
        (status = 409, description = "game_not_started, game_finished, seat_taken_by_bot, write_conflict, database_busy", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "idempotency_key_reused: the key came with one of the seat's moves", body = Problem, content_type = "application/problem+json"),
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
    // A leave has no body: its key is checked alone.
    let key = match idempotency_key(&request, &[], |key, _| IdempotencyKey::for_leave(key)) {
        Ok(key) => ParsedLater::parsed(key),
        Err(error) => ParsedLater::malformed(error.detail()),
    };
    let answer = state
        .services
        .games
        .leave(*id, token.as_deref(), key)
        .await?;
    Ok(answer_response(&answer, |view: &View| {
        (StatusCode::OK, Some(view.version))
    }))
}
