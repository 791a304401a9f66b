//! The moves of a game.

use actix_web::http::StatusCode;
use actix_web::web::{Bytes, Data, Path};
use actix_web::{HttpRequest, HttpResponse, post};
use uuid::Uuid;

use crate::api::http::{answer_response, bearer, idempotency_key, if_match, parse_body, read_body};
use crate::api::problem::{ApiError, Problem};
use crate::api::{AppState, docs};
use crate::engine::{Move, MoveRequest, View};
use crate::service::IdempotencyKey;

/// Make a move; bots then play their turns. Answers the caller's view after all of them.
#[utoipa::path(
    tag = "games",
    params(
        ("id" = Uuid, Path, description = "The game"),
        ("If-Match" = Option<String>, Header, description = "The ETag of the view the move was chosen from: 412 if the game moved on"),
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
        (status = 412, description = "stale_version: If-Match names another version", body = Problem, content_type = "application/problem+json"),
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
    // A body or header that does not parse is a 400 only once the game is found and the token
    // checked (API.md's precedence), so the service is handed the failure to report in its turn.
    let parsed = parse_body::<MoveRequest>(&body).and_then(|mv| {
        let key = idempotency_key(&request, &body, IdempotencyKey::for_move)?;
        Ok((mv, key, if_match(&request)?))
    });
    let (parsed, key, precondition) = match parsed {
        Ok((mv, key, precondition)) => (Ok(mv), key, precondition),
        Err(error) => (Err(error.detail().to_owned()), None, None),
    };
    let answer = state
        .service
        .play(*id, token.as_deref(), parsed, precondition.as_ref(), key)
        .await?;
    Ok(answer_response(&answer, |view: &View| {
        (StatusCode::OK, view.version)
    }))
}
