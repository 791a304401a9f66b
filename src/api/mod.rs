//! The HTTP layer: routes, request and response types, problem errors and the OpenAPI document.
//!
//! # Layout
//! - `mod.rs`: the routes, the OpenAPI document's frame, the pages that document the API
//!   (`/openapi.json`, `/docs`, `/problems`), `HEAD`, 404 and 405;
//! - one file per resource: [`games`] (create, lobby, cancel, views), [`players`] (join),
//!   [`moves`], [`leave`], [`log`] (pages and replays), [`export`] (a finished game's log as NDJSON),
//!   [`audit`] (where the log stands, and whether a finished one checks out), [`analysis`]
//!   (every decision of a finished game judged),
//!   [`stream`] (the live log as Server-Sent Events), [`accounts`] (accounts, their tokens,
//!   profiles), [`account_games`] (an account's games, events and event stream),
//!   [`webhooks`] (an account's webhook and the log of its deliveries), [`challenges`]
//!   (challenges and rematches), [`seeks`] ("find me a game"), [`ratings`] (the leaderboard,
//!   rating histories), [`health`]
//!   (liveness, readiness, metrics);
//! - [`limits`]: who the client is, its budgets of creations and joins and of expensive reads,
//!   its open streams;
//! - [`http`]: bodies, tokens, `Idempotency-Key`, `If-Match`, `ETag`, private caching;
//! - [`problem`]: the one place where failures become problem+json;
//! - [`docs`]: the shared responses and examples of the OpenAPI document;
//! - [`codes`]: the catalog of problem codes, the one table from a code to its status;
//! - [`schemas`]: the named schemas of moves and log entries;
//! - [`constraints`]: what the server accepts that utoipa cannot derive (card codes, decks,
//!   name and seed patterns, `If-Match`);
//! - [`webapp`]: the web client at `/` (not part of the API or its document).

pub mod account_games;
pub mod accounts;
pub mod analysis;
pub mod audit;
pub mod challenges;
pub mod codes;
pub mod constraints;
pub mod docs;
pub mod export;
pub mod games;
pub mod health;
pub mod http;
pub mod leave;
pub mod limits;
pub mod log;
pub mod moves;
pub mod players;
pub mod problem;
pub mod ratings;
pub mod schemas;
pub mod seeks;
pub mod stream;
pub mod webapp;
pub mod webhooks;

use actix_web::body::MessageBody;
use actix_web::dev::{ResourceDef, ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::http::header::{self, ContentType};
use actix_web::middleware::Next;
use actix_web::web::{self, Data};
use actix_web::{App, HttpRequest, HttpResponse, ResponseError, get};
use tokio_util::sync::CancellationToken;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_actix_web::AppExt;
use utoipa_actix_web::service_config::ServiceConfig;
use utoipa_swagger_ui::SwaggerUi;

use crate::api::problem::{ApiError, Problem};
use crate::engine::View;
use crate::service::{Audit, CreatedGame, EventsPage, Joined, LobbyPage, Services};

/// Largest request body accepted; moves and game creation (with 18 stacked decks) fit well below.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// What every handler may reach.
pub struct AppState {
    /// The use cases, over the store.
    pub services: Services,
    /// Cancelled when the server starts to stop: open streams end at once rather than hold up
    /// the shutdown.
    pub stopping: CancellationToken,
}

/// The parts of the OpenAPI document that are not collected from the handlers.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "golf-server",
        description = "Six-card Golf for 2 to 4 players, with auditable, hash-chained game logs.\n\n\
            Errors are `application/problem+json` with a stable `code`: every code, what it means \
            and what to do about it is listed in the description of `Problem.code` and on the \
            page [/problems](/problems).",
        license(name = "MIT OR Apache-2.0")
    ),
    // The schemas of the shared responses of `docs`, which name them without collecting them.
    components(schemas(
        Problem, View, CreatedGame, LobbyPage, Joined, EventsPage, Audit,
        crate::engine::Analysis, crate::engine::Decision, crate::engine::SeatAnalysis,
        docs::AnalysisPending,
        account_games::GameStartedEvent, account_games::YourTurnEvent,
        account_games::GameEndedEvent, account_games::ChallengeReceivedEvent,
        account_games::ChallengeAnsweredEvent, account_games::SeekMatchedEvent,
        account_games::RatingChangedEvent,
        account_games::WebhookDisabledEvent,
    )),
    modifiers(&BearerAuth),
    tags(
        (name = "games", description = "Create, join, view and play games"),
        (name = "accounts", description = "Accounts: one identity across games (v1.2)"),
        (name = "ratings", description = "Ratings of rated games, the leaderboard (v1.2)"),
        (name = "challenges", description = "Challenges and rematches (v1.2)"),
        (name = "seeks", description = "Seeks: find me a game (v1.2)"),
        (name = "log", description = "The hash-chained log of a game, and replays"),
        (name = "operations", description = "Health, readiness and metrics"),
    )
)]
pub struct ApiDoc;

