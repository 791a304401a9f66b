//! An account's games and events as its holder reads them: `GET /v1/account/games` (a page of
//! [`GameSummary`]), `GET /v1/account/events` (a page of account events), and the counts and
//! recent games of accounts and profiles.

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::engine::{self, BotKind, Rules, Seat, State, Status};
use crate::service::accounts::events::shown;
use crate::service::games::notices::has_moves;
use crate::service::paging::{check_limit, cursor, cursor_fields, cursor_time, malformed_cursor};
use crate::service::{Accounts, ServiceError};
use crate::store::codec::projection_state;
use crate::store::{GamesCursor, ListedGame};

/// Games in a profile's `recent`.
const RECENT_GAMES: i64 = 10;

/// Games of an account, counted over its finished games.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, ToSchema)]
pub struct GameCounts {
    /// Finished games in which the account held a seat.
    pub played: i64,
    /// Those it won (or shared the lowest total).
    pub won: i64,
}

/// Which of an account's games to list.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GamesFilter {
    /// Only games with this status.
    pub status: Option<Status>,
    /// Only games where the account's seat may move now.
    pub your_turn: bool,
}

/// A game as an account's list shows it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct GameSummary {
    pub id: Uuid,
    pub status: Status,
    pub seats: u8,
    pub holes: u8,
    pub rules: Rules,
    /// Whether the game's end updates its seats' ratings.
    pub rated: bool,
    pub stacked: bool,
    /// The seq of its last entry.
    pub version: i64,
    /// The time of its last entry.
    pub updated_at: String,
    /// The account's seat.
    pub your_seat: Seat,
    /// Whether the account's seat may move now.
    pub your_turn: bool,
    /// When a bot may take the seats the game waits for (null without a turn timeout).
    pub turn_deadline: Option<String>,
    pub players: Vec<SummaryPlayer>,
    /// The seats with the lowest total, once finished.
    pub winners: Option<Vec<Seat>>,
}

/// A seat of a [`GameSummary`].
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SummaryPlayer {
    pub seat: Seat,
    pub name: String,
    /// The account the seat is bound to, if any.
    pub account: Option<String>,
    /// The strategy, for a bot.
    pub bot: Option<BotKind>,
    pub total: i32,
}

/// A page of an account's games.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AccountGamesPage {
    /// By the time of their last entry, newest first.
    pub games: Vec<GameSummary>,
    /// Pass as `cursor` for the next page; null at the end.
    pub next_cursor: Option<String>,
}

/// A page of an account's events.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AccountEventsPage {
    /// In id order, each an `AccountEvent`.
    #[schema(value_type = Vec<Object>)]
    pub events: Vec<Value>,
}

impl GameSummary {
    fn of(listed: &ListedGame, state: &State) -> GameSummary {
        GameSummary {
            id: listed.game_id,
            status: state.status,
            seats: state.seats,
            holes: state.holes,
            rules: state.rules,
            rated: state.rated,
            stacked: state.stacked,
            version: listed.version,
            updated_at: listed.updated_at.clone(),
            your_seat: listed.seat as Seat,
            your_turn: has_moves(state, listed.seat as Seat),
            turn_deadline: engine::turn_deadline(state).map(|at| at.to_string()),
            players: state
                .players
                .iter()
                .enumerate()
                .map(|(seat, player)| SummaryPlayer {
                    seat: seat as Seat,
                    name: player.name.as_str().to_owned(),
                    account: player.account.clone(),
                    bot: player.bot,
                    total: player.total,
                })
                .collect(),
            winners: state.winners.clone(),
        }
    }
}

impl Accounts {
    /// A page of the games of `token`'s account; `status` and `your_turn` filter them.
    pub async fn account_games(
        &self,
        token: Option<&str>,
        filter: GamesFilter,
        limit: Option<i64>,
        cursor: Option<&str>,
    ) -> Result<AccountGamesPage, ServiceError> {
        let account = self.account_of(token).await?;
        let limit = check_limit(limit, 20, 100)?;
        if filter.your_turn && filter.status == Some(Status::Finished) {
            // No finished game waits for anyone: the answer is known, whatever the cursor,
            // without reading the account's finished games, which grow with its history.
            return Ok(AccountGamesPage {
                games: Vec::new(),
                next_cursor: None,
            });
        }
        let cursor = cursor.map(decode_games_cursor).transpose()?;
        self.games_page(&account.username, filter, cursor, limit)
            .await
    }

