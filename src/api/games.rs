//! The game resource: create, list (the lobby), cancel, and the public and own views.

use actix_web::http::{StatusCode, header};
use actix_web::web::{Bytes, Data, Path, Query};
use actix_web::{HttpRequest, HttpResponse, delete, get, post};
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::api::http::{
    Privacy, answer_response, bearer, client_scope, idempotency_key, parse_body, read_body,
    view_response, with_location,
};
use crate::api::limits::WriteAdmitted;
use crate::api::problem::{ApiError, Problem};
use crate::api::{AppState, constraints, docs};
use crate::engine::{RulesInput, Status};
use crate::service::{Answer, CreatedGame, IdempotencyKey, NewGameRequest};

/// `POST /v1/games`: a new game.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"seats": 2, "holes": 9, "rules": {"final_turns": true}, "private": false}))]
pub struct CreateGameBody {
    /// Number of seats, 2 to 4.
    #[schema(minimum = 2, maximum = 4)]
    pub seats: i64,
    /// Number of holes, 1 to 18 (default 9).
    #[serde(default = "crate::engine::rules::default_holes")]
    #[schema(minimum = 1, maximum = 18, default = 9)]
    pub holes: i64,
    /// Rule options; any left out take their defaults.
    #[serde(default, deserialize_with = "crate::engine::rules::rules_object")]
    pub rules: RulesInput,
    /// Keep the game out of the lobby (default false); anyone with its id may still join.
    #[serde(default)]
    pub private: bool,
    /// See [`constraints::decks`].
    #[serde(default)]
    #[schema(schema_with = constraints::decks)]
    pub decks: Option<Vec<Vec<String>>>,
    /// Whether the game's end updates its seats' ratings (default false). A rated game's seats
    /// are taken only with account tokens or by the built-in bots (an anonymous join is 422
    /// `account_required`), it cannot have `decks` (422 `invalid_game_options`), and it always
    /// has a clock: `rules.turn_timeout_s` defaults to `GOLF_MATCH_TURN_TIMEOUT_S` (ten minutes)
    /// and may not be null (422 `invalid_game_options`).
    #[serde(default)]
    pub rated: bool,
}

/// Lobby query.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct LobbyQuery {
    /// `waiting` (the default), the only status listed; `playing` or `finished` is a 422.
    #[param(inline)]
    pub status: Option<Status>,
    /// Games per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page.
    #[param(min_length = 1)]
    pub cursor: Option<String>,
}

/// Create a game. Answers its public view with `commitment`, plus the secret `host_token`.
#[utoipa::path(
    tag = "games",
    request_body(content = CreateGameBody, examples(
        ("two players" = (value = json!({"seats": 2, "holes": 9}))),
        ("house rules" = (value = json!({"seats": 4, "holes": 3, "rules": {"flip_after_discard": "optional", "final_turns": true}, "private": true}))),
        ("rated" = (value = json!({"seats": 2, "holes": 9, "rated": true}))),
    )),
    params(("Idempotency-Key" = Option<String>, Header, description = "Makes a retried creation return the first answer (with its host token): 22 to 255 visible ASCII characters, and random (a UUID). Scoped to the client's address: the same key from another address creates a game of its own", min_length = 22, max_length = 255, pattern = "^[!-~]+$")),
    security((), ("bearer" = [])),
    responses(
        docs::GameCreated,
        docs::BodyProblems,
        docs::Unauthorized,
        (status = 409, description = "write_conflict: another write won every retry; database_busy: another write held the data past the lock timeout; nothing was applied either way", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "invalid_game_options, invalid_deck, idempotency_key_reused", body = Problem, content_type = "application/problem+json"),
        docs::RateLimited,
        docs::DatabaseFailures,
    )
)]
#[post("/v1/games")]
pub async fn create_game(
    _: WriteAdmitted,
    state: Data<AppState>,
    request: HttpRequest,
    body: Result<Bytes, actix_web::Error>,
) -> Result<HttpResponse, ApiError> {
    let body = read_body(body)?;
    let parsed: CreateGameBody = parse_body(&body)?;
    let client = client_scope(&request);
    let key = idempotency_key(&request, &body, |key, body| {
        IdempotencyKey::for_creation(key, body, &client)
    })?;
    let answer = state
        .services
        .games
        .create(
            bearer(&request).as_deref(),
            NewGameRequest {
                seats: parsed.seats,
                holes: parsed.holes,
                rules: parsed.rules,
                private: parsed.private,
                decks: parsed.decks,
                rated: parsed.rated,
            },
            key,
        )
        .await?;
    let id = match &answer {
        Answer::Fresh(created) => created.view.id.to_string(),
        Answer::Replayed(stored) => stored.body["id"].as_str().unwrap_or_default().to_owned(),
    };
    let response = answer_response(&answer, |created: &CreatedGame| {
        (StatusCode::CREATED, Some(created.view.version))
    });
    Ok(with_location(response, &format!("/v1/games/{id}")))
}

