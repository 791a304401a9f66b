//! The parts of the OpenAPI document that several operations share, written once: the success
//! responses, with the headers their handlers set, and those headers; the problem responses are
//! in [`problems`].

use std::collections::BTreeMap;

use utoipa::openapi::link::{Link, LinkBuilder};
use utoipa::openapi::{
    ContentBuilder, Header, HeaderBuilder, Object, ObjectBuilder, OpenApi, Ref, RefOr, Response,
    ResponseBuilder, Type,
};
use utoipa::{IntoResponses, ToSchema};

use crate::api::codes;
use crate::engine::{Analysis, AnalysisStatus, View};
use crate::service::{Audit, CreatedGame, EventsPage, Joined, LobbyPage, ServiceError};

mod problems;

pub use problems::{
    BodyProblems, DatabaseFailures, NoSuchGame, RateLimited, ReadsRateLimited, TooManyStreams,
    Unauthorized,
};

/// The description of the `If-None-Match` request header of the views.
pub const IF_NONE_MATCH: &str = "The ETag of an earlier answer: 304 while it is still current";

type ResponseMap = BTreeMap<String, RefOr<Response>>;

/// A response header, described once in the document's `components/headers` and referred to
/// by every response that carries it.
struct DocumentedHeader {
    /// The header's name in responses.
    name: &'static str,
    /// Its key in `components/headers` (one name may carry values of different meanings).
    component: &'static str,
    description: &'static str,
    example: &'static str,
}

const REQUEST_ID: DocumentedHeader = DocumentedHeader {
    name: "X-Request-Id",
    component: "X-Request-Id",
    description: "The id of this request in the server's logs: quote it when reporting a problem",
    example: "0b8f8a4e-2f6a-4f36-9d53-5c1f0e9a7b21",
};
const AUTHENTICATE: DocumentedHeader = DocumentedHeader {
    name: "WWW-Authenticate",
    component: "WWW-Authenticate",
    description: "The scheme the token goes with",
    example: "Bearer",
};
const ETAG: DocumentedHeader = DocumentedHeader {
    name: "ETag",
    component: "ETag",
    description: "The game's version as a strong tag, for If-None-Match on views and If-Match on moves",
    example: "\"17\"",
};
const LOCATION: DocumentedHeader = DocumentedHeader {
    name: "Location",
    component: "Location",
    description: "The path of the new game",
    example: "/v1/games/4b3a1f64-5f2c-4a8e-9d0b-1c2d3e4f5a6b",
};
const CACHE_PRIVATE: DocumentedHeader = DocumentedHeader {
    name: "Cache-Control",
    component: "Cache-Control-private",
    description: "The answer is for the caller's token only: no cache may keep it",
    example: "private, no-store",
};
const VARY: DocumentedHeader = DocumentedHeader {
    name: "Vary",
    component: "Vary",
    description: "The answer depends on the Authorization header",
    example: "Authorization",
};
const CACHE_NO_CACHE: DocumentedHeader = DocumentedHeader {
    name: "Cache-Control",
    component: "Cache-Control-no-cache",
    description: "The same for every caller; revalidate it (If-None-Match) before reuse",
    example: "no-cache",
};

const CACHE_IMMUTABLE: DocumentedHeader = DocumentedHeader {
    name: "Cache-Control",
    component: "Cache-Control-immutable",
    description: "A finished game's log never changes: any cache may keep it",
    example: IMMUTABLE,
};
const CONTENT_DISPOSITION: DocumentedHeader = DocumentedHeader {
    name: "Content-Disposition",
    component: "Content-Disposition",
    description: "A download, named after the game",
    example: "attachment; filename=\"golf-4b3a1f64-5f2c-4a8e-9d0b-1c2d3e4f5a6b.ndjson\"",
};

const RETRY_AFTER: DocumentedHeader = DocumentedHeader {
    name: "Retry-After",
    component: "Retry-After",
    description: "In how many seconds to try again",
    example: "12",
};

/// The `Cache-Control` of an answer that never changes (a finished game's export).
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// The media type of an exported log: one JSON entry a line.
pub const NDJSON: &str = "application/x-ndjson";

impl DocumentedHeader {
    const ALL: [&DocumentedHeader; 10] = [
        &REQUEST_ID,
        &AUTHENTICATE,
        &ETAG,
        &LOCATION,
        &CACHE_PRIVATE,
        &VARY,
        &CACHE_NO_CACHE,
        &CACHE_IMMUTABLE,
        &CONTENT_DISPOSITION,
        &RETRY_AFTER,
    ];

    fn definition(&self) -> Header {
        HeaderBuilder::new()
            .schema(Some(Object::with_type(Type::String)))
            .description(Some(self.description))
            .example(Some(self.example.into()))
            .build()
    }