    /// Up to `limit` games of `username` after `cursor`, as a page.
    async fn games_page(
        &self,
        username: &str,
        filter: GamesFilter,
        cursor: Option<GamesCursor>,
        limit: i64,
    ) -> Result<AccountGamesPage, ServiceError> {
        // Whose turn it is is read from each game's projection, so `turn=mine` reads all of the
        // account's games in play after the cursor (an account plays few at once) and keeps those
        // waiting for it; never its finished games, which grow with its history.
        let (status, fetched) = match filter.your_turn {
            true => (filter.status.or(Some(Status::Playing)), i64::MAX),
            false => (filter.status, limit + 1),
        };
        let listed = self
            .store
            .accounts()
            .list_account_games(username, status, cursor, fetched)
            .await?;
        let mut page = Vec::new();
        for game in &listed {
            let state = projection_state(game.game_id, &game.projection)?;
            let summary = GameSummary::of(game, &state);
            if summary.your_turn || !filter.your_turn {
                page.push((game, summary));
            }
            if page.len() as i64 > limit {
                break;
            }
        }
        let more = page.len() as i64 > limit;
        page.truncate(limit as usize);
        let next_cursor = page
            .last()
            .filter(|_| more)
            .map(|(game, _)| encode_games_cursor(game));
        let games = page.into_iter().map(|(_, summary)| summary).collect();
        Ok(AccountGamesPage { games, next_cursor })
    }

    /// The last finished games of `username`, newest first.
    pub(super) async fn recent_games(
        &self,
        username: &str,
    ) -> Result<Vec<GameSummary>, ServiceError> {
        let finished = GamesFilter {
            status: Some(Status::Finished),
            your_turn: false,
        };
        let page = self
            .games_page(username, finished, None, RECENT_GAMES)
            .await?;
        Ok(page.games)
    }

    /// How many games `username` finished, and won.
    pub(super) async fn game_counts(&self, username: &str) -> Result<GameCounts, ServiceError> {
        let (played, won) = self.store.accounts().account_game_counts(username).await?;
        Ok(GameCounts { played, won })
    }

    /// Up to `limit` events of `token`'s account after id `after`.
    pub async fn account_events(
        &self,
        token: Option<&str>,
        after: Option<i64>,
        limit: Option<i64>,
    ) -> Result<AccountEventsPage, ServiceError> {
        let account = self.account_of(token).await?;
        let limit = check_limit(limit, 100, 1000)?;
        let after = check_after(after)?;
        let events = self
            .store
            .accounts()
            .account_events(&account.username, after, limit)
            .await?;
        Ok(AccountEventsPage {
            events: events.iter().map(shown).collect(),
        })
    }
}

/// `after`, 0 when absent; below 0 it is `out_of_range`.
pub fn check_after(after: Option<i64>) -> Result<i64, ServiceError> {
    match after.unwrap_or(0) {
        after if after >= 0 => Ok(after),
        _ => Err(ServiceError::OutOfRange(
            "after (or Last-Event-ID) must be 0 or more.".to_owned(),
        )),
    }
}

/// The cursor a client passes back for the page after `game`.
fn encode_games_cursor(game: &ListedGame) -> String {
    cursor(&[&game.updated_at, &game.game_id.to_string()])
}

/// A cursor this server gave; any other text is `malformed_request`.
fn decode_games_cursor(text: &str) -> Result<GamesCursor, ServiceError> {
    let [updated_at, id] = cursor_fields(text)?;
    cursor_time(&updated_at)?;
    Ok(GamesCursor {
        updated_at,
        game_id: id.parse().map_err(|_| malformed_cursor())?,
    })
}
