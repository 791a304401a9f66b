//! An account's games and events (v1.2): the list of its games, the pages of its events, and
//! their live stream as Server-Sent Events.

use actix_web::web::{Bytes, Data, Query};
use actix_web::{HttpRequest, HttpResponse, get};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::api::http::{bearer, private};
use crate::api::problem::{ApiError, Problem};
use crate::api::stream::{
    KEEP_ALIVE_COMMENT, StreamQuery, event_stream, last_event_id, messages, resume_after,
};
use crate::api::{AppState, docs};
use crate::engine::{Seat, Status};
use crate::ratings::Rating;
use crate::service::accounts::account_games::GamesFilter;
use crate::service::accounts::account_games::{AccountEventsPage, AccountGamesPage};
use crate::service::accounts::account_stream::{AccountItem, AccountStream};

/// `turn=mine`: only the games where the account's seat may move.
#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Turn {
    Mine,
}

/// The query of `GET /v1/account/games`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AccountGamesQuery {
    /// Only games with this status.
    #[param(inline)]
    pub status: Option<Status>,
    /// `mine`: only games where the account's seat may move now.
    #[param(inline)]
    pub turn: Option<Turn>,
    /// Games per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page.
    #[param(min_length = 1)]
    pub cursor: Option<String>,
}

/// The query of `GET /v1/account/events`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AccountEventsQuery {
    /// Events with `id` above this (default 0).
    #[param(minimum = 0)]
    pub after: Option<i64>,
    /// Events per page, 1 to 1000 (default 100).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<i64>,
}

/// The fields every account event has.
#[derive(Debug, Serialize, ToSchema)]
pub struct GameStartedEvent {
    /// Increases with each event of the account.
    pub id: i64,
    /// When the write that caused it was made (RFC 3339).
    pub at: String,
    /// `game_started`: the game's first hole was dealt.
    #[serde(rename = "type")]
    #[schema(schema_with = game_started_type)]
    pub kind: String,
    pub game_id: Uuid,
    /// The account's seat.
    pub seat: Seat,
}

/// The account's seat may move (again).
#[derive(Debug, Serialize, ToSchema)]
pub struct YourTurnEvent {
    pub id: i64,
    pub at: String,
    /// `your_turn`.
    #[serde(rename = "type")]
    #[schema(schema_with = your_turn_type)]
    pub kind: String,
    pub game_id: Uuid,
    pub seat: Seat,
    /// When a bot may take the seat (null without a turn timeout).
    pub turn_deadline: Option<String>,
}

/// The game ended.
#[derive(Debug, Serialize, ToSchema)]
pub struct GameEndedEvent {
    pub id: i64,
    pub at: String,
    /// `game_ended`.
    #[serde(rename = "type")]
    #[schema(schema_with = game_ended_type)]
    pub kind: String,
    pub game_id: Uuid,
    pub seat: Seat,
    /// Each seat's total.
    pub totals: Vec<i32>,
    /// The seats with the lowest total.
    pub winners: Vec<Seat>,
}

/// The account was challenged (`game_id` is null: the game does not exist yet).
#[derive(Debug, Serialize, ToSchema)]
pub struct ChallengeReceivedEvent {
    pub id: i64,
    pub at: String,
    /// `challenge_received`.
    #[serde(rename = "type")]
    #[schema(schema_with = challenge_received_type)]
    pub kind: String,
    /// Always null.
    pub game_id: Option<Uuid>,
    pub challenge_id: Uuid,
    /// The challenge's author.
    pub from: String,
}

/// An account answered the account's challenge (`game_id` is null).
#[derive(Debug, Serialize, ToSchema)]
pub struct ChallengeAnsweredEvent {
    pub id: i64,
    pub at: String,
    /// `challenge_answered`.
    #[serde(rename = "type")]
    #[schema(schema_with = challenge_answered_type)]
    pub kind: String,
    /// Always null.
    pub game_id: Option<Uuid>,
    pub challenge_id: Uuid,
    /// Who answered.
    pub username: String,
    /// `accepted` or `declined`.
    pub answer: String,
}

/// The account's seek was matched: `game_id` is the game, where the account holds `seat`.
#[derive(Debug, Serialize, ToSchema)]
pub struct SeekMatchedEvent {
    pub id: i64,
    pub at: String,
    /// `seek_matched`.
    #[serde(rename = "type")]
    #[schema(schema_with = seek_matched_type)]
    pub kind: String,
    pub game_id: Uuid,
    pub seek_id: Uuid,
    pub seat: Seat,
}

