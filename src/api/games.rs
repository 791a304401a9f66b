//! The game resources: create, list, cancel, view, join, move, and read the log.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::web::{Bytes, Data, Path, Query};
use actix_web::{HttpRequest, HttpResponse, delete, get, post};
use serde::Deserialize;
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::api::problem::{ApiError, Problem};
use crate::api::{AppState, docs};
use crate::engine::{BotKind, MoveRequest, RulesInput, Status, View};
use crate::service::{IdempotencyKey, JoinRequest, NewGameRequest, Reply, ServiceError};

/// `POST /v1/games`: a new game.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"seats": 2, "holes": 9, "rules": {"final_turns": true}, "private": false}))]
pub struct CreateGameBody {
    /// Number of seats, 2 to 4.
    #[schema(minimum = 2, maximum = 4)]
    pub seats: i64,
    /// Number of holes, 1 to 18 (default 9).
    #[serde(default = "default_holes")]
    #[schema(minimum = 1, maximum = 18, default = 9)]
    pub holes: i64,
    /// Rule options; any left out take their defaults.
    #[serde(default)]
    pub rules: RulesInput,
    /// Keep the game out of the lobby (default false); anyone with its id may still join.
    #[serde(default)]
    pub private: bool,
    /// Explicit deal orders (52 codes each, first card dealt first) for holes 1, 2, ...: the game
    /// is then marked `stacked`.
    #[serde(default)]
    pub decks: Option<Vec<Vec<String>>>,
}

fn default_holes() -> i64 {
    9
}

/// `POST /v1/games/{id}/players`: take a seat.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"name": "Ada", "client_seed": "my own entropy"}))]
pub struct JoinBody {
    /// 1 to 40 characters after trimming, no control characters.
    pub name: String,
    /// Up to 64 characters of the player's own entropy for the deals (public).
    #[serde(default)]
    pub client_seed: Option<String>,
    /// Seat a bot instead of a person (host token only).
    #[serde(default)]
    pub bot: Option<BotKind>,
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

/// Log paging query.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// Entries with `seq` above this (default 0).
    #[param(minimum = 0)]
    pub after: Option<i64>,
    /// Entries per page, 1 to 1000 (default 100).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<i64>,
}

/// Create a game. Answers its public view with `commitment`, plus the secret `host_token`.
#[utoipa::path(
    tag = "games",
    request_body = CreateGameBody,
    params(("Idempotency-Key" = Option<String>, Header, description = "Makes a retried creation return the first answer (with its host token): 22 to 255 visible ASCII characters, and random (a UUID), since anyone presenting it gets that answer", min_length = 22, max_length = 255, pattern = "^[!-~]+$")),
    responses(
        docs::GameCreated,
        docs::BodyProblems,
        (status = 409, description = "write_conflict: another write won every retry; database_busy: another write held the data past the lock timeout; nothing was applied either way", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "invalid_game_options, invalid_deck, idempotency_key_reused", body = Problem, content_type = "application/problem+json"),
        docs::DatabaseFailures,
    )
)]
#[post("/v1/games")]
pub async fn create_game(
    state: Data<AppState>,
    request: HttpRequest,
    body: Result<Bytes, actix_web::Error>,
) -> Result<HttpResponse, ApiError> {
    let body = read_body(body)?;
    let parsed: CreateGameBody = parse_body(&body)?;
    let key = idempotency_key(&request, &body, IdempotencyKey::for_creation)?;
    let reply = state
        .service
        .create(
            NewGameRequest {
                seats: parsed.seats,
                holes: parsed.holes,
                rules: parsed.rules,
                private: parsed.private,
                decks: parsed.decks,
            },
            key,
        )
        .await?;
    let id = reply.body["id"].as_str().unwrap_or_default().to_owned();
    let mut response = json_reply(&reply);
    if let Ok(location) = HeaderValue::from_str(&format!("/v1/games/{id}")) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    Ok(response)
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
        .service
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
    state.service.cancel(*id, token.as_deref()).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Take a seat: a person gets a secret seat token; the host may seat a bot instead.
#[utoipa::path(
    tag = "games",
    params(("id" = Uuid, Path, description = "The game")),
    request_body = JoinBody,
    security((), ("bearer" = [])),
    responses(
        docs::SeatTaken,
        docs::BodyProblems,
        docs::Unauthorized,
        docs::NoSuchGame,
        (status = 409, description = "game_full, write_conflict, database_busy", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "invalid_name, invalid_client_seed", body = Problem, content_type = "application/problem+json"),
        docs::DatabaseFailures,
    )
)]
#[post("/v1/games/{id}/players")]
pub async fn join_game(
    state: Data<AppState>,
    request: HttpRequest,
    id: Path<Uuid>,
    body: Result<Bytes, actix_web::Error>,
) -> Result<HttpResponse, ApiError> {
    let body = read_body(body)?;
    let token = bearer(&request);
    let parsed = parse_body::<JoinBody>(&body).map(|join| JoinRequest {
        name: join.name,
        client_seed: join.client_seed,
        bot: join.bot,
    });
    let joined = state
        .service
        .join(
            *id,
            token.as_deref(),
            parsed.map_err(|e| e.detail().to_owned()),
        )
        .await?;
    Ok(private(HttpResponse::Created()).json(joined))
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
    let view = state.service.public_view(*id, token.as_deref()).await?;
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
    let view = state.service.own_view(*id, token.as_deref()).await?;
    Ok(view_response(&request, &view, Privacy::Secret))
}