    fn reference(&self) -> Ref {
        Ref::new(format!("#/components/headers/{}", self.component))
    }
}

/// The response headers that handlers set, by what they tell the client.
trait DocumentedHeaders: Sized {
    fn with(self, header: &DocumentedHeader) -> Self;

    /// `ETag`: the version of the view in the body.
    fn etag(self) -> Self {
        self.with(&ETAG)
    }

    /// `Cache-Control: private, no-store` and `Vary: Authorization`: the answer depends on the
    /// caller's token.
    fn private(self) -> Self {
        self.with(&CACHE_PRIVATE).with(&VARY)
    }

    /// `Cache-Control: no-cache`: the same for everyone, but revalidated before reuse.
    fn no_cache(self) -> Self {
        self.with(&CACHE_NO_CACHE)
    }

    /// `Location`: where the new game lives.
    fn location(self) -> Self {
        self.with(&LOCATION)
    }
}

impl DocumentedHeaders for ResponseBuilder {
    fn with(self, header: &DocumentedHeader) -> Self {
        self.header_ref(header.name, header.reference())
    }
}

/// A JSON response whose body is a `T` (which [`crate::api::ApiDoc`] registers), with `example`:
/// a real answer of the service, kept in `openapi/examples/` (a test validates each against `T`).
fn json<T: ToSchema>(description: &str, example: &str) -> ResponseBuilder {
    let example: serde_json::Value = serde_json::from_str(example).expect("examples are JSON");
    ResponseBuilder::new().description(description).content(
        "application/json",
        ContentBuilder::new()
            .schema(Some(Ref::from_schema_name(T::name())))
            .example(Some(example))
            .build(),
    )
}

/// Real answers, as examples.
const VIEW_EXAMPLE: &str = include_str!("../../openapi/examples/view.json");
const PUBLIC_VIEW_EXAMPLE: &str = include_str!("../../openapi/examples/public_view.json");
const CREATED_EXAMPLE: &str = include_str!("../../openapi/examples/created.json");
const JOINED_EXAMPLE: &str = include_str!("../../openapi/examples/joined.json");
const LOBBY_EXAMPLE: &str = include_str!("../../openapi/examples/lobby.json");
const EVENTS_EXAMPLE: &str = include_str!("../../openapi/examples/events.json");
const AUDIT_EXAMPLE: &str = include_str!("../../openapi/examples/audit.json");
const LEFT_EXAMPLE: &str = include_str!("../../openapi/examples/left.json");
const ANALYSIS_EXAMPLE: &str = include_str!("../../openapi/examples/analysis.json");

/// A `304 Not Modified` to a request whose `If-None-Match` is still current.
fn not_modified() -> ResponseBuilder {
    ResponseBuilder::new()
        .description("Unchanged since If-None-Match: no body")
        .etag()
}

fn responses<const N: usize>(entries: [(u16, ResponseBuilder); N]) -> ResponseMap {
    entries
        .into_iter()
        .map(|(status, response)| (status.to_string(), response.into()))
        .collect()
}

/// `201` to `POST /v1/games`.
pub struct GameCreated;

impl IntoResponses for GameCreated {
    fn responses() -> ResponseMap {
        responses([(
            201,
            json::<CreatedGame>(
                "Created: the public view (with `commitment`) and the secret `host_token`",
                CREATED_EXAMPLE,
            )
            .link(
                "join",
                LinkBuilder::new()
                    .operation_id("join_game")
                    .parameter("id", "$response.body#/id")
                    .description("Take a seat in the new game")
                    .build(),
            )
            .location()
            .etag()
            .private(),
        )])
    }
}

/// A link from joining to an operation of the seat: the game of the request, with the token of
/// the answer.
fn seat_link(operation: &str, description: &str) -> Link {
    LinkBuilder::new()
        .operation_id(operation)
        .parameter("id", "$request.path.id")
        .parameter("header.Authorization", "Bearer {$response.body#/token}")
        .description(description)
        .build()
}

/// `200` to `GET /v1/games`.
pub struct LobbyPageShown;

impl IntoResponses for LobbyPageShown {
    fn responses() -> ResponseMap {
        responses([(
            200,
            json::<LobbyPage>("One page of the lobby", LOBBY_EXAMPLE).no_cache(),
        )])
    }
}

/// `201` to `POST /v1/games/{id}/players`.
pub struct SeatTaken;

impl IntoResponses for SeatTaken {
    fn responses() -> ResponseMap {
        responses([(
            201,
            json::<Joined>(
                "The seat taken and, for a person, its token",
                JOINED_EXAMPLE,
            )
            .private()
            .link("view", seat_link("own_view", "The seat's own view"))
            .link("move", seat_link("make_move", "A move of the seat"))
            .link(
                "leave",
                seat_link("leave_game", "Give the seat to the bot, once the game runs"),
            ),
        )])
    }
}

