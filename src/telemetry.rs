//! Logging: the tracing subscriber, and the root span of every HTTP request.
//!
//! Log lines are an audience we do not control, so the request span records the path and a
//! query string with secret parameters masked, and never a header: a bearer token or a `token`
//! parameter must not reach a log file. Nor may a client write lines of its own: the text format
//! escapes the characters that would end a line or hide text in every field ([`EscapedFields`]),
//! and the errors that any client can cause in actix's HTTP/1 dispatcher are logged at DEBUG,
//! not ERROR ([`DemoteDispatcherErrors`]).

use std::borrow::Cow;
use std::fmt;
use std::io::IsTerminal;

use actix_web::Error;
use actix_web::HttpMessage;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Metadata, Span, Subscriber};
use tracing_actix_web::{DefaultRootSpanBuilder, RequestId, RootSpanBuilder};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::field::{MakeVisitor, VisitFmt, VisitOutput};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::writer::BoxMakeWriter;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

use crate::config::LogFormat;
use crate::engine::inputs::is_deceptive;

/// Query parameters whose values are replaced by `[redacted]` in logs.
const SECRET_PARAMETERS: &[&str] = &["token", "access_token", "host_token"];

/// The target of actix's HTTP/1 dispatcher, which logs at ERROR each request head it cannot
/// parse and each body a client breaks off.
const DISPATCHER: &str = "actix_http::h1::dispatcher";

/// Where log lines go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogOutput {
    /// The server's: its standard output is its log.
    Stdout,
    /// A command's, whose standard output is its result (`fill`'s accounts, `check-db`'s
    /// report): the lines of a worker still busy as it ends must not mix with it.
    Stderr,
}

/// Installs the global subscriber writing to `output`.
///
/// `filter` was validated by [`crate::config::Config`]; installing twice is a no-op.
pub fn init(format: LogFormat, filter: &str, output: LogOutput) {
    let filter = EnvFilter::try_new(filter).unwrap_or_else(|_| EnvFilter::new("info"));
    let (writer, terminal) = match output {
        LogOutput::Stdout => (
            BoxMakeWriter::new(std::io::stdout),
            std::io::stdout().is_terminal(),
        ),
        LogOutput::Stderr => (
            BoxMakeWriter::new(std::io::stderr),
            std::io::stderr().is_terminal(),
        ),
    };
    let output = tracing_subscriber::fmt::layer()
        .with_writer(writer)
        .with_ansi(terminal);
    let subscriber = tracing_subscriber::registry()
        .with(filter)
        .with(DemoteDispatcherErrors);
    let installed = match format {
        LogFormat::Text => subscriber.with(output.fmt_fields(EscapedFields)).try_init(),
        LogFormat::Json => subscriber
            .with(output.json().flatten_event(true))
            .try_init(),
    };
    // A second call (tests that start several servers) keeps the first subscriber.
    drop(installed);
}

fn is_dispatcher_error(metadata: &Metadata<'_>) -> bool {
    metadata.target() == DISPATCHER && *metadata.level() == Level::ERROR
}

/// Turns each ERROR event of actix's HTTP/1 dispatcher into a DEBUG one, under the same target:
/// a client causes them at will (a request head that does not parse, a body cut short), so at
/// ERROR any client could fill the error log and page whoever watches it. A fault of ours shows
/// as a 5xx of the request span instead.
struct DemoteDispatcherErrors;

impl<S: Subscriber> Layer<S> for DemoteDispatcherErrors {
    /// Logs the event again at DEBUG and disables it for every layer: the one hook that runs
    /// before any layer writes it, and outside its dispatch, so the DEBUG event is one of its own.
    fn event_enabled(&self, event: &Event<'_>, _: Context<'_, S>) -> bool {
        if !is_dispatcher_error(event.metadata()) {
            return true;
        }
        let mut message = MessageText::default();
        event.record(&mut message);
        tracing::debug!(target: DISPATCHER, "{}", message.0);
        false
    }
}

/// The `message` of an event, as text.
#[derive(Default)]
struct MessageText(String);

impl Visit for MessageText {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

/// The fields of the text format, written as tracing-subscriber writes them (`name=value`, the
/// message bare) but with [`escaped`] values: some carry what a client sent (an error's message
/// quotes a field name of its body), which must not start a line of its own or rewrite the
/// terminal that shows it.
struct EscapedFields;

impl<'writer> MakeVisitor<Writer<'writer>> for EscapedFields {
    type Visitor = EscapingVisitor<'writer>;

    fn make_visitor(&self, writer: Writer<'writer>) -> EscapingVisitor<'writer> {
        EscapingVisitor {
            writer,
            result: Ok(()),
            first: true,
        }
    }
}

/// Writes the fields of one event or span for [`EscapedFields`].
struct EscapingVisitor<'writer> {
    writer: Writer<'writer>,
    result: fmt::Result,
    first: bool,
}

impl Visit for EscapingVisitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.record_debug(field, &format_args!("{value}"));
        } else {
            self.record_debug(field, &value);
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        // `log.*`: the metadata of a `log` record, which the line shows already.
        if self.result.is_err() || field.name().starts_with("log.") {
            return;
        }
        let value = format!("{value:?}");
        let separator = if std::mem::take(&mut self.first) {
            ""
        } else {
            " "
        };
        self.result = match field.name() {
            "message" => write!(self.writer, "{separator}{}", escaped(&value)),
            name => {
                let name = name.trim_start_matches("r#");
                write!(self.writer, "{separator}{name}={}", escaped(&value))
            }
        };
    }
}

impl VisitOutput<fmt::Result> for EscapingVisitor<'_> {
    fn finish(self) -> fmt::Result {
        self.result
    }
}

impl VisitFmt for EscapingVisitor<'_> {
    fn writer(&mut self) -> &mut dyn fmt::Write {
        &mut self.writer
    }
}

/// `text` with each character that could end a line, forge one or hide text written as a Rust
/// string escape (`\n`, `\u{1b}`): control characters (newlines, the ESC of ANSI sequences), the
/// line and paragraph separators, and the invisible and direction-changing characters.
fn escaped(text: &str) -> Cow<'_, str> {
    let hiding =
        |c: char| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') || is_deceptive(c);
    if !text.chars().any(hiding) {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if hiding(c) {
            escaped.extend(c.escape_default());
        } else {
            escaped.push(c);
        }
    }
    Cow::Owned(escaped)
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
    use super::{escaped, redacted_target};

    #[test]
    fn characters_that_break_or_hide_a_line_are_escaped() {
        assert_eq!(
            escaped("a\nERROR b\r\u{1b}[31m\u{202E}\u{2028}\u{85}c"),
            "a\\nERROR b\\r\\u{1b}[31m\\u{202e}\\u{2028}\\u{85}c"
        );
        assert!(matches!(
            escaped("/v1/games/é?after=1"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

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
