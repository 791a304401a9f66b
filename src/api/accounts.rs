//! The account resource (v1.2): create an account, read it, rotate its token, and the public
//! profile of any account.

use actix_web::web::{Bytes, Data, Path};
use actix_web::{HttpRequest, HttpResponse, get, post};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::api::http::{
    answer_response, bearer, client_scope, idempotency_key, parse_body, private, read_body,
    with_location,
};
use crate::api::limits::WriteAdmitted;
use crate::api::problem::{ApiError, Problem};
use crate::api::{AppState, constraints, docs};
use crate::service::accounts::{Account, CreatedAccount, NewAccountRequest, Profile, RotatedToken};
use crate::service::{Answer, IdempotencyKey};

/// An account token, as the examples show it.
const TOKEN_EXAMPLE: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

/// `POST /v1/accounts`: a new account.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"username": "ada", "display_name": "Ada"}))]
pub struct CreateAccountBody {
    /// 3 to 24 of `a-z 0-9 _ -`, starting with a letter; stored and compared lowercase. Names
    /// starting with `bot-` are reserved for the built-in bots. The pattern ends with "no
    /// character follows" rather than `$`, which Python's `re` also matches before a final newline.
    #[schema(pattern = r"^(?![Bb][Oo][Tt]-)[A-Za-z][A-Za-z0-9_-]{2,23}(?![\s\S])")]
    pub username: String,
    /// See [`constraints::player_name`]; defaults to the username.
    #[serde(default)]
    #[schema(schema_with = constraints::player_name)]
    pub display_name: Option<String>,
}

/// Create an account. Answers it with its secret account token (shown once).
#[utoipa::path(
    tag = "accounts",
    request_body(content = CreateAccountBody, example = json!({"username": "ada", "display_name": "Ada"})),
    params(("Idempotency-Key" = Option<String>, Header, description = "Makes a retried creation return the first answer (with its token): 22 to 255 visible ASCII characters, and random (a UUID). Scoped to the client's address", min_length = 22, max_length = 255, pattern = "^[!-~]+$")),
    responses(
        (status = 201, description = "The account and its token", body = CreatedAccount, headers(("Location" = String, description = "The account's profile")), example = json!({"username": "ada", "display_name": "Ada", "created_at": "2026-05-01T12:00:00.000000Z", "rating": {"value": 1500.0, "deviation": 500.0, "games": 0, "provisional": true}, "games": {"played": 0, "won": 0}, "token": TOKEN_EXAMPLE})),
        docs::BodyProblems,
        (status = 409, description = "username_taken, database_busy: the name is taken, or another write held the data past the lock timeout (nothing was applied)", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "invalid_username, invalid_name, idempotency_key_reused", body = Problem, content_type = "application/problem+json"),
        docs::RateLimited,
        docs::DatabaseFailures,
    )
)]
#[post("/v1/accounts")]
pub async fn create_account(
    _: WriteAdmitted,
    state: Data<AppState>,
    request: HttpRequest,
    body: Result<Bytes, actix_web::Error>,
) -> Result<HttpResponse, ApiError> {
    let body = read_body(body)?;
    let parsed: CreateAccountBody = parse_body(&body)?;
    let client = client_scope(&request);
    let key = idempotency_key(&request, &body, |key, body| {
        IdempotencyKey::for_account_creation(key, body, &client)
    })?;
    let new = NewAccountRequest {
        username: parsed.username,
        display_name: parsed.display_name,
    };
    let answer = state.services.accounts.create_account(new, key).await?;
    let username = match &answer {
        Answer::Fresh(created) => created.account.username.clone(),
        Answer::Replayed(stored) => stored.body["username"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    };
    let response = answer_response(&answer, |_: &CreatedAccount| {
        (actix_web::http::StatusCode::CREATED, None)
    });
    Ok(with_location(response, &format!("/v1/accounts/{username}")))
}

/// The account of the token.
#[utoipa::path(
    tag = "accounts",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The account", body = Account, example = json!({"username": "ada", "display_name": "Ada", "created_at": "2026-05-01T12:00:00.000000Z", "rating": {"value": 1623.4, "deviation": 187.2, "games": 14, "provisional": false}, "games": {"played": 12, "won": 5}})),
        docs::Unauthorized,
        docs::DatabaseFailures,
    )
)]
#[get("/v1/account")]
pub async fn own_account(
    state: Data<AppState>,
    request: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let account = state
        .services
        .accounts
        .account(bearer(&request).as_deref())
        .await?;
    Ok(private(HttpResponse::Ok()).json(account))
}

/// Replace the account's token: the reply carries the new one, and the old one is refused from
/// now on, on every instance.
#[utoipa::path(
    tag = "accounts",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The new token", body = RotatedToken, example = json!({"token": TOKEN_EXAMPLE})),
        docs::Unauthorized,
        (status = 409, description = "database_busy: another write held the account past the lock timeout; the old token stands", body = Problem, content_type = "application/problem+json"),
        docs::DatabaseFailures,
    )
)]
#[post("/v1/account/token")]
pub async fn rotate_token(
    state: Data<AppState>,
    request: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let rotated = state
        .services
        .accounts
        .rotate_account_token(bearer(&request).as_deref())
        .await?;
    Ok(private(HttpResponse::Ok()).json(rotated))
}

/// The public profile of an account.
#[utoipa::path(
    tag = "accounts",
    params(("username" = String, Path, description = "The account (compared in lowercase)")),
    responses(
        (status = 200, description = "The profile", body = Profile, example = json!({"username": "ada", "display_name": "Ada", "rating": {"value": 1623.4, "deviation": 187.2, "games": 14, "provisional": false}, "games": {"played": 12, "won": 5}, "recent": []})),
        (status = 404, description = "not_found: no account with this username", body = Problem, content_type = "application/problem+json"),
        docs::DatabaseFailures,
    )
)]
#[get("/v1/accounts/{username}")]
pub async fn profile(
    state: Data<AppState>,
    username: Path<String>,
) -> Result<HttpResponse, ApiError> {
    let profile = state.services.accounts.profile(&username).await?;
    Ok(HttpResponse::Ok()
        .insert_header(("cache-control", "no-cache"))
        .json(profile))
}
