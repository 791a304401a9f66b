//! The problem responses that many operations share: bad bodies, a missing or wrong token, an
//! unknown game, the rate limits, and the database's failures.

use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
use utoipa::{IntoResponses, ToSchema};

use super::{AUTHENTICATE, DocumentedHeaders, RETRY_AFTER, ResponseMap, problem, responses};
use crate::api::problem::{ApiError, Problem};

/// `400`, `408` and `413` of an operation with a JSON body.
pub struct BodyProblems;

impl IntoResponses for BodyProblems {
    fn responses() -> ResponseMap {
        responses([
            (
                400,
                problem(
                    "malformed_request: the body or a header does not parse into the request's shape",
                    ApiError::malformed(
                        "The body does not parse: missing field `type` at line 1 column 2",
                    ),
                ),
            ),
            (
                408,
                problem_of_catalog("request_timeout: the body did not arrive in time"),
            ),
            (
                413,
                problem(
                    "payload_too_large: the body is too large",
                    ApiError::payload_too_large(),
                ),
            ),
        ])
    }
}

/// `401` of an operation that takes a token, with the `WWW-Authenticate` of every 401.
pub struct Unauthorized;

impl IntoResponses for Unauthorized {
    fn responses() -> ResponseMap {
        responses([(
            401,
            problem(
                "unauthorized: a token that is not a seat (or host) token of this game, or none \
                 where the operation needs one",
                ApiError::unauthorized("This token is not a seat or host token of this game."),
            )
            .with(&AUTHENTICATE),
        )])
    }
}

/// `404` of an operation on one game.
pub struct NoSuchGame;

impl IntoResponses for NoSuchGame {
    fn responses() -> ResponseMap {
        responses([(
            404,
            problem(
                "not_found: no such game",
                ApiError::not_found("There is no such game."),
            ),
        )])
    }
}

/// `429` of the operations under the rate limit (game creation and joins), when it is set.
pub struct RateLimited;

impl IntoResponses for RateLimited {
    fn responses() -> ResponseMap {
        responses([(
            429,
            problem_of_catalog(
                "rate_limited: this client address created or joined too many games of late \
                 (only when the instance sets a rate limit)",
            )
            .with(&RETRY_AFTER),
        )])
    }
}

/// `429` of the stream, when the client holds all of its streams.
pub struct TooManyStreams;

impl IntoResponses for TooManyStreams {
    fn responses() -> ResponseMap {
        responses([(
            429,
            problem_of_catalog(
                "too_many_streams: this client address holds as many open streams as it may",
            )
            .with(&RETRY_AFTER),
        )])
    }
}

/// A problem response whose examples [`crate::api::codes::exemplify`] makes from the catalog, by
/// the codes that `description` names.
fn problem_of_catalog(description: &str) -> ResponseBuilder {
    ResponseBuilder::new().description(description).content(
        "application/problem+json",
        ContentBuilder::new()
            .schema(Some(Ref::from_schema_name(Problem::name())))
            .build(),
    )
}

/// `500` and `503` of every operation that reads or writes the database.
pub struct DatabaseFailures;

impl IntoResponses for DatabaseFailures {
    fn responses() -> ResponseMap {
        responses([
            (
                500,
                problem(
                    "internal_error: a fault of the server (its reason is logged, not sent)",
                    ApiError::internal(),
                ),
            ),
            (
                503,
                problem(
                    "unavailable: the database cannot be reached; try again shortly",
                    ApiError::unavailable(),
                ),
            ),
        ])
    }
}