/// A rated game's end (`game_id`) moved the account's rating. The ratings job applies it just
/// after the game ends, not the move that ends it; the same change is in the rating history.
#[derive(Debug, Serialize, ToSchema)]
pub struct RatingChangedEvent {
    pub id: i64,
    pub at: String,
    /// `rating_changed`.
    #[serde(rename = "type")]
    #[schema(schema_with = rating_changed_type)]
    pub kind: String,
    pub game_id: Uuid,
    pub before: Rating,
    pub after: Rating,
}

/// The account's webhook was disabled (its receiver answered 410, or failed every attempt for a
/// day): deliveries stop until the webhook is registered again. Delivered to the event page and
/// streams, and not to the disabled webhook.
#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookDisabledEvent {
    pub id: i64,
    pub at: String,
    /// `webhook_disabled`.
    #[serde(rename = "type")]
    #[schema(schema_with = webhook_disabled_type)]
    pub kind: String,
    /// Always null.
    pub game_id: Option<Uuid>,
    /// `gone` (the receiver answered 410) or `failing` (every attempt failed for a day).
    pub reason: String,
    /// Since when every attempt had failed.
    pub failing_since: Option<String>,
}

/// A game's id, as the examples show it.
const GAME_EXAMPLE: &str = "3f1c2b4a-5d6e-4f70-8a9b-0c1d2e3f4a5b";

/// An example page of an account's games: one game, its turn.
fn games_page_example() -> serde_json::Value {
    let player = |seat: u8, name: &str| serde_json::json!({"seat": seat, "name": name, "account": name, "bot": null, "total": 0});
    serde_json::json!({"games": [{
        "id": GAME_EXAMPLE, "status": "playing", "seats": 2, "holes": 9,
        "rules": crate::store::codec::to_json(&crate::engine::Rules::default()),
        "rated": false, "stacked": false, "version": 5, "updated_at": "2026-05-01T12:00:00.000000Z",
        "your_seat": 0, "your_turn": true, "turn_deadline": null,
        "players": [player(0, "ada"), player(1, "bob")], "winners": null,
    }], "next_cursor": null})
}

/// The `type` of an account event: the one string `kind`.
fn type_is(kind: &str) -> utoipa::openapi::Object {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some([kind]))
        .build()
}

fn game_started_type() -> utoipa::openapi::Object {
    type_is("game_started")
}

fn your_turn_type() -> utoipa::openapi::Object {
    type_is("your_turn")
}

fn game_ended_type() -> utoipa::openapi::Object {
    type_is("game_ended")
}

fn challenge_received_type() -> utoipa::openapi::Object {
    type_is("challenge_received")
}

fn challenge_answered_type() -> utoipa::openapi::Object {
    type_is("challenge_answered")
}

fn seek_matched_type() -> utoipa::openapi::Object {
    type_is("seek_matched")
}

fn rating_changed_type() -> utoipa::openapi::Object {
    type_is("rating_changed")
}

fn webhook_disabled_type() -> utoipa::openapi::Object {
    type_is("webhook_disabled")
}

/// The games of the token's account, by the time of their last entry, newest first.
#[utoipa::path(
    tag = "accounts",
    params(AccountGamesQuery),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "A page of the account's games", body = AccountGamesPage, example = json!(games_page_example())),
        (status = 400, description = "malformed_request: a parameter or the cursor does not parse", body = Problem, content_type = "application/problem+json"),
        docs::Unauthorized,
        (status = 422, description = "out_of_range: a limit that is not 1 to 100", body = Problem, content_type = "application/problem+json"),
        docs::DatabaseFailures,
    )
)]
#[get("/v1/account/games")]
pub async fn account_games(
    state: Data<AppState>,
    request: HttpRequest,
    query: Query<AccountGamesQuery>,
) -> Result<HttpResponse, ApiError> {
    let filter = GamesFilter {
        status: query.status,
        your_turn: query.turn.is_some(),
    };
    let page = state
        .services
        .accounts
        .account_games(
            bearer(&request).as_deref(),
            filter,
            query.limit,
            query.cursor.as_deref(),
        )
        .await?;
    Ok(private(HttpResponse::Ok()).json(page))
}

