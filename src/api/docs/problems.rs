//! The problem responses of the OpenAPI document, under the statuses of the catalog.
//!
//! Those that many operations share (bad bodies, a missing or wrong token, an unknown game, the
//! rate limits, the database's failures) are written here; the others get their examples from
//! the catalog ([`crate::api::codes`]), and `Problem.code` its table of codes.

use utoipa::openapi::example::{Example, ExampleBuilder};
use utoipa::openapi::schema::Schema;
use utoipa::openapi::{Components, ContentBuilder, Ref, RefOr, Response, ResponseBuilder};
use utoipa::{IntoResponses, ToSchema};

use super::{AUTHENTICATE, DocumentedHeaders, RETRY_AFTER, ResponseMap, responses};
use crate::api::codes;
use crate::api::problem::{ApiError, PROBLEM_JSON, Problem};
use crate::config::{DEFAULT_EXPENSIVE_READS_PER_MIN, DEFAULT_WRITES_PER_MIN};

/// `400`, `408` and `413` of an operation with a JSON body.
pub struct BodyProblems;

impl IntoResponses for BodyProblems {
    fn responses() -> ResponseMap {
        responses([
            problem(
                ApiError::malformed(
                    "The body does not parse: missing field `type` at line 1 column 2",
                ),
                "the body or a header does not parse into the request's shape",
            ),
            problem(
                catalog_example("request_timeout"),
                "the body did not arrive in time",
            ),
            problem(ApiError::payload_too_large(), "the body is too large"),
        ])
    }
}

/// `401` of an operation that takes a token, with the `WWW-Authenticate` of every 401.
pub struct Unauthorized;

impl IntoResponses for Unauthorized {
    fn responses() -> ResponseMap {
        let (status, response) = problem(
            ApiError::unauthorized("This token is not a seat or host token of this game."),
            "a token that is not a seat (or host) token of this game, or none where the \
             operation needs one",
        );
        responses([(status, response.with(&AUTHENTICATE))])
    }
}

/// `404` of an operation on one game.
pub struct NoSuchGame;

impl IntoResponses for NoSuchGame {
    fn responses() -> ResponseMap {
        responses([problem(
            ApiError::not_found("There is no such game."),
            "no such game",
        )])
    }
}

/// `429` of the creations (games, joins, accounts, challenges, seeks, webhooks), over the
/// client's budget of them, or of an expert seat over the client's budget of those.
pub struct RateLimited;

impl IntoResponses for RateLimited {
    fn responses() -> ResponseMap {
        let (status, response) = problem(
            catalog_example("rate_limited"),
            &format!(
                "this client created too much of late: games, joins, accounts, challenges, \
                 seeks, webhooks (`GOLF_RATE_LIMIT_PER_MIN`: {DEFAULT_WRITES_PER_MIN} a minute \
                 unless the instance sets another budget, or none), or, for a join, expert bots \
                 (`GOLF_MAX_EXPERT_SEATS_PER_MIN`)"
            ),
        );
        responses([(status, response.with(&RETRY_AFTER))])
    }
}

/// `429` of the expensive reads (exports, audits, replays, log pages), over the client's budget
/// of them.
pub struct ReadsRateLimited;

impl IntoResponses for ReadsRateLimited {
    fn responses() -> ResponseMap {
        let (status, response) = problem(
            catalog_example("rate_limited"),
            &format!(
                "this client asked for too many exports, audits, replays and log pages of late \
                 (`GOLF_READ_RATE_LIMIT_PER_MIN`: {DEFAULT_EXPENSIVE_READS_PER_MIN} a minute \
                 unless the instance sets another budget, or none)"
            ),
        );
        responses([(status, response.with(&RETRY_AFTER))])
    }
}

/// `429` of the stream, when the client holds all of its streams (or the instance counts as many
/// streaming clients as it may).
pub struct TooManyStreams;

impl IntoResponses for TooManyStreams {
    fn responses() -> ResponseMap {
        let (status, response) = problem(
            catalog_example("too_many_streams"),
            "this client holds as many open streams as it may (or, holding none, finds the \
             instance serving as many streaming clients as it may)",
        );
        responses([(status, response.with(&RETRY_AFTER))])
    }
}

/// `500` and `503` of every operation that reads or writes the database.
pub struct DatabaseFailures;

impl IntoResponses for DatabaseFailures {
    fn responses() -> ResponseMap {
        responses([
            problem(
                ApiError::internal(),
                "a fault of the server (its reason is logged, not sent)",
            ),
            problem(
                ApiError::unavailable(),
                "the database cannot be reached; try again shortly",
            ),
        ])
    }
}

/// A problem response under the status of `example`'s code, described as `"{code}: {says}"`,
/// with `example` as its example, named by its code.
pub(super) fn problem(example: ApiError, says: &str) -> (u16, ResponseBuilder) {
    let problem = example.problem();
    let response = ResponseBuilder::new()
        .description(format!("{}: {says}", problem.code))
        .content(
            PROBLEM_JSON,
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name(Problem::name())))
                .examples_from_iter([(problem.code.clone(), problem_example(&problem))])
                .build(),
        );
    (problem.status, response)
}

/// The problem of `code` as the catalog describes it: its meaning as the detail.
fn catalog_example(code: &str) -> ApiError {
    ApiError::new(code, codes::entry(code).meaning)
}

/// The example of a problem response that answers `problem`, summed up by its detail.
fn problem_example(problem: &Problem) -> Example {
    ExampleBuilder::new()
        .summary(problem.detail.clone())
        .value(Some(
            serde_json::to_value(problem).expect("a problem serializes"),
        ))
        .build()
}

/// Documents every problem code in the description of `Problem.code`.
pub(super) fn describe_codes(components: &mut Components) {
    let Some(RefOr::T(Schema::Object(problem))) =
        components.schemas.get_mut(Problem::name().as_ref())
    else {
        panic!("Problem is a component");
    };
    let Some(RefOr::T(Schema::Object(code))) = problem.properties.get_mut("code") else {
        panic!("Problem has a code");
    };
    code.description = Some(codes::markdown());
}

/// Checks a problem response, whose description starts with the codes it answers
/// (`"not_your_turn, wrong_stage: ..."`), against the catalog: each code is there with `status`.
/// Gives the response, if it has none, one example per code, made from the catalog.
pub(super) fn exemplify(status: &str, response: &mut Response) {
    let named = response.description.split(':').next().unwrap_or_default();
    let Some(RefOr::T(content)) = response.content.get_mut(PROBLEM_JSON) else {
        return;
    };
    let without_examples = content.example.is_none() && content.examples.is_empty();
    for code in named.split(',').map(str::trim) {
        let example = catalog_example(code).problem();
        assert_eq!(example.status.to_string(), status, "the status of {code}");
        if without_examples {
            let example = RefOr::T(problem_example(&example));
            content.examples.insert(code.to_owned(), example);
        }
    }
}
