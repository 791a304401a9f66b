//! The players of a game: taking a seat.

use actix_web::http::StatusCode;
use actix_web::web::{Bytes, Data, Path};
use actix_web::{HttpRequest, HttpResponse, post};
use serde::Deserialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::api::http::{
    answer_response, bearer, client_scope, idempotency_key, parse_body, read_body,
};
use crate::api::limits::{WriteAdmitted, admit_expert_seats};
use crate::api::problem::{ApiError, Problem};
use crate::api::{AppState, constraints, docs};
use crate::engine::BotKind;
use crate::service::{IdempotencyKey, JoinRequest, Joined, ParsedLater};

/// `POST /v1/games/{id}/players`: take a seat.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"name": "Ada", "client_seed": "my own entropy"}))]
pub struct JoinBody {
    /// See [`constraints::player_name`]. Required, unless the seat is taken with an account
    /// token: then it defaults to the account's display name.
    #[serde(default)]
    #[schema(schema_with = constraints::player_name)]
    pub name: Option<String>,
    /// See [`constraints::client_seed`].
    #[serde(default)]
    #[schema(schema_with = constraints::client_seed)]
    pub client_seed: Option<String>,
    /// Seat a bot instead of a person (host token only).
    #[serde(default)]
    pub bot: Option<BotKind>,
}

/// Take a seat: a person gets a secret seat token; the host may seat a bot instead.
#[utoipa::path(
    tag = "games",
    params(
        ("id" = Uuid, Path, description = "The game"),
        ("Idempotency-Key" = Option<String>, Header, description = "Makes a retried join return the first answer (the same seat and token) and seat nobody twice: 22 to 255 visible ASCII characters, and random (a UUID). Scoped to the game and the client's address: the same key from another address takes a seat of its own", min_length = 22, max_length = 255, pattern = "^[!-~]+$"),
    ),
    request_body(content = JoinBody, examples(
        ("person" = (value = json!({"name": "Ada", "client_seed": "a1b2c3"}))),
        ("bot (host token)" = (value = json!({"name": "Robo", "bot": "greedy"}))),
    )),
    security((), ("bearer" = [])),
    responses(
        docs::SeatTaken,
        docs::BodyProblems,
        docs::Unauthorized,
        docs::NoSuchGame,
        (status = 409, description = "game_full, already_seated, write_conflict, database_busy", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "invalid_name, invalid_client_seed, idempotency_key_reused", body = Problem, content_type = "application/problem+json"),
        docs::RateLimited,
        docs::DatabaseFailures,
    )
)]
#[post("/v1/games/{id}/players")]
pub async fn join_game(
    _: WriteAdmitted,
    state: Data<AppState>,
    request: HttpRequest,
    id: Path<Uuid>,
    body: Result<Bytes, actix_web::Error>,
) -> Result<HttpResponse, actix_web::Error> {
    let body = read_body(body)?;
    let token = bearer(&request);
    let client = client_scope(&request);
    let parsed = parse_body::<JoinBody>(&body).and_then(|join| {
        Ok(JoinRequest {
            name: join.name,
            client_seed: join.client_seed,
            bot: join.bot,
            idempotency: idempotency_key(&request, &body, |key, body| {
                IdempotencyKey::for_join(key, body, &client)
            })?,
        })
    });
    if matches!(&parsed, Ok(join) if join.bot == Some(BotKind::Expert)) {
        admit_expert_seats(&request, 1)?;
    }
    let parsed = match parsed {
        Ok(join) => ParsedLater::parsed(join),
        Err(error) => ParsedLater::malformed(error.detail()),
    };
    let answer = state
        .services
        .games
        .join(*id, token.as_deref(), parsed)
        .await
        .map_err(ApiError::from)?;
    Ok(answer_response(&answer, |_: &Joined| {
        (StatusCode::CREATED, None)
    }))
}
