//! Logging: the tracing subscriber, and the root span of every HTTP request.
//!
//! Log lines are an audience we do not control, so the request span records the path and a
//! query string with secret parameters masked, and never a header: a bearer token or a `token`
//! parameter must not reach a log file.

use std::io::IsTerminal;

use actix_web::Error;
use actix_web::HttpMessage;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use tracing::Span;
use tracing_actix_web::{DefaultRootSpanBuilder, RequestId, RootSpanBuilder};
use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

/// Query parameters whose values are replaced by `[redacted]` in logs.
const SECRET_PARAMETERS: &[&str] = &["token", "access_token", "host_token"];

/// Installs the global subscriber writing to standard output.
///
/// `filter` was validated by [`crate::config::Config`]; installing twice is a no-op.
pub fn init(format: LogFormat, filter: &str) {
    let filter = EnvFilter::try_new(filter).unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stdout().is_terminal());
    let installed = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
    // A second call (tests that start several servers) keeps the first subscriber.
    drop(installed);
}

/// The root span of each request: method, route, path with masked query, request id, status.
pub struct RedactingRootSpan;

impl RootSpanBuilder for RedactingRootSpan {
    /// The fields are computed only when the span is enabled (the macro evaluates them only
    /// then): the route alone is a second match of the path against every route.
    fn on_request_start(request: &ServiceRequest) -> Span {
        tracing::info_span!(
            "http_request",
            http.method = %request.method(),
            http.route = %request.match_pattern().as_deref().unwrap_or("unmatched"),
            http.target = %redacted_target(request.path(), request.query_string()),
            http.status_code = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
            exception.message = tracing::field::Empty,
            exception.details = tracing::field::Empty,
            request_id = %request
                .extensions()
                .get::<RequestId>()
                .map(ToString::to_string)
                .unwrap_or_default(),
        )
    }

    fn on_request_end<B: MessageBody>(span: Span, outcome: &Result<ServiceResponse<B>, Error>) {
        let status = match outcome {
            Ok(response) => response.status().as_u16(),
            Err(error) => error.as_response_error().status_code().as_u16(),
        };
        // Records the status, and an error's message, on the span that the one line below shows.
        DefaultRootSpanBuilder::on_request_end(span.clone(), outcome);
        span.in_scope(|| {
            if status >= 500 {
                tracing::error!(status, "request failed");
            } else {
                tracing::info!(status, "request finished");
            }
        });
    }
}

/// The path and query as logged: values of [`SECRET_PARAMETERS`] are masked, under any
/// spelling of their names that the server reads as theirs (any case, any letter
/// percent-encoded: `%74oken`, `TOK%45N`).
pub fn redacted_target(path: &str, query: &str) -> String {
    if query.is_empty() {
        return path.to_owned();
    }
    let masked: Vec<String> = query
        .split('&')
        .map(|pair| {
            let name = pair.split('=').next().unwrap_or_default();
            let decoded = decode_name(name);
            if SECRET_PARAMETERS
                .iter()
                .any(|secret| decoded.eq_ignore_ascii_case(secret))
            {
                format!("{name}=[redacted]")
            } else {
                pair.to_owned()
            }
        })
        .collect();
    format!("{path}?{}", masked.join("&"))
}

/// A parameter name as the server's query parser reads it: `+` is a space, `%XX` the byte
/// XX (an invalid escape stays as it is).
fn decode_name(name: &str) -> String {
    let bytes = name.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match (bytes[i], escaped) {
            (_, Some(byte)) => {
                decoded.push(byte);
                i += 3;
            }
            (b'+', None) => {
                decoded.push(b' ');
                i += 1;
            }
            (byte, None) => {
                decoded.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

#[cfg(test)]
mod tests {
    use super::redacted_target;

    #[test]
    fn token_parameters_are_masked_under_any_spelling() {
        assert_eq!(
            redacted_target("/s", "%74oken=a&TOK%45N=b&%54%4F%4B%45%4E=c&after=1"),
            "/s?%74oken=[redacted]&TOK%45N=[redacted]&%54%4F%4B%45%4E=[redacted]&after=1"
        );
        assert_eq!(
            redacted_target("/s", "host%5Ftoken=a&Access_Token=b&tokens=c"),
            "/s?host%5Ftoken=[redacted]&Access_Token=[redacted]&tokens=c"
        );
    }

    #[test]
    fn token_parameters_are_masked_and_others_kept() {
        assert_eq!(
            redacted_target("/v1/games/x/stream", "token=abc&after=3&TOKEN=def"),
            "/v1/games/x/stream?token=[redacted]&after=3&TOKEN=[redacted]"
        );
        assert_eq!(redacted_target("/healthz", ""), "/healthz");
    }
}
