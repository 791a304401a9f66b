//! HTTP details the handlers share: bodies, bearer tokens, `Idempotency-Key` and the client it is
//! scoped to, `If-Match`, `ETag` and `If-None-Match`, and the caching headers of private answers.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::web::{Bytes, Data};
use actix_web::{HttpRequest, HttpResponse, HttpResponseBuilder};
use serde::Serialize;
use serde_json::Value;

use crate::api::limits::Limits;
use crate::api::problem::ApiError;
use crate::engine::View;
use crate::service::{Answer, IdempotencyKey, ServiceError, VersionPrecondition};
use crate::store::StoredResponse;

/// Whether a response depends on who asks.
#[derive(Clone, Copy)]
pub enum Privacy {
    Public,
    Secret,
}

/// Marks a response as the caller's own: never cached, and varying with the token.
pub fn private(mut builder: HttpResponseBuilder) -> HttpResponseBuilder {
    builder
        .insert_header((header::CACHE_CONTROL, "private, no-store"))
        .insert_header((header::VARY, "Authorization"));
    builder
}

/// The strong `ETag` of a game at `version`.
pub fn etag(version: u64) -> String {
    format!("\"{version}\"")
}

/// Whether the request's `If-None-Match` names `tag`: the client has the current answer.
pub fn none_match(request: &HttpRequest, tag: &str) -> bool {
    request
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            // If-None-Match compares weakly (RFC 9110); `*` matches any current answer.
            value.split(',').any(|candidate| {
                let candidate = candidate.trim();
                candidate == "*" || candidate.trim_start_matches("W/") == tag
            })
        })
}

