//! Seeks (v1.2), "find me a game": place, read and cancel one.

use actix_web::web::{Bytes, Data, Path};
use actix_web::{HttpRequest, HttpResponse, delete, get, post};
use uuid::Uuid;

use crate::api::http::{bearer, parse_body, private, read_body, with_location};
use crate::api::limits::WriteAdmitted;
use crate::api::problem::{ApiError, Problem};
use crate::api::{AppState, docs};
use crate::service::opponents::seeks::{NewSeekRequest, Seek};

/// An example seek with `status`, matched into a game when it says so.
fn seek_example(status: &str) -> serde_json::Value {
    let matched = status == "matched";
    serde_json::json!({
        "id": "0c5d1e2f-3a4b-4c6d-8e9f-a0b1c2d3e4f5", "status": status,
        "game_id": matched.then_some("3f1c2b4a-5d6e-4f70-8a9b-0c1d2e3f4a5b"),
        "seat": matched.then_some(1), "seats": 2, "holes": 9,
        "rules": crate::store::codec::to_json(&crate::engine::Rules::default()),
        "rated": true, "rating_range": [1300.0, 1700.0], "bots_after_s": 30,
        "created_at": "2026-05-01T12:00:00.000000Z", "expires_at": "2026-05-01T12:10:00.000000Z",
    })
}

/// Look for a game (an account): matched at once, with every account seated and each given
/// `seek_matched`, when the waiting seeks of the same seats, holes, rules and rated (whose
/// rating ranges admit each other) complete a table with it, oldest first; else it waits, for
/// bots after `bots_after_s` if given, until it expires.
#[utoipa::path(
    tag = "seeks",
    request_body(content = NewSeekRequest, examples(
        ("rated, bots after 30 s" = (value = json!({"seats": 2, "holes": 9, "rated": true, "bots_after_s": 30}))),
        ("four seats, close ratings" = (value = json!({"seats": 4, "holes": 3, "rating_range": [1400, 1600]}))),
    )),
    security(("bearer" = [])),
    responses(
        (status = 201, description = "The seek: `matched` with its game and seat, or `waiting`", body = Seek, headers(("Location" = String, description = "The seek")), example = json!(seek_example("waiting"))),
        docs::BodyProblems,
        docs::Unauthorized,
        (status = 409, description = "already_seeking: the account waits in another seek; write_conflict; database_busy: another write held a row past the lock timeout (nothing was applied)", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "invalid_seek, invalid_game_options: a rating_range that is not [lo, hi] admitting the account's own rating, a bots_after_s out of range, options out of their ranges, or a turn_timeout_s of null (the game always has a clock)", body = Problem, content_type = "application/problem+json"),
        docs::RateLimited,
        docs::DatabaseFailures,
    )
)]
#[post("/v1/seeks")]
pub async fn create_seek(
    _: WriteAdmitted,
    state: Data<AppState>,
    request: HttpRequest,
    body: Result<Bytes, actix_web::Error>,
) -> Result<HttpResponse, ApiError> {
    let body = read_body(body)?;
    let new: NewSeekRequest = parse_body(&body)?;
    let seek = state
        .services
        .seeks
        .create_seek(bearer(&request).as_deref(), new)
        .await?;
    let response = private(HttpResponse::Created()).json(&seek);
    Ok(with_location(response, &format!("/v1/seeks/{}", seek.id)))
}

/// A seek, as its account reads it (404 for anyone else).
#[utoipa::path(
    tag = "seeks",
    security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "The seek")),
    responses(
        (status = 200, description = "The seek", body = Seek, example = json!(seek_example("matched"))),
        docs::Unauthorized,
        (status = 404, description = "not_found: no such seek, or not the account's", body = Problem, content_type = "application/problem+json"),
        docs::DatabaseFailures,
    )
)]
#[get("/v1/seeks/{id}")]
pub async fn read_seek(
    state: Data<AppState>,
    request: HttpRequest,
    id: Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let seek = state
        .services
        .seeks
        .seek(*id, bearer(&request).as_deref())
        .await?;
    Ok(private(HttpResponse::Ok()).json(seek))
}

/// Cancel a waiting seek (its account); cancelling it again changes nothing.
#[utoipa::path(
    tag = "seeks",
    security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "The seek")),
    responses(
        (status = 204, description = "Cancelled"),
        docs::Unauthorized,
        (status = 404, description = "not_found", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "seek_closed: matched or expired; database_busy: another write held a row past the lock timeout (nothing was applied)", body = Problem, content_type = "application/problem+json"),
        docs::DatabaseFailures,
    )
)]
#[delete("/v1/seeks/{id}")]
pub async fn cancel_seek(
    state: Data<AppState>,
    request: HttpRequest,
    id: Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    state
        .services
        .seeks
        .cancel_seek(*id, bearer(&request).as_deref())
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