/// Declares the bearer scheme that seat and host tokens use.
struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "A seat token (from joining), the host token (from creating a game) or an account token",
                    ))
                    .build(),
            ),
        );
    }
}

/// Everything the service answers: the documented routes, `spec` and the page for it, the
/// request-parsing settings, and the answer to requests that match no route. The document itself
/// is assembled once, by [`openapi`].
pub fn configure(config: &mut web::ServiceConfig, spec: &utoipa::openapi::OpenApi) {
    routes(&mut ServiceConfig::new(config));
    configure_extractors(config);
    serve_docs(config, spec.clone());
    webapp::configure(config);
    config.default_service(web::to(no_route));
}

/// Registers every documented route.
fn routes(config: &mut ServiceConfig) {
    config
        .service(games::create_game)
        .service(games::list_games)
        .service(games::cancel_game)
        .service(players::join_game)
        .service(games::public_view)
        .service(games::own_view)
        .service(moves::make_move)
        .service(leave::leave_game)
        .service(log::list_events)
        .service(log::replay)
        .service(export::export_log)
        .service(audit::audit)
        .service(analysis::analysis)
        .service(stream::stream)
        .service(accounts::create_account)
        .service(accounts::own_account)
        .service(accounts::rotate_token)
        .service(accounts::profile)
        .service(ratings::leaderboard)
        .service(ratings::rating_history)
        .service(challenges::create_challenge)
        .service(challenges::read_challenge)
        .service(challenges::accept_challenge)
        .service(challenges::decline_challenge)
        .service(challenges::cancel_challenge)
        .service(challenges::account_challenges)
        .service(challenges::rematch)
        .service(seeks::create_seek)
        .service(seeks::read_seek)
        .service(seeks::cancel_seek)
        .service(account_games::account_games)
        .service(account_games::account_events)
        .service(account_games::account_stream)
        .service(webhooks::put_webhook)
        .service(webhooks::get_webhook)
        .service(webhooks::delete_webhook)
        .service(webhooks::webhook_deliveries)
        .service(health::healthz)
        .service(health::readyz)
        .service(health::metrics)
        .service(problems);
}

/// The OpenAPI document of the service, as `/openapi.json` serves it.
pub fn openapi() -> utoipa::openapi::OpenApi {
    let (_, mut spec) = App::new()
        .into_utoipa_app()
        .openapi(ApiDoc::openapi())
        .configure(routes)
        .split_for_parts();
    schemas::name_unions(&mut spec);
    constraints::constrain(&mut spec);
    docs::complete(&mut spec);
    spec
}

/// Request-parsing settings: every parse failure is a problem, never a bare text error.
fn configure_extractors(config: &mut web::ServiceConfig) {
    config
        // Handlers read their bodies as bytes (see `http::read_body`): this is their limit.
        .app_data(web::PayloadConfig::new(MAX_BODY_BYTES))
        .app_data(
            web::QueryConfig::default()
                .error_handler(|error, _| ApiError::malformed(error.to_string()).into()),
        )
        .app_data(
            web::PathConfig::default()
                .error_handler(|_, _| ApiError::not_found("No such resource.").into()),
        );
}

/// Where the OpenAPI document is served.
const SPEC_PATH: &str = "/openapi.json";
/// The interactive page, and the assets under it.
const DOCS_PATH: &str = "/docs";
const DOCS_PAGES: &str = "/docs/{_:.*}";

/// The docs page's policy: its scripts and styles are its own files; Swagger UI draws its icons as
/// `data:` images and sets some styles inline. No other site may frame it (it runs with the same
/// origin as the seat tokens the web client keeps).
const DOCS_POLICY: &str = "default-src 'self'; img-src 'self' data:; \
    style-src 'self' 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Gives the docs page and its assets their content security policy, and forbids framing them.
pub async fn docs_policy(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let docs = request.path() == DOCS_PATH || request.path().starts_with("/docs/");
    let mut response = next.call(request).await?;
    if docs {
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            header::HeaderValue::from_static(DOCS_POLICY),
        );
        headers.insert(
            header::X_FRAME_OPTIONS,
            header::HeaderValue::from_static("DENY"),
        );
    }
    Ok(response)
}