/// Make a move; bots then play their turns. Answers the caller's view after all of them.
#[utoipa::path(
    tag = "games",
    params(
        ("id" = Uuid, Path, description = "The game"),
        ("If-Match" = Option<String>, Header, description = "The ETag of the view the move was chosen from: 412 if the game moved on"),
        ("Idempotency-Key" = Option<String>, Header, description = "Makes a retried move return the first answer and apply nothing twice: 1 to 255 visible ASCII characters", min_length = 1, max_length = 255, pattern = "^[!-~]+$"),
    ),
    request_body(content = MoveRequest, examples(
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
        let if_match = header_text(&request, header::IF_MATCH)?;
        Ok((mv, key, if_match))
    });
    let (parsed, key, if_match) = match parsed {
        Ok((mv, key, if_match)) => (Ok(mv), key, if_match),
        Err(error) => (Err(error.detail().to_owned()), None, None),
    };
    let reply = state
        .service
        .play(*id, token.as_deref(), parsed, if_match.as_deref(), key)
        .await?;
    Ok(json_reply(&reply))
}

/// A page of the game's log: redacted for the caller while the game runs, complete once it is
/// finished.
#[utoipa::path(
    tag = "log",
    params(("id" = Uuid, Path, description = "The game"), EventsQuery),
    security((), ("bearer" = [])),
    responses(
        docs::EventsPageShown,
        (status = 400, description = "malformed_request: a parameter does not parse", body = Problem, content_type = "application/problem+json"),
        docs::Unauthorized,
        docs::NoSuchGame,
        (status = 422, description = "out_of_range: limit is not 1 to 1000, or after is negative", body = Problem, content_type = "application/problem+json"),
        docs::DatabaseFailures,
    )
)]
#[get("/v1/games/{id}/events")]
pub async fn list_events(
    state: Data<AppState>,
    request: HttpRequest,
    id: Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let token = bearer(&request);
    // Parsed here rather than by an extractor, so that an unknown game (404) or a bad token (401)
    // wins over a parameter that does not parse (400), as API.md orders them.
    let query = Query::<EventsQuery>::from_query(request.query_string())
        .map(|query| (query.after, query.limit))
        .map_err(|error| error.to_string());
    let page = state.service.events(*id, token.as_deref(), query).await?;
    Ok(private(HttpResponse::Ok()).json(page))
}

/// The view the caller would have had right after entry `seq`.
#[utoipa::path(
    tag = "log",
    params(
        ("id" = Uuid, Path, description = "The game"),
        ("seq" = i64, Path, description = "A log entry, from 1"),
        ("If-None-Match" = Option<String>, Header, description = docs::IF_NONE_MATCH),
    ),
    security((), ("bearer" = [])),
    responses(
        docs::CallersView,
        docs::Unauthorized,
        (status = 404, description = "not_found: no such game, or no entry with that seq", body = Problem, content_type = "application/problem+json"),
        docs::DatabaseFailures,
    )
)]
#[get("/v1/games/{id}/replay/{seq}")]
pub async fn replay(
    state: Data<AppState>,
    request: HttpRequest,
    path: Path<(Uuid, i64)>,
) -> Result<HttpResponse, ApiError> {
    let token = bearer(&request);
    let (id, seq) = path.into_inner();
    let view = state.service.replay(id, seq, token.as_deref()).await?;
    Ok(view_response(&request, &view, Privacy::Secret))
}

