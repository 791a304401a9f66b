//! RFC 9457 problem details: the one place where failures become HTTP responses, each with the
//! status that the catalog ([`crate::api::codes`]) gives its code.

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::http::header::{self, ContentType, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;
use utoipa::ToSchema;

use crate::api::codes;
use crate::service::ServiceError;
use crate::store::StoreError;

/// The body of every error response (`application/problem+json`).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(example = json!({
    "type": "urn:golf-server:problem:not_your_turn",
    "title": "Not your turn",
    "status": 409,
    "detail": "Seat 2 is to play.",
    "code": "not_your_turn"
}))]
pub struct Problem {
    /// A URI naming the problem type: `urn:golf-server:problem:` followed by `code`.
    #[serde(rename = "type")]
    pub type_uri: String,
    /// A short summary of the problem type.
    pub title: String,
    /// The HTTP status code.
    pub status: u16,
    /// What went wrong with this request, in a sentence meant for people.
    pub detail: String,
    /// A stable, machine-readable identifier of the problem type.
    pub code: String,
}

/// The media type of problems.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// An error that the HTTP layer reports as a problem.
#[derive(Debug, Clone)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    detail: String,
}

impl ApiError {
    /// A problem with a stable `code` of the catalog, the status the catalog gives it, and a
    /// human detail.
    pub fn new(code: &str, detail: impl Into<String>) -> Self {
        let entry = codes::entry(code);
        ApiError {
            status: StatusCode::from_u16(entry.status).expect("a catalog status is a status"),
            code: entry.code,
            detail: detail.into(),
        }
    }

    /// 400 `malformed_request`: the request does not parse into its expected shape.
    pub fn malformed(detail: impl Into<String>) -> Self {
        Self::new("malformed_request", detail)
    }

    /// 413 `payload_too_large`: the body is over [`crate::api::MAX_BODY_BYTES`].
    pub fn payload_too_large() -> Self {
        Self::new(
            "payload_too_large",
            format!(
                "The body is larger than {} bytes.",
                crate::api::MAX_BODY_BYTES
            ),
        )
    }

    /// 401 `unauthorized`: a missing token where one is needed, or one that is not of this game.
    pub fn unauthorized(detail: impl Into<String>) -> Self {
        Self::new("unauthorized", detail)
    }

    /// 404 `not_found`.
    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new("not_found", detail)
    }

    /// 503 `unavailable`: the database cannot be reached.
    pub fn unavailable() -> Self {
        Self::new(
            "unavailable",
            "The database is unavailable; try again shortly.",
        )
    }

    /// 409 `write_conflict`: every attempt of a write met a conflict in the store (another write
    /// to the game got there first); the request changed nothing.
    pub fn write_conflict() -> Self {
        Self::new(
            "write_conflict",
            "The game changed while this request was being written, and nothing was applied: \
             reload it and try again.",
        )
    }

    /// The sentence for people.
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// 500 `internal_error`: a fault of ours; the reason goes to the log, not to the client.
    pub fn internal() -> Self {
        Self::new(
            "internal_error",
            "The server failed to handle this request.",
        )
    }

    /// The problem body.
    pub fn problem(&self) -> Problem {
        Problem {
            type_uri: format!("urn:golf-server:problem:{}", self.code),
            title: title_of(self.status),
            status: self.status.as_u16(),
            detail: self.detail.clone(),
            code: self.code.to_owned(),
        }
    }
}

fn title_of(status: StatusCode) -> String {
    status.canonical_reason().unwrap_or("Error").to_owned()
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.status.as_u16(), self.code, self.detail)
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        let mut builder = HttpResponse::build(self.status);
        if self.status == StatusCode::UNAUTHORIZED {
            builder.insert_header((actix_web::http::header::WWW_AUTHENTICATE, "Bearer"));
        }
        builder
            .insert_header(ContentType(
                PROBLEM_JSON.parse().expect("static media type"),
            ))
            .json(self.problem())
    }
}

/// Makes every error response a problem. Handlers answer problems already; what answers outside
/// them (the docs page answers a bare 404 for an asset it does not have, and a text 500; CORS
/// refuses a preflight with a text 400) is replaced by the problem of its status, keeping the
/// CORS headers. Other statuses are left as they are, since nothing else answers them outside
/// the handlers.
pub async fn problems_only(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    let response = next.call(request).await?;
    let status = response.status();
    let is_problem = response.headers().get(header::CONTENT_TYPE)
        == Some(&HeaderValue::from_static(PROBLEM_JSON));
    let replacement = match status {
        _ if is_problem => None,
        StatusCode::NOT_FOUND => Some(ApiError::not_found(format!(
            "Nothing is at {}.",
            response.request().path()
        ))),
        StatusCode::INTERNAL_SERVER_ERROR => {
            tracing::error!("a 500 that is not a problem");
            Some(ApiError::internal())
        }
        StatusCode::BAD_REQUEST => Some(ApiError::malformed(
            "A CORS preflight from an origin, or for a method or headers, that this server does \
             not allow.",
        )),
        _ => None,
    };
    Ok(match replacement {
        Some(problem) => {
            let mut replaced = problem.error_response();
            for (name, value) in response.headers() {
                if name.as_str().starts_with("access-control-") || name == header::VARY {
                    replaced.headers_mut().append(name.clone(), value.clone());
                }
            }
            response.into_response(replaced).map_into_right_body()
        }
        None => response.map_into_left_body(),
    })
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::NotFound => ApiError::not_found("There is no such game."),
            StoreError::NotWaiting => ApiError::new(
                "game_not_waiting",
                "The game has started: only a waiting game can be cancelled.",
            ),
            StoreError::Unavailable(reason) => {
                tracing::warn!(%reason, "database unavailable");
                ApiError::unavailable()
            }
            StoreError::Conflict => {
                tracing::warn!("write conflicts persisted through every retry");
                ApiError::write_conflict()
            }
            StoreError::Busy => {
                tracing::warn!("another writer held the database past the lock timeout");
                ApiError::new(
                    "database_busy",
                    "Another request held this game's data for too long, and nothing was \
                     applied: try again.",
                )
            }
            StoreError::Corrupt(reason) | StoreError::Internal(reason) => {
                // The reason stays in our logs: clients get no internals.
                tracing::error!(%reason, "store failure");
                ApiError::internal()
            }
        }
    }
}

