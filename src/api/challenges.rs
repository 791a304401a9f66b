//! Challenges and rematches (v1.2): create, read, accept, decline, cancel, the account's open
//! ones, and the rematch of a finished game.

use actix_web::web::{Bytes, Data, Path};
use actix_web::{HttpRequest, HttpResponse, delete, get, post};
use uuid::Uuid;

use crate::api::http::{bearer, parse_body, private, read_body, with_location};
use crate::api::limits::{WriteAdmitted, admit_expert_seats};
use crate::api::problem::{ApiError, Problem};
use crate::api::{AppState, docs};
use crate::engine::BotKind;
use crate::service::opponents::challenges::{Challenge, ChallengeList, NewChallengeRequest};

/// A game's id, as the examples show it.
const GAME_EXAMPLE: &str = "3f1c2b4a-5d6e-4f70-8a9b-0c1d2e3f4a5b";

/// An example challenge from ada to bob with `status`, and the game it created, if any.
fn challenge_example(status: &str, game_id: Option<&str>) -> serde_json::Value {
    let answer = match status {
        "accepted" => Some("accepted"),
        "declined" => Some("declined"),
        _ => None,
    };
    serde_json::json!({
        "id": "5b0e3c1a-8a2f-4d6e-9c71-2f4b8d0e6a13", "from": "ada",
        "to": [{"username": "bob", "answer": answer}], "holes": 9,
        "rules": crate::store::codec::to_json(&crate::engine::Rules::default()),
        "rated": true, "bots": [], "status": status, "game_id": game_id,
        "created_at": "2026-05-01T12:00:00.000000Z", "expires_at": "2026-05-02T12:00:00.000000Z",
    })
}

/// The answer with a challenge, private to its parties.
fn challenge_response(
    builder: actix_web::HttpResponseBuilder,
    challenge: &Challenge,
) -> HttpResponse {
    private(builder).json(challenge)
}

/// Challenge accounts to a game: each gets `challenge_received`; once every one accepts, the game
/// is created with every seat taken and each seat's account gets `game_started`.
#[utoipa::path(
    tag = "challenges",
    request_body(content = NewChallengeRequest, examples(
        ("one opponent" = (value = json!({"to": ["bob"], "holes": 9, "rated": true}))),
        ("three, house rules" = (value = json!({"to": ["bob", "cleo", "dan"], "holes": 3, "rules": {"final_turns": true}}))),
    )),
    security(("bearer" = [])),
    responses(
        (status = 201, description = "The challenge, open", body = Challenge, headers(("Location" = String, description = "The challenge")), example = json!(challenge_example("open", None))),
        docs::BodyProblems,
        docs::Unauthorized,
        (status = 409, description = "too_many_challenges: the author holds 20 open challenges, or 3 to one of the accounts; database_busy: another write held a row past the lock timeout (nothing was applied)", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "invalid_challenge, unknown_account, invalid_game_options: the options out of their ranges, or a turn_timeout_s of null (the game always has a clock)", body = Problem, content_type = "application/problem+json"),
        docs::RateLimited,
        docs::DatabaseFailures,
    )
)]
#[post("/v1/challenges")]
pub async fn create_challenge(
    _: WriteAdmitted,
    state: Data<AppState>,
    request: HttpRequest,
    body: Result<Bytes, actix_web::Error>,
) -> Result<HttpResponse, ApiError> {
    let body = read_body(body)?;
    let new: NewChallengeRequest = parse_body(&body)?;
    let challenge = state
        .services
        .challenges
        .create_challenge(bearer(&request).as_deref(), new)
        .await?;
    let response = challenge_response(HttpResponse::Created(), &challenge);
    Ok(with_location(
        response,
        &format!("/v1/challenges/{}", challenge.id),
    ))
}

/// A challenge, as its author and the challenged accounts read it (404 for anyone else).
#[utoipa::path(
    tag = "challenges",
    security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "The challenge")),
    responses(
        (status = 200, description = "The challenge", body = Challenge, example = json!(challenge_example("open", None))),
        docs::Unauthorized,
        (status = 404, description = "not_found: no such challenge, or not one of the account's", body = Problem, content_type = "application/problem+json"),
        docs::DatabaseFailures,
    )
)]
#[get("/v1/challenges/{id}")]
pub async fn read_challenge(
    state: Data<AppState>,
    request: HttpRequest,
    id: Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let challenge = state
        .services
        .challenges
        .challenge(*id, bearer(&request).as_deref())
        .await?;
    Ok(challenge_response(HttpResponse::Ok(), &challenge))
}