/// A view with its `ETag`, or 304 when `If-None-Match` names it.
pub fn view_response(request: &HttpRequest, view: &View, privacy: Privacy) -> HttpResponse {
    let tag = etag(view.version);
    let unchanged = none_match(request, &tag);
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

/// The answer of a write, private to its caller, with the `ETag` of the version it shows, if it
/// shows one: `fresh` gives the status and version of one just computed; a replayed answer is
/// sent as it was stored, its version read from its body.
pub fn answer_response<T: Serialize>(
    answer: &Answer<T>,
    fresh: impl Fn(&T) -> (StatusCode, Option<u64>),
) -> HttpResponse {
    match answer {
        Answer::Fresh(value) => {
            let (status, version) = fresh(value);
            let mut builder = private(HttpResponse::build(status));
            if let Some(version) = version {
                builder.insert_header((header::ETAG, etag(version)));
            }
            builder.json(value)
        }
        Answer::Replayed(StoredResponse { status, body, .. }) => {
            let status = StatusCode::from_u16(*status).unwrap_or(StatusCode::OK);
            let mut builder = private(HttpResponse::build(status));
            if let Some(version) = body.get("version").and_then(Value::as_u64) {
                builder.insert_header((header::ETAG, etag(version)));
            }
            builder.json(body)
        }
    }
}

/// Adds `Location` naming `path`.
pub fn with_location(mut response: HttpResponse, path: &str) -> HttpResponse {
    if let Ok(location) = HeaderValue::from_str(path) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    response
}

/// The request body: one over [`crate::api::MAX_BODY_BYTES`] is a 413 `payload_too_large`.
pub fn read_body(body: Result<Bytes, actix_web::Error>) -> Result<Bytes, ApiError> {
    body.map_err(
        |error| match error.as_error::<actix_web::error::PayloadError>() {
            Some(actix_web::error::PayloadError::Overflow) => ApiError::payload_too_large(),
            Some(actix_web::error::PayloadError::Io(io))
                if io.kind() == std::io::ErrorKind::TimedOut =>
            {
                ApiError::new("request_timeout", "The body did not arrive in time.")
            }
            _ => ApiError::malformed(format!("The body cannot be read: {error}")),
        },
    )
}

/// Parses a JSON body into its shape: every failure is a 400 `malformed_request`. Every body is
/// an object: serde would also read a struct from an array of its fields in order. A number
/// with an integral value is read as an integer wherever it is ([`integral_floats_as_integers`]).
pub fn parse_body<T: serde::de::DeserializeOwned>(body: &Bytes) -> Result<T, ApiError> {
    if body.iter().find(|byte| !byte.is_ascii_whitespace()) == Some(&b'[') {
        return Err(ApiError::malformed(
            "The body must be a JSON object, not an array.",
        ));
    }
    let does_not_parse =
        |error: serde_json::Error| ApiError::malformed(format!("The body does not parse: {error}"));
    let mut value: Value = serde_json::from_slice(body).map_err(does_not_parse)?;
    integral_floats_as_integers(&mut value);
    T::deserialize(value).map_err(does_not_parse)
}

/// Turns every number written with a fraction or an exponent but of integral value (`4.0`,
/// `1e3`) into the integer it is. JSON Schema counts such a number as an `integer`, so a client
/// generated from the spec may send one where the schema says integer; serde would refuse it
/// for an integer field. Fields that take any number read it the same either way.
fn integral_floats_as_integers(value: &mut Value) {
    match value {
        Value::Number(number) => {
            if let Some(integer) = integer_of(number) {
                *number = integer;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_floats_as_integers),
        Value::Object(fields) => fields.values_mut().for_each(integral_floats_as_integers),
        Value::Null | Value::Bool(_) | Value::String(_) => {}
    }
}

/// The integer a float stands for, when it is integral and within `i64` or `u64`.
fn integer_of(number: &serde_json::Number) -> Option<serde_json::Number> {
    // 2^63 and 2^64, exactly: the first floats past `i64::MAX` and `u64::MAX`.
    const I64_END: f64 = 9_223_372_036_854_775_808.0;
    const U64_END: f64 = 18_446_744_073_709_551_616.0;
    let float = number.as_f64().filter(|_| number.is_f64())?;
    if float.fract() != 0.0 {
        return None;
    }
    if (-I64_END..I64_END).contains(&float) {
        Some((float as i64).into())
    } else if (0.0..U64_END).contains(&float) {
        Some((float as u64).into())
    } else {
        None
    }
}

/// The token of the `Authorization` header, if there is one (the scheme `Bearer` is
/// case-insensitive, RFC 9110). A header that is not `Bearer <token>` (another scheme, or a bare
/// token) becomes the empty token, which no seat or host has, so that it fails authentication
/// (401) in its turn, after the game is found: a bad credential is never taken for no credential,
/// nor for a good one.
pub fn bearer(request: &HttpRequest) -> Option<String> {
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

/// The request's `Idempotency-Key`, checked by `check` against the body it came with.
pub fn idempotency_key(
    request: &HttpRequest,
    body: &[u8],
    check: impl Fn(&str, &[u8]) -> Result<IdempotencyKey, ServiceError>,
) -> Result<Option<IdempotencyKey>, ApiError> {
    header_text(request, header::HeaderName::from_static("idempotency-key"))?
        .map(|key| check(&key, body).map_err(ApiError::from))
        .transpose()
}

/// Who sends `request`, as the scope of its creation and join `Idempotency-Key`s: the client the
/// rate limiter counts ([`Limits::client_of`]: the peer, or the client a trusted proxy forwards
/// for), or the peer where no limits are set; empty when the peer is not known (no socket).
pub fn client_scope(request: &HttpRequest) -> String {
    let client = match request.app_data::<Data<Limits>>() {
        Some(limits) => limits.client_of(request).map(|client| client.to_string()),
        None => request
            .peer_addr()
            .map(|peer| peer.ip().to_canonical().to_string()),
    };
    client.unwrap_or_default()
}

/// The request's `If-Match`: `*`, or a list of entity-tags (RFC 9110) of which a bare number is
/// taken as the quoted tag it stands for, for people typing it by hand. It compares strongly: a
/// weak tag never matches. Empty list elements are skipped, as RFC 9110 asks of recipients;
/// anything else (`null`, `*` within a list, an unquoted word, no tag at all) is a 400, as
/// [`crate::api::constraints::if_match_pattern`] tells clients.
pub fn if_match(request: &HttpRequest) -> Result<Option<VersionPrecondition>, ApiError> {
    let Some(sent) = header_text(request, header::IF_MATCH)? else {
        return Ok(None);
    };
    let malformed = || {
        ApiError::malformed(
            "If-Match must be *, or a list of ETags such as \"17\" (the ETag of a view).",
        )
    };
    if sent.trim() == "*" {
        return Ok(Some(VersionPrecondition {
            sent,
            any: true,
            versions: Vec::new(),
        }));
    }
    let members: Vec<&str> = sent
        .split(',')
        .map(|member| member.trim_matches([' ', '\t']))
        .filter(|member| !member.is_empty())
        .collect();
    if members.is_empty() {
        return Err(malformed());
    }
    let mut versions = Vec::new();
    for member in members {
        match tag_member(member).ok_or_else(malformed)? {
            TagMember::Version(version) => versions.push(version.to_owned()),
            TagMember::Weak => {}
        }
    }
    Ok(Some(VersionPrecondition {
        sent,
        any: false,
        versions,
    }))
}

/// One member of an `If-Match` list.
enum TagMember<'a> {
    /// A strong tag's opaque text, or a bare number.
    Version(&'a str),
    /// A weak tag: it never matches under the strong comparison.
    Weak,
}

/// Reads `"17"`, `W/"17"` or `17`; `None` for anything else.
fn tag_member(member: &str) -> Option<TagMember<'_>> {
    // etagc of RFC 9110: visible ASCII but the double quote (obs-text is not visible ASCII).
    let opaque = |quoted: &'_ str| -> Option<()> {
        let inner = quoted.strip_prefix('"')?.strip_suffix('"')?;
        inner
            .bytes()
            .all(|byte| byte.is_ascii_graphic() && byte != b'"')
            .then_some(())
    };
    if let Some(weak) = member.strip_prefix("W/") {
        return opaque(weak).map(|()| TagMember::Weak);
    }
    if opaque(member).is_some() {
        return Some(TagMember::Version(&member[1..member.len() - 1]));
    }
    member
        .bytes()
        .all(|byte| byte.is_ascii_digit())
        .then_some(TagMember::Version(member))
}