/// Whether a response depends on who asks.
#[derive(Clone, Copy)]
enum Privacy {
    Public,
    Secret,
}

fn private(mut builder: actix_web::HttpResponseBuilder) -> actix_web::HttpResponseBuilder {
    builder
        .insert_header((header::CACHE_CONTROL, "private, no-store"))
        .insert_header((header::VARY, "Authorization"));
    builder
}

fn etag(version: u64) -> String {
    format!("\"{version}\"")
}

fn view_response(request: &HttpRequest, view: &View, privacy: Privacy) -> HttpResponse {
    let tag = etag(view.version);
    let unchanged = request
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            // If-None-Match compares weakly (RFC 9110); `*` matches any current view.
            value.split(',').any(|candidate| {
                let candidate = candidate.trim();
                candidate == "*" || candidate.trim_start_matches("W/") == tag
            })
        });
    let mut builder = match (unchanged, privacy) {
        (true, Privacy::Secret) => private(HttpResponse::NotModified()),
        (true, Privacy::Public) => HttpResponse::NotModified(),
        (false, Privacy::Secret) => private(HttpResponse::Ok()),
        (false, Privacy::Public) => HttpResponse::Ok(),
    };
    builder.insert_header((header::ETAG, tag));
    if let Privacy::Public = privacy {
        builder.insert_header((header::CACHE_CONTROL, "no-cache"));
    }
    if unchanged {
        builder.finish()
    } else {
        builder.json(view)
    }
}

/// A reply that may have been stored for an idempotent retry: private to its caller.
fn json_reply(reply: &Reply) -> HttpResponse {
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::OK);
    let mut builder = private(HttpResponse::build(status));
    if let Some(version) = reply.body.get("version").and_then(Value::as_u64) {
        builder.insert_header((header::ETAG, etag(version)));
    }
    builder.json(&reply.body)
}

/// The request body: one over [`crate::api::MAX_BODY_BYTES`] is a 413 `payload_too_large`.
fn read_body(body: Result<Bytes, actix_web::Error>) -> Result<Bytes, ApiError> {
    body.map_err(
        |error| match error.as_error::<actix_web::error::PayloadError>() {
            Some(actix_web::error::PayloadError::Overflow) => ApiError::payload_too_large(),
            _ => ApiError::malformed(format!("The body cannot be read: {error}")),
        },
    )
}

/// Parses a JSON body into its shape: every failure is a 400 `malformed_request`.
fn parse_body<T: serde::de::DeserializeOwned>(body: &Bytes) -> Result<T, ApiError> {
    serde_json::from_slice(body)
        .map_err(|error| ApiError::malformed(format!("The body does not parse: {error}")))
}

/// The token of the `Authorization` header, if there is one (the scheme `Bearer` is
/// case-insensitive, RFC 9110). A header that is not `Bearer <token>` (another scheme, or a bare
/// token) becomes the empty token, which no seat or host has, so that it fails authentication
/// (401) in its turn, after the game is found: a bad credential is never taken for no credential,
/// nor for a good one.
fn bearer(request: &HttpRequest) -> Option<String> {
    let value = request.headers().get(header::AUTHORIZATION)?;
    let text = value.to_str().unwrap_or_default().trim();
    let token = match text.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => token.trim(),
        _ => "",
    };
    Some(token.to_owned())
}

fn header_text(
    request: &HttpRequest,
    name: header::HeaderName,
) -> Result<Option<String>, ApiError> {
    request
        .headers()
        .get(&name)
        .map(|value| {
            value
                .to_str()
                .map(str::to_owned)
                .map_err(|_| ApiError::malformed(format!("{name} is not visible ASCII.")))
        })
        .transpose()
}

fn idempotency_key(
    request: &HttpRequest,
    body: &Bytes,
    check: fn(&str, &[u8]) -> Result<IdempotencyKey, ServiceError>,
) -> Result<Option<IdempotencyKey>, ApiError> {
    header_text(request, header::HeaderName::from_static("idempotency-key"))?
        .map(|key| check(&key, body).map_err(ApiError::from))
        .transpose()
}