/// `200` and `304` of the public view: the same for every caller.
pub struct PublicView;

impl IntoResponses for PublicView {
    fn responses() -> ResponseMap {
        responses([
            (
                200,
                json::<View>(
                    "The public view; its ETag is its version",
                    PUBLIC_VIEW_EXAMPLE,
                )
                .etag()
                .no_cache(),
            ),
            (304, not_modified().no_cache()),
        ])
    }
}

/// `200` and `304` of a view that depends on the caller's token (own views, replays).
pub struct CallersView;

impl IntoResponses for CallersView {
    fn responses() -> ResponseMap {
        responses([
            (
                200,
                json::<View>(
                    "The view as the caller sees it; its ETag is its version",
                    VIEW_EXAMPLE,
                )
                .etag()
                .private(),
            ),
            (304, not_modified().private()),
        ])
    }
}

/// `200` to a move.
pub struct MovePlayed;

impl IntoResponses for MovePlayed {
    fn responses() -> ResponseMap {
        responses([(
            200,
            json::<View>(
                "The caller's view after the move and the bot turns it triggered",
                VIEW_EXAMPLE,
            )
            .etag()
            .private(),
        )])
    }
}

/// `200` to `POST /v1/games/{id}/leave`.
pub struct SeatLeft;

impl IntoResponses for SeatLeft {
    fn responses() -> ResponseMap {
        responses([(
            200,
            json::<View>(
                "The caller's view once the bot took the seat and played the turns it owed: the \
                 seat's `bot` is `greedy` and `legal_moves` is empty",
                LEFT_EXAMPLE,
            )
            .etag()
            .private(),
        )])
    }
}

/// `200` to `GET /v1/games/{id}/events`.
pub struct EventsPageShown;

impl IntoResponses for EventsPageShown {
    fn responses() -> ResponseMap {
        responses([(
            200,
            json::<EventsPage>(
                "Entries after `after`, redacted for the caller while the game runs",
                EVENTS_EXAMPLE,
            )
            .private(),
        )])
    }
}

/// The answer while an analysis is queued or being computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
#[schema(example = json!({"status": "pending"}))]
pub struct AnalysisPending {
    /// Always `pending`.
    pub status: AnalysisStatus,
}

/// `200`, `202`, `409` and `503` to `GET /v1/games/{id}/analysis`.
pub struct AnalysisShown;

impl IntoResponses for AnalysisShown {
    fn responses() -> ResponseMap {
        responses([
            (
                200,
                json::<Analysis>(
                    "The analysis: every decision judged, each seat's summary",
                    ANALYSIS_EXAMPLE,
                )
                .no_cache(),
            ),
            (
                202,
                json::<AnalysisPending>(
                    "The analysis is queued or being computed: ask again later",
                    r#"{"status": "pending"}"#,
                )
                .no_cache(),
            ),
            problems::problem(
                ServiceError::NotAnalysable.into(),
                "the game is not finished yet",
            ),
            problems::problem(
                ServiceError::AnalysisDisabled.into(),
                "this server computes no analyses and none is stored",
            ),
        ])
    }
}

/// `200` to `GET /v1/games/{id}/audit`.
pub struct AuditShown;

impl IntoResponses for AuditShown {
    fn responses() -> ResponseMap {
        responses([(
            200,
            json::<Audit>(
                "Where the log stands; once the game is finished, the seed and whether the log \
                 checks out",
                AUDIT_EXAMPLE,
            )
            .no_cache(),
        )])
    }
}

/// `200` to `GET /v1/games/{id}/stream`: Server-Sent Events.
pub struct LiveLogStreamed;

impl IntoResponses for LiveLogStreamed {
    fn responses() -> ResponseMap {
        let example = "id: 7\ndata: {\"seq\":7,\"at\":\"2026-05-01T12:00:03.000000Z\",\"type\":\"card_drawn\",\"data\":{\"seat\":0,\"source\":\"stock\",\"card\":null},\"salt\":null,\"hash\":\"9f2c...\"}\n\n: keep-alive\n\n";
        responses([(
            200,
            ResponseBuilder::new()
                .description(
                    "Server-Sent Events: one message per log entry after `Last-Event-ID` (or \
                     `after`), `id:` its seq and `data:` the entry as `/events` gives it to the \
                     caller, a `LogEntry` (no `event:` field), and a keep-alive comment every 15 s. Open until \
                     the client closes it; it ends when the game is cancelled or the server stops \
                     (resume with `Last-Event-ID`).",
                )
                .content(
                    "text/event-stream",
                    ContentBuilder::new()
                        .schema(Some(server_sent_event()))
                        .example(Some(example.into()))
                        .build(),
                )
                .private(),
        )])
    }
}