/// Registers the routes that serve `spec` and the interactive page for it.
fn serve_docs(config: &mut web::ServiceConfig, spec: utoipa::openapi::OpenApi) {
    config
        .service(SwaggerUi::new(DOCS_PAGES).url(SPEC_PATH, spec))
        .route(DOCS_PATH, web::get().to(docs_redirect));
}

/// The paths the service answers and the methods each answers: those of the OpenAPI document,
/// plus the document and the docs page themselves. A request for a known path with another method
/// gets 405 and the `Allow` header; `HEAD` is answered wherever `GET` is.
pub struct RouteTable(Vec<(ResourceDef, Vec<&'static str>)>);

impl RouteTable {
    /// The routes of `spec` (whose path templates are also actix patterns), of [`serve_docs`]
    /// and of the web client.
    pub fn new(spec: &utoipa::openapi::OpenApi) -> Self {
        let documented = spec.paths.paths.iter().map(|(path, item)| {
            let methods = [
                ("GET", item.get.is_some()),
                ("HEAD", item.get.is_some()),
                ("POST", item.post.is_some()),
                ("PUT", item.put.is_some()),
                ("PATCH", item.patch.is_some()),
                ("DELETE", item.delete.is_some()),
            ]
            .into_iter()
            .filter_map(|(method, present)| present.then_some(method))
            .collect();
            (ResourceDef::new(path.as_str()), methods)
        });
        let docs = [
            SPEC_PATH,
            DOCS_PATH,
            DOCS_PAGES,
            webapp::INDEX_PATH,
            webapp::ASSETS_PATH,
        ]
        .map(|path| (ResourceDef::new(path), vec!["GET", "HEAD"]));
        RouteTable(documented.chain(docs).collect())
    }

    fn methods_of(&self, path: &str) -> Option<&[&'static str]> {
        self.0
            .iter()
            .find(|(route, _)| route.is_match(path))
            .map(|(_, methods)| methods.as_slice())
    }
}

/// Answers `HEAD` as the `GET` of the same path (RFC 9110): the request is routed as a `GET`, and
/// the HTTP/1 codec, which saw the `HEAD`, sends the headers without the body.
pub async fn head_as_get(
    mut request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    if request.method() == Method::HEAD {
        let answers_get = request
            .app_data::<Data<RouteTable>>()
            .and_then(|routes| routes.methods_of(request.path()))
            .is_some_and(|methods| methods.contains(&"GET"));
        if answers_get {
            request.head_mut().method = Method::GET;
        }
    }
    next.call(request).await
}

/// Answers requests that match no route: 405 for a known path, 404 otherwise.
async fn no_route(
    request: HttpRequest,
    routes: Data<RouteTable>,
) -> Result<HttpResponse, ApiError> {
    if let Some(methods) = routes.methods_of(request.path()) {
        let allow = methods.join(", ");
        let mut response = ApiError::new(
            "method_not_allowed",
            format!(
                "{} answers {allow}, not {}.",
                request.path(),
                request.method()
            ),
        )
        .error_response();
        if let Ok(value) = header::HeaderValue::from_str(&allow) {
            response.headers_mut().insert(header::ALLOW, value);
        }
        return Ok(response);
    }
    Err(ApiError::not_found(format!(
        "No route for {} {}.",
        request.method(),
        request.path()
    )))
}

/// The problem codes: every `code` an error answer may carry, what it means and what to do.
#[utoipa::path(tag = "operations", responses(docs::ProblemsPage))]
#[get("/problems")]
async fn problems() -> HttpResponse {
    HttpResponse::Ok()
        .content_type(ContentType::html())
        .insert_header(("Cache-Control", "no-cache"))
        .body(codes::page())
}

/// `/docs` without its slash: the interactive page lives under `/docs/`.
async fn docs_redirect() -> HttpResponse {
    HttpResponse::PermanentRedirect()
        .insert_header((header::LOCATION, "/docs/"))
        .finish()
}

/// Shared application data for the app factory; `stopping` ends the open streams.
pub fn state(services: Services, stopping: CancellationToken) -> Data<AppState> {
    Data::new(AppState { services, stopping })
}

/// The OpenAPI document as the pretty JSON committed in `openapi/openapi.json`.
pub fn openapi_json() -> String {
    openapi()
        .to_pretty_json()
        .expect("the OpenAPI document serializes")
}
