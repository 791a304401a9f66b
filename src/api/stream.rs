//! The live log of a game as Server-Sent Events.

use actix_web::web::{Bytes, Data, Path, Query};
use actix_web::{HttpRequest, HttpResponse, ResponseError, get};
use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::api::http::{bearer, private};
use crate::api::limits::Limits;
use crate::api::problem::{ApiError, Problem};
use crate::api::{AppState, docs};
use crate::metrics::Metrics;
use crate::service::ParsedLater;
use crate::service::games::live::{LiveItem, LiveLog};

/// The comment sent to an idle stream: no message, only bytes that keep proxies from closing it.
pub const KEEP_ALIVE_COMMENT: &[u8] = b": keep-alive\n\n";

/// The game's log as it grows, redacted for the caller as `/events` redacts it: every entry
/// after `Last-Event-ID` (or `after`), then each new one as it is appended, on any instance.
#[utoipa::path(
    tag = "log",
    params(
        ("id" = Uuid, Path, description = "The game"),
        ("Last-Event-ID" = Option<i64>, Header, minimum = 0, description = "The seq of the last entry received: the stream resumes after it (wins over `after`)"),
        ("after" = Option<i64>, Query, minimum = 0, description = "Entries with `seq` above this (default 0)"),
        ("token" = Option<String>, Query, description = "A seat or host token, for clients that cannot send Authorization (browsers' EventSource); never logged. Authorization wins when both are given"),
    ),
    security((), ("bearer" = [])),
    responses(
        docs::LiveLogStreamed,
        (status = 400, description = "malformed_request: a parameter or Last-Event-ID does not parse", body = Problem, content_type = "application/problem+json"),
        docs::Unauthorized,
        docs::NoSuchGame,
        (status = 422, description = "out_of_range: after or Last-Event-ID is negative", body = Problem, content_type = "application/problem+json"),
        docs::TooManyStreams,
        docs::DatabaseFailures,
    )
)]
#[get("/v1/games/{id}/stream")]
pub async fn stream(
    state: Data<AppState>,
    request: HttpRequest,
    id: Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let query = StreamQuery::parse(request.query_string());
    let token = bearer(&request).or_else(|| query.token.clone());
    // Reported after the game and the token, as for `/events`.
    let after = match query
        .after
        .and_then(|after| Ok(resume_after(after, last_event_id(&request)?)))
    {
        Ok(after) => ParsedLater::parsed(after),
        Err(detail) => ParsedLater::malformed(detail),
    };
    let live = state
        .services
        .views
        .live_log(*id, token.as_deref(), after)
        .await?;
    Ok(event_stream(&request, events(live, state.stopping.clone())))
}

/// Answers `messages` as a server-sent event stream held in one of the client's stream slots
/// until it ends, or 429 `too_many_streams` when the client holds them all.
pub fn event_stream(
    request: &HttpRequest,
    messages: impl futures_util::Stream<Item = Result<Bytes, actix_web::Error>> + 'static,
) -> HttpResponse {
    let slot = match request
        .app_data::<Data<Limits>>()
        .map(|l| l.open_stream(request))
    {
        Some(Err(too_many)) => return too_many.error_response(),
        Some(Ok(slot)) => slot,
        None => None,
    };
    let open = request
        .app_data::<Data<Metrics>>()
        .map(|metrics| metrics.stream_opened());
    let held = messages.map(move |item| {
        // The slot is the client's, and the stream counted open, until it ends.
        let _held = (&slot, &open);
        item
    });
    private(HttpResponse::Ok())
        .content_type("text/event-stream")
        // Proxies that buffer responses (nginx) would hold the events back.
        .insert_header(("X-Accel-Buffering", "no"))
        .streaming(held)
}

/// The query of a stream: `after`, and the `token` of clients that cannot set headers.
pub struct StreamQuery {
    pub after: Result<Option<i64>, String>,
    pub token: Option<String>,
}

impl StreamQuery {
    /// Reads the token even when `after` does not parse, so that a bad token wins (401) over a
    /// bad parameter (400).
    pub fn parse(query: &str) -> StreamQuery {
        let pairs = match Query::<Vec<(String, String)>>::from_query(query) {
            Ok(pairs) => pairs.into_inner(),
            Err(error) => {
                return StreamQuery {
                    after: Err(format!("The query does not parse: {error}")),
                    token: None,
                };
            }
        };
        let mut parsed = StreamQuery {
            after: Ok(None),
            token: None,
        };
        for (name, value) in pairs {
            match name.as_str() {
                "token" => parsed.token = Some(value),
                "after" => {
                    let after = value
                        .parse::<i64>()
                        .map_err(|_| "after must be a whole number.".to_owned());
                    parsed.after = parsed.after.and(after.map(Some));
                }
                // The name only: a value may be a secret sent under a misspelt name.
                other => {
                    parsed.after = parsed
                        .after
                        .and(Err(format!("unknown query parameter `{other}`")))
                }
            }
        }
        parsed
    }
}

/// Where the stream starts: after `Last-Event-ID` when there is one, else after `after`. A
/// negative `after` is kept even then, so that it is refused (422) as the spec says it is,
/// whichever of the two wins.
pub fn resume_after(after: Option<i64>, last_event_id: Option<i64>) -> Option<i64> {
    match (after, last_event_id) {
        (Some(after), _) if after < 0 => Some(after),
        (_, Some(last)) => Some(last),
        (after, None) => after,
    }
}

/// The `Last-Event-ID` header: the seq of the last entry the client received.
pub fn last_event_id(request: &HttpRequest) -> Result<Option<i64>, String> {
    let Some(value) = request.headers().get("last-event-id") else {
        return Ok(None);
    };
    value
        .to_str()
        .ok()
        .and_then(|text| text.trim().parse::<i64>().ok())
        .map(Some)
        .ok_or_else(|| "Last-Event-ID must be the seq of an entry.".to_owned())
}

/// The body: messages until the game is gone or the server stops (then clients resume
/// elsewhere with `Last-Event-ID`); the client leaving drops it.
fn events(
    live: LiveLog,
    stopping: CancellationToken,
) -> impl futures_util::Stream<Item = Result<Bytes, actix_web::Error>> {
    futures_util::stream::unfold((live, stopping), |(mut live, stopping)| async move {
        let item = tokio::select! {
            biased;
            _ = stopping.cancelled() => return None,
            item = live.next() => item,
        };
        let bytes = match item {
            LiveItem::Entries(entries) => Bytes::from(messages(&entries)),
            LiveItem::KeepAlive => Bytes::from_static(KEEP_ALIVE_COMMENT),
            LiveItem::Closed | LiveItem::Revoked => return None,
        };
        Some((Ok(bytes), (live, stopping)))
    })
}

/// One SSE message per entry: `id:` its seq, `data:` the entry on one line (compact JSON has no
/// raw newline).
pub fn messages(entries: &[(i64, impl std::fmt::Display)]) -> String {
    let mut text = String::new();
    for (seq, entry) in entries {
        text.push_str(&format!("id: {seq}\ndata: {entry}\n\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::StreamQuery;

    #[test]
    fn the_token_is_read_even_when_after_does_not_parse() {
        let query = StreamQuery::parse("after=x&token=abc");
        assert_eq!(query.token.as_deref(), Some("abc"));
        assert!(query.after.is_err());
        let query = StreamQuery::parse("after=4");
        assert_eq!(query.after, Ok(Some(4)));
        assert!(StreamQuery::parse("tokne=abc").after.is_err());
    }
}