/// The schema of one event of the stream, as SSE clients parse it (its fields, as strings): the
/// convention of OpenAPI 3.2's `itemSchema`, which tools that read streams check events against.
fn server_sent_event() -> Object {
    ObjectBuilder::new()
        .description(Some("One event of the stream: a log entry"))
        .property(
            "id",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some("^[1-9][0-9]*$"))
                .description(Some("The entry's `seq`")),
        )
        .property(
            "data",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .content_media_type("application/json")
                .content_schema(Some(Ref::from_schema_name(crate::api::schemas::LOG_ENTRY)))
                .description(Some("The entry, a `LogEntry`, as JSON on one line")),
        )
        .required("id")
        .required("data")
        .build()
}

/// `200` and `409` to `GET /v1/games/{id}/export`.
pub struct LogExported;

impl IntoResponses for LogExported {
    fn responses() -> ResponseMap {
        let example = concat!(
            r#"{"at":"2026-12-01T22:47:39.882921Z","data":{"commitment":"4c14...","format":"golf-log/1","#,
            r#""game_id":"43906c80-...","holes":2,"rules":{...},"seats":4,"stacked":false},"#,
            r#""hash":"5ce9...","salt":"a387...","seq":1,"type":"game_created"}"#,
            "\n..."
        );
        let ndjson = ResponseBuilder::new()
            .description(
                "The complete log, one entry a line: each line is the RFC 8785 canonical JSON of \
                 the entry (a `LogEntry`, complete), followed by a newline",
            )
            .content(
                NDJSON,
                ContentBuilder::new()
                    .schema(Some(Object::with_type(Type::String)))
                    .example(Some(example.into()))
                    .build(),
            )
            .with(&CONTENT_DISPOSITION)
            .with(&CACHE_IMMUTABLE)
            .etag();
        responses([
            (200, ndjson),
            (304, not_modified().with(&CACHE_IMMUTABLE)),
            problems::problem(
                ServiceError::NotFinished.into(),
                "the game is not finished yet",
            ),
        ])
    }
}

/// `200` to `GET /problems`: an HTML page.
pub struct ProblemsPage;

impl IntoResponses for ProblemsPage {
    fn responses() -> ResponseMap {
        let page = ResponseBuilder::new()
            .description("The catalog of problem codes, as a self-contained HTML page")
            .content(
                "text/html; charset=utf-8",
                ContentBuilder::new()
                    .schema(Some(Object::with_type(Type::String)))
                    .example(Some(codes::page().into()))
                    .build(),
            )
            .no_cache();
        responses([(200, page)])
    }
}

/// The caching headers of the successful answers of the account paths (v1.2), whose handlers
/// document their bodies inline: a profile, a rating history and the leaderboard are the same
/// for everyone, the rest (challenges, rematches and seeks included) is the caller's.
fn account_caching(path: &str) -> &'static [&'static DocumentedHeader] {
    if path.starts_with("/v1/accounts/") || path == "/v1/leaderboard" {
        &[&CACHE_NO_CACHE]
    } else if path.starts_with("/v1/account")
        || path.starts_with("/v1/challenges")
        || path.starts_with("/v1/seeks")
        || path.ends_with("/rematch")
    {
        &[&CACHE_PRIVATE, &VARY]
    } else {
        &[]
    }
}

/// Completes the document: defines the headers that responses refer to, documents the one set
/// outside the handlers, `X-Request-Id`, on every response (see `startup`), and the problem codes
/// (the table of `Problem.code`, and the examples of problem responses, checked against it),
/// and the caching headers of the account paths.
pub fn complete(spec: &mut OpenApi) {
    let components = spec.components.get_or_insert_with(Default::default);
    for header in DocumentedHeader::ALL {
        components
            .headers
            .insert(header.component.to_owned(), RefOr::T(header.definition()));
    }
    problems::describe_codes(components);
    for (path, item) in &mut spec.paths.paths {
        let caching = account_caching(path);
        let operations = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.options,
            &mut item.head,
            &mut item.patch,
            &mut item.trace,
        ];
        for operation in operations.into_iter().flatten() {
            for (status, response) in &mut operation.responses.responses {
                if let RefOr::T(response) = response {
                    problems::exemplify(status, response);
                    if status.starts_with('2') {
                        for header in caching {
                            response
                                .headers
                                .insert(header.name.to_owned(), RefOr::Ref(header.reference()));
                        }
                    }
                    response.headers.insert(
                        REQUEST_ID.name.to_owned(),
                        RefOr::Ref(REQUEST_ID.reference()),
                    );
                }
            }
        }
    }
}
