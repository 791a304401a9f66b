//! The moves of a game.

use actix_web::http::StatusCode;
use actix_web::web::{Bytes, Data, Path};
use actix_web::{HttpRequest, HttpResponse, post};
use uuid::Uuid;

use crate::api::http::{answer_response, bearer, idempotency_key, if_match, parse_body, read_body};
use crate::api::problem::{ApiError, Problem};
use crate::api::{AppState, docs};
use crate::engine::{Move, MoveRequest, View};
use crate::service::{IdempotencyKey, MoveCommand, ParsedLater};

/// Make a move; bots then play their turns. Answers the caller's view after all of them.
#[utoipa::path(
    tag = "games",
    params(
        ("id" = Uuid, Path, description = "The game"),
        ("If-Match" = Option<String>, Header, description = "The ETag of the view the move was chosen from: 412 if the game moved on. `*`, or a list of ETags (RFC 9110; a bare number stands for its quoted tag, a weak tag never matches); anything else is 400"),
        ("Idempotency-Key" = Option<String>, Header, description = "Makes a retried move return the first answer and apply nothing twice: 1 to 255 visible ASCII characters", min_length = 1, max_length = 255, pattern = "^[!-~]+$"),
    ),
    request_body(content = Move, examples(
        ("reveal" = (value = json!({"type": "reveal", "positions": [0, 4]}))),
        ("draw" = (value = json!({"type": "draw", "source": "stock"}))),
        ("swap" = (value = json!({"type": "swap", "position": 2}))),
        ("discard" = (value = json!({"type": "discard"}))),
        ("flip" = (value = json!({"type": "flip", "position": 5}))),
        ("pass" = (value = json!({"type": "pass"}))),
    )),
    security(("bearer" = [])),
    responses(
        docs::MovePlayed,
        docs::BodyProblems,
        docs::Unauthorized,
        docs::NoSuchGame,
        (status = 409, description = "not_your_turn, wrong_stage, already_revealed, game_not_started, game_finished, write_conflict, database_busy", body = Problem, content_type = "application/problem+json"),
        (status = 412, description = "stale_version: If-Match names other versions only", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "position_out_of_range, duplicate_positions, invalid_reveal, position_already_revealed, must_swap_discard_draw, flip_required, idempotency_key_reused", body = Problem, content_type = "application/problem+json"),
        docs::DatabaseFailures,
    )
)]
#[post("/v1/games/{id}/moves")]
pub async fn make_move(
    state: Data<AppState>,
    request: HttpRequest,
    id: Path<Uuid>,
    body: Result<Bytes, actix_web::Error>,
) -> Result<HttpResponse, ApiError> {
    let body = read_body(body)?;
    let token = bearer(&request);
    let parsed = parse_body::<MoveRequest>(&body).and_then(|mv| {
        Ok(MoveCommand {
            request: mv,
            idempotency: idempotency_key(&request, &body, IdempotencyKey::for_move)?,
            if_match: if_match(&request)?,
        })
    });
    let command = match parsed {
        Ok(command) => ParsedLater::parsed(command),
        Err(error) => ParsedLater::malformed(error.detail()),
    };
    let answer = state
        .services
        .games
        .play(*id, token.as_deref(), command)
        .await?;
    Ok(answer_response(&answer, |view: &View| {
        (StatusCode::OK, Some(view.version))
    }))
}