/// Accept a challenge (a challenged account). The last acceptance creates the game:
/// `status` becomes `accepted` and `game_id` names it.
#[utoipa::path(
    tag = "challenges",
    security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "The challenge")),
    responses(
        (status = 200, description = "The challenge after the answer", body = Challenge, example = json!(challenge_example("accepted", Some(GAME_EXAMPLE)))),
        docs::Unauthorized,
        (status = 404, description = "not_found", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "challenge_closed: no longer open, or answered otherwise; write_conflict; database_busy: another write held a row past the lock timeout (nothing was applied)", body = Problem, content_type = "application/problem+json"),
        docs::DatabaseFailures,
    )
)]
#[post("/v1/challenges/{id}/accept")]
pub async fn accept_challenge(
    state: Data<AppState>,
    request: HttpRequest,
    id: Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    answer(state, request, *id, true).await
}

/// Decline a challenge (a challenged account): it closes, `status` `declined`.
#[utoipa::path(
    tag = "challenges",
    security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "The challenge")),
    responses(
        (status = 200, description = "The challenge after the answer", body = Challenge, example = json!(challenge_example("declined", None))),
        docs::Unauthorized,
        (status = 404, description = "not_found", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "challenge_closed: no longer open, or answered otherwise; write_conflict; database_busy: another write held a row past the lock timeout (nothing was applied)", body = Problem, content_type = "application/problem+json"),
        docs::DatabaseFailures,
    )
)]
#[post("/v1/challenges/{id}/decline")]
pub async fn decline_challenge(
    state: Data<AppState>,
    request: HttpRequest,
    id: Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    answer(state, request, *id, false).await
}

async fn answer(
    state: Data<AppState>,
    request: HttpRequest,
    id: Uuid,
    accept: bool,
) -> Result<HttpResponse, ApiError> {
    let challenge = state
        .services
        .challenges
        .answer_challenge(id, bearer(&request).as_deref(), accept)
        .await?;
    Ok(challenge_response(HttpResponse::Ok(), &challenge))
}

/// Cancel an open challenge (its author).
#[utoipa::path(
    tag = "challenges",
    security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "The challenge")),
    responses(
        (status = 204, description = "Cancelled"),
        docs::Unauthorized,
        (status = 404, description = "not_found", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "challenge_closed: no longer open; write_conflict; database_busy: another write held a row past the lock timeout (nothing was applied)", body = Problem, content_type = "application/problem+json"),
        docs::DatabaseFailures,
    )
)]
#[delete("/v1/challenges/{id}")]
pub async fn cancel_challenge(
    state: Data<AppState>,
    request: HttpRequest,
    id: Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    state
        .services
        .challenges
        .cancel_challenge(*id, bearer(&request).as_deref())
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// The open challenges the account sent or received, newest first.
#[utoipa::path(
    tag = "challenges",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The account's open challenges", body = ChallengeList, example = json!({"challenges": [challenge_example("open", None)]})),
        docs::Unauthorized,
        docs::DatabaseFailures,
    )
)]
#[get("/v1/account/challenges")]
pub async fn account_challenges(
    state: Data<AppState>,
    request: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let list = state
        .services
        .challenges
        .open_challenges(bearer(&request).as_deref())
        .await?;
    Ok(private(HttpResponse::Ok()).json(list))
}

/// Offer a rematch of a finished game (an account that held one of its seats): a challenge to
/// its other accounts with the same holes, rules and rated, its bots seated again. Without other
/// accounts the new game starts at once (`status` `accepted`, `game_id` set).
#[utoipa::path(
    tag = "challenges",
    security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "The finished game")),
    responses(
        (status = 201, description = "The rematch's challenge", body = Challenge, headers(("Location" = String, description = "The challenge")), example = json!(challenge_example("open", None))),
        docs::Unauthorized,
        docs::NoSuchGame,
        (status = 409, description = "not_finished: the game is still on; too_many_challenges: the author holds 20 open challenges, or 3 to one of the accounts; database_busy: another write held a row past the lock timeout (nothing was applied)", body = Problem, content_type = "application/problem+json"),
        docs::RateLimited,
        docs::DatabaseFailures,
    )
)]
#[post("/v1/games/{id}/rematch")]
pub async fn rematch(
    _: WriteAdmitted,
    state: Data<AppState>,
    request: HttpRequest,
    id: Path<Uuid>,
) -> Result<HttpResponse, actix_web::Error> {
    // The finished game's expert bots are seated again: they spend the client's expert seats.
    let finished = state
        .services
        .views
        .public_view(*id, None)
        .await
        .map_err(ApiError::from)?;
    let experts = finished
        .players
        .iter()
        .filter(|player| player.account.is_none() && player.bot == Some(BotKind::Expert))
        .count();
    admit_expert_seats(&request, experts)?;
    let challenge = state
        .services
        .challenges
        .rematch(*id, bearer(&request).as_deref())
        .await
        .map_err(ApiError::from)?;
    let response = challenge_response(HttpResponse::Created(), &challenge);
    Ok(with_location(
        response,
        &format!("/v1/challenges/{}", challenge.id),
    ))
}