/// A page of the events of the token's account (kept 30 days), in id order.
#[utoipa::path(
    tag = "accounts",
    params(AccountEventsQuery),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "A page of account events: each an `AccountEvent`", body = AccountEventsPage, example = json!({"events": [
            {"id": 7, "at": "2026-05-01T12:00:00.000000Z", "type": "game_started", "game_id": GAME_EXAMPLE, "seat": 1},
            {"id": 8, "at": "2026-05-01T12:00:00.000000Z", "type": "your_turn", "game_id": GAME_EXAMPLE, "seat": 1, "turn_deadline": null},
            {"id": 9, "at": "2026-05-01T12:20:00.000000Z", "type": "game_ended", "game_id": GAME_EXAMPLE, "seat": 1, "totals": [14, 9], "winners": [1]},
        ]})),
        (status = 400, description = "malformed_request: a parameter does not parse", body = Problem, content_type = "application/problem+json"),
        docs::Unauthorized,
        (status = 422, description = "out_of_range: a negative after, or a limit that is not 1 to 1000", body = Problem, content_type = "application/problem+json"),
        docs::DatabaseFailures,
    )
)]
#[get("/v1/account/events")]
pub async fn account_events(
    state: Data<AppState>,
    request: HttpRequest,
    query: Query<AccountEventsQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = state
        .services
        .accounts
        .account_events(bearer(&request).as_deref(), query.after, query.limit)
        .await?;
    Ok(private(HttpResponse::Ok()).json(page))
}

/// The events of the token's account as Server-Sent Events (`id:` the event id, `data:` the
/// `AccountEvent`): every one after `Last-Event-ID` (or `after`), then each new one as it is
/// stored, on any instance; a keep-alive comment every 15 s.
#[utoipa::path(
    tag = "accounts",
    params(
        ("Last-Event-ID" = Option<i64>, Header, minimum = 0, description = "The id of the last event received: the stream resumes after it (wins over `after`)"),
        ("after" = Option<i64>, Query, minimum = 0, description = "Events with `id` above this (default 0)"),
        ("token" = Option<String>, Query, description = "The account token, for clients that cannot send Authorization (EventSource); Authorization wins when both are given"),
    ),
    // The token may come in `?token=` instead of Authorization: no header is then required.
    security((), ("bearer" = [])),
    responses(
        (status = 200, description = "The stream", content_type = "text/event-stream", body = String),
        (status = 400, description = "malformed_request: a parameter or Last-Event-ID does not parse", body = Problem, content_type = "application/problem+json"),
        docs::Unauthorized,
        (status = 422, description = "out_of_range: after or Last-Event-ID is negative", body = Problem, content_type = "application/problem+json"),
        docs::TooManyStreams,
        docs::DatabaseFailures,
    )
)]
#[get("/v1/account/stream")]
pub async fn account_stream(
    state: Data<AppState>,
    request: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let query = StreamQuery::parse(request.query_string());
    let token = bearer(&request).or_else(|| query.token.clone());
    // A bad token is reported before a bad parameter, as on a game's stream.
    state.services.accounts.account_of(token.as_deref()).await?;
    let after = query
        .after
        .and_then(|after| Ok(resume_after(after, last_event_id(&request)?)))
        .map_err(ApiError::malformed)?;
    let stream = state
        .services
        .accounts
        .account_stream(token.as_deref(), after)
        .await?;
    Ok(event_stream(
        &request,
        events(stream, state.stopping.clone()),
    ))
}

/// The body: messages until the server stops (clients then resume elsewhere with
/// `Last-Event-ID`); the client leaving drops it.
fn events(
    stream: AccountStream,
    stopping: CancellationToken,
) -> impl futures_util::Stream<Item = Result<Bytes, actix_web::Error>> {
    futures_util::stream::unfold((stream, stopping), |(mut stream, stopping)| async move {
        let item = tokio::select! {
            biased;
            _ = stopping.cancelled() => return None,
            item = stream.next() => item,
        };
        let bytes = match item {
            AccountItem::Events(events) => Bytes::from(messages(&events)),
            AccountItem::KeepAlive => Bytes::from_static(KEEP_ALIVE_COMMENT),
            AccountItem::Revoked => return None,
        };
        Some((Ok(bytes), (stream, stopping)))
    })
}