/// The lobby: public games waiting for players, newest first.
#[utoipa::path(
    tag = "games",
    params(LobbyQuery),
    responses(
        docs::LobbyPageShown,
        (status = 400, description = "malformed_request: a parameter does not parse", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "out_of_range: a status other than waiting, or a limit that is not 1 to 100", body = Problem, content_type = "application/problem+json"),
        docs::DatabaseFailures,
    )
)]
#[get("/v1/games")]
pub async fn list_games(
    state: Data<AppState>,
    query: Query<LobbyQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = state
        .services
        .views
        .lobby(query.status, query.limit, query.cursor.as_deref())
        .await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .json(page))
}

/// The host cancels a game that is still waiting for players.
#[utoipa::path(
    tag = "games",
    params(("id" = Uuid, Path, description = "The game")),
    security(("bearer" = [])),
    responses(
        (status = 204, description = "Cancelled: the game is gone"),
        docs::Unauthorized,
        docs::NoSuchGame,
        (status = 409, description = "game_not_waiting, database_busy", body = Problem, content_type = "application/problem+json"),
        docs::DatabaseFailures,
    )
)]
#[delete("/v1/games/{id}")]
pub async fn cancel_game(
    state: Data<AppState>,
    request: HttpRequest,
    id: Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let token = bearer(&request);
    state.services.games.cancel(*id, token.as_deref()).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// The public (spectator) view of a game.
#[utoipa::path(
    tag = "games",
    params(
        ("id" = Uuid, Path, description = "The game"),
        ("If-None-Match" = Option<String>, Header, description = docs::IF_NONE_MATCH),
    ),
    security((), ("bearer" = [])),
    responses(
        docs::PublicView,
        docs::Unauthorized,
        docs::NoSuchGame,
        docs::DatabaseFailures,
    )
)]
#[get("/v1/games/{id}")]
pub async fn public_view(
    state: Data<AppState>,
    request: HttpRequest,
    id: Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let token = bearer(&request);
    let view = state
        .services
        .views
        .public_view(*id, token.as_deref())
        .await?;
    Ok(view_response(&request, &view, Privacy::Public))
}

/// The caller's own view, with `you` and `legal_moves`.
#[utoipa::path(
    tag = "games",
    params(
        ("id" = Uuid, Path, description = "The game"),
        ("If-None-Match" = Option<String>, Header, description = docs::IF_NONE_MATCH),
    ),
    security(("bearer" = [])),
    responses(
        docs::CallersView,
        docs::Unauthorized,
        docs::NoSuchGame,
        docs::DatabaseFailures,
    )
)]
#[get("/v1/games/{id}/view")]
pub async fn own_view(
    state: Data<AppState>,
    request: HttpRequest,
    id: Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let token = bearer(&request);
    let view = state.services.views.own_view(*id, token.as_deref()).await?;
    Ok(view_response(&request, &view, Privacy::Secret))
}