impl From<ServiceError> for ApiError {
    fn from(error: ServiceError) -> Self {
        let detail = error.to_string();
        match error {
            ServiceError::NotFound(_) => ApiError::not_found(detail),
            ServiceError::Unauthorized(_) => ApiError::unauthorized(detail),
            ServiceError::Malformed(_) => ApiError::malformed(detail),
            ServiceError::InvalidUsername(_) => ApiError::new("invalid_username", detail),
            ServiceError::UsernameTaken => ApiError::new("username_taken", detail),
            ServiceError::AlreadySeated => ApiError::new("already_seated", detail),
            ServiceError::InvalidWebhookUrl(_) => ApiError::new("invalid_webhook_url", detail),
            ServiceError::StaleVersion { .. } => ApiError::new("stale_version", detail),
            ServiceError::IdempotencyKeyReused => ApiError::new("idempotency_key_reused", detail),
            ServiceError::NotFinished | ServiceError::NotAnalysable => {
                ApiError::new("not_finished", detail)
            }
            ServiceError::AnalysisDisabled => ApiError::new("analysis_disabled", detail),
            ServiceError::ChallengeClosed(_) => ApiError::new("challenge_closed", detail),
            ServiceError::InvalidChallenge(_) => ApiError::new("invalid_challenge", detail),
            ServiceError::TooManyChallenges(_) => ApiError::new("too_many_challenges", detail),
            ServiceError::AlreadySeeking => ApiError::new("already_seeking", detail),
            ServiceError::SeekClosed => ApiError::new("seek_closed", detail),
            ServiceError::InvalidSeek(_) => ApiError::new("invalid_seek", detail),
            ServiceError::UnknownAccount(_) => ApiError::new("unknown_account", detail),
            ServiceError::OutOfRange(_) => ApiError::new("out_of_range", detail),
            ServiceError::Internal(reason) => {
                tracing::error!(%reason, "server fault");
                ApiError::internal()
            }
            ServiceError::Rule(rule) => ApiError::new(rule.code(), detail),
            ServiceError::Store(store) => store.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Card, MoveKind, Position, RuleError, Stage};

    fn problem_of(error: impl Into<ServiceError>) -> Problem {
        ApiError::from(error.into()).problem()
    }

    #[test]
    fn writes_that_lose_every_race_or_wait_out_a_lock_are_409s_not_5xx() {
        for (error, code) in [
            (StoreError::Conflict, "write_conflict"),
            (StoreError::Busy, "database_busy"),
        ] {
            let problem = problem_of(error);
            assert_eq!((problem.status, problem.code.as_str()), (409, code));
            assert!(problem.detail.contains("try again"), "{}", problem.detail);
        }
    }

    #[test]
    fn every_rule_violation_has_its_status_its_code_and_its_sentence() {
        let position = Position::new(1).expect("in range");
        let card: Card = "7H".parse().expect("a card code");
        let cases = [
            (RuleError::NotCreated, 404),
            (RuleError::AlreadyCreated, 409),
            (RuleError::GameFull, 409),
            (RuleError::GameNotStarted, 409),
            (RuleError::GameFinished, 409),
            (
                RuleError::NotYourTurn {
                    seat: 0,
                    current: 1,
                },
                409,
            ),
            (
                RuleError::WrongStage {
                    kind: MoveKind::Draw,
                    stage: Some(Stage::Place),
                },
                409,
            ),
            (RuleError::AlreadyRevealed(0), 409),
            (RuleError::SeatTakenByBot(1), 409),
            (RuleError::TurnNotOver(1), 409),
            (RuleError::NoSuchSeat(5), 422),
            (
                RuleError::PositionOutOfRange {
                    position: 9,
                    cells: 6,
                },
                422,
            ),
            (RuleError::DuplicatePositions(position), 422),
            (
                RuleError::InvalidReveal {
                    given: 3,
                    wanted: 2,
                },
                422,
            ),
            (RuleError::PositionAlreadyRevealed(position), 422),
            (RuleError::MustSwapDiscardDraw(card), 422),
            (RuleError::FlipRequired, 422),
            (RuleError::InvalidName("x".into()), 422),
            (RuleError::InvalidClientSeed("x".into()), 422),
            (RuleError::InvalidDeck("x".into()), 422),
            (RuleError::InvalidGameOptions("x".into()), 422),
            (RuleError::AccountRequired, 422),
        ];
        for (rule, status) in cases {
            let (code, sentence) = (rule.code(), rule.to_string());
            let problem = problem_of(rule);
            assert_eq!(problem.status, status, "{code}");
            assert_eq!(problem.code, code);
            assert_eq!(
                problem.detail, sentence,
                "the engine's sentence reaches the client"
            );
        }
    }
}
