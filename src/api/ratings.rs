//! Ratings (v1.2): the leaderboard and an account's rating history.

use actix_web::web::{Data, Path, Query};
use actix_web::{HttpResponse, get};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::api::problem::{ApiError, Problem};
use crate::api::{AppState, docs};
use crate::service::opponents::ratings::{Leaderboard, RatingHistory};

/// The query of `GET /v1/leaderboard`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct LeaderboardQuery {
    /// Places per page, 1 to 100 (default 50).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page.
    #[param(min_length = 1)]
    pub cursor: Option<String>,
}

/// The query of `GET /v1/accounts/{username}/ratings`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct HistoryQuery {
    /// The last updates to answer, 1 to 1000 (default 100).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<i64>,
}

/// The established ratings, best first. Provisional ratings (deviation above 400) are left out.
#[utoipa::path(
    tag = "ratings",
    params(LeaderboardQuery),
    responses(
        (status = 200, description = "A page of the leaderboard", body = Leaderboard, example = json!({"accounts": [{"rank": 1, "username": "bot-greedy", "display_name": "Greedy bot", "rating": {"value": 1712.5, "deviation": 96.1, "games": 0, "provisional": false}}, {"rank": 2, "username": "ada", "display_name": "Ada", "rating": {"value": 1623.4, "deviation": 187.2, "games": 14, "provisional": false}}], "next_cursor": null})),
        (status = 400, description = "malformed_request: a parameter or the cursor does not parse", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "out_of_range: a limit that is not 1 to 100", body = Problem, content_type = "application/problem+json"),
        docs::DatabaseFailures,
    )
)]
#[get("/v1/leaderboard")]
pub async fn leaderboard(
    state: Data<AppState>,
    query: Query<LeaderboardQuery>,
) -> Result<HttpResponse, ApiError> {
    let query = query.into_inner();
    let page = state
        .services
        .ratings
        .leaderboard(query.limit, query.cursor.as_deref())
        .await?;
    Ok(HttpResponse::Ok()
        .insert_header(("cache-control", "no-cache"))
        .json(page))
}

/// An account's rating updates, oldest first: one per rated game, with the rating before and
/// after it.
#[utoipa::path(
    tag = "ratings",
    params(("username" = String, Path, description = "The account (compared in lowercase)"), HistoryQuery),
    responses(
        (status = 200, description = "The account's rating history", body = RatingHistory, example = json!({"history": [{"game_id": "0190b3c4-7d2e-7a41-9b8c-3f2a1d5e6f70", "at": "2026-05-01T12:30:00.000000Z", "before": {"value": 1500.0, "deviation": 500.0, "games": 0, "provisional": true}, "after": {"value": 1562.3, "deviation": 471.9, "games": 1, "provisional": true}}]})),
        (status = 400, description = "malformed_request: a parameter does not parse", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "not_found: no account with this username", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "out_of_range: a limit that is not 1 to 1000", body = Problem, content_type = "application/problem+json"),
        docs::DatabaseFailures,
    )
)]
#[get("/v1/accounts/{username}/ratings")]
pub async fn rating_history(
    state: Data<AppState>,
    username: Path<String>,
    query: Query<HistoryQuery>,
) -> Result<HttpResponse, ApiError> {
    let history = state
        .services
        .ratings
        .rating_history(&username, query.limit)
        .await?;
    Ok(HttpResponse::Ok()
        .insert_header(("cache-control", "no-cache"))
        .json(history))
}
