//! Rows as both backends return them, and their conversion to the store's types: the column
//! types decode the same way on each.

use serde_json::Value;
use sqlx::types::Json;
use uuid::Uuid;

use super::accounts::{AccountEventRecord, AccountRecord, ListedGame};
use super::{
    AuditResult, Entry, GameAccounts, GameRecord, LobbyGame, RawJson, StoreError, StoredResponse,
};
use crate::engine::{Rules, Status, Timestamp};
use crate::ratings::Rating;

pub fn bytes32(bytes: Vec<u8>, what: &str) -> Result<[u8; 32], StoreError> {
    bytes
        .try_into()
        .map_err(|b: Vec<u8>| StoreError::Corrupt(format!("{what} has {} bytes", b.len())))
}

/// A time as the store writes it (see [`Timestamp`]).
fn timestamp(text: &str) -> Result<Timestamp, StoreError> {
    Timestamp::parse(text).map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// The status of a game that loads (a cancelled one does not).
fn status(name: &str) -> Result<Status, StoreError> {
    [Status::Waiting, Status::Playing, Status::Finished]
        .into_iter()
        .find(|status| status.name() == name)
        .ok_or_else(|| StoreError::Corrupt(format!("status {name:?}")))
}

/// One seat of [`GameRow::seat_tokens`]: its number, hex token hash (none for a bot), account.
type SeatTokenRow = (i32, Option<String>, Option<String>);

#[derive(sqlx::FromRow)]
pub struct GameRow {
    id: Uuid,
    /// In the store's text form, which is [`Timestamp`]'s.
    created_at: String,
    status: String,
    version: i64,
    seats: i32,
    holes: i32,
    players: i32,
    rules: Json<Rules>,
    commitment: String,
    server_seed: Vec<u8>,
    host_token_hash: Vec<u8>,
    private: bool,
    stacked: bool,
    decks: Option<Json<Value>>,
    projection: Json<RawJson>,
    head_hash: Vec<u8>,
    audit_verified: Option<bool>,
    audit_first_bad_seq: Option<i64>,
    host_account: Option<String>,
    /// `[[seat, hex token hash or null, account or null], ...]`, aggregated from `seats` in the
    /// same query.
    seat_tokens: Json<Vec<SeatTokenRow>>,
}

impl TryFrom<GameRow> for GameRecord {
    type Error = StoreError;

    fn try_from(row: GameRow) -> Result<Self, StoreError> {
        let accounts = GameAccounts {
            host: row.host_account,
            seats: row
                .seat_tokens
                .0
                .iter()
                .filter_map(|(seat, _, account)| Some((*seat, account.clone()?)))
                .collect(),
        };
        Ok(GameRecord {
            accounts,
            id: row.id,
            created_at: timestamp(&row.created_at)?,
            status: status(&row.status)?,
            version: row.version,
            seats: row.seats,
            holes: row.holes,
            players: row.players,
            rules: row.rules.0,
            commitment: row.commitment,
            server_seed: bytes32(row.server_seed, "server_seed")?,
            host_token_hash: bytes32(row.host_token_hash, "host_token_hash")?,
            private: row.private,
            stacked: row.stacked,
            decks: row.decks.map(|d| d.0),
            projection: row.projection.0,
            head_hash: bytes32(row.head_hash, "head_hash")?,
            audit: row.audit_verified.map(|verified| AuditResult {
                verified,
                first_bad_seq: row.audit_first_bad_seq,
            }),
            seat_tokens: row
                .seat_tokens
                .0
                .into_iter()
                .map(|(seat, hash, _)| {
                    let hash = hash
                        .map(|hex| {
                            hex::decode(hex)
                                .map_err(|e| StoreError::Corrupt(format!("token_hash: {e}")))
                                .and_then(|bytes| bytes32(bytes, "token_hash"))
                        })
                        .transpose()?;
                    Ok((seat, hash))
                })
                .collect::<Result<_, StoreError>>()?,
        })
    }
}

#[derive(sqlx::FromRow)]
pub struct EntryRow {
    seq: i64,
    at: String,
    #[sqlx(rename = "type")]
    kind: String,
    data: Json<Value>,
    salt: Vec<u8>,
    hash: Vec<u8>,
}

impl TryFrom<EntryRow> for Entry {
    type Error = StoreError;

    fn try_from(row: EntryRow) -> Result<Self, StoreError> {
        if row.salt.len() != 16 {
            return Err(StoreError::Corrupt(format!("salt of seq {}", row.seq)));
        }
        Ok(Entry {
            seq: row.seq,
            at: row.at,
            kind: row.kind,
            data: row.data.0,
            salt: hex::encode(row.salt),
            hash: hex::encode(bytes32(row.hash, "hash")?),
        })
    }
}

#[derive(sqlx::FromRow)]
pub struct LobbyRow {
    id: Uuid,
    created_at: String,
    version: i64,
    seats: i32,
    players: i32,
    projection: Json<RawJson>,
}

impl TryFrom<LobbyRow> for LobbyGame {
    type Error = StoreError;

    fn try_from(row: LobbyRow) -> Result<Self, StoreError> {
        Ok(LobbyGame {
            id: row.id,
            created_at: timestamp(&row.created_at)?,
            version: row.version,
            seats: row.seats,
            players: row.players,
            projection: row.projection.0,
        })
    }
}

#[derive(sqlx::FromRow)]
pub struct ResponseRow {
    fingerprint: String,
    status: i32,
    body: Json<Value>,
}

impl TryFrom<ResponseRow> for StoredResponse {
    type Error = StoreError;

    fn try_from(row: ResponseRow) -> Result<Self, StoreError> {
        Ok(StoredResponse {
            fingerprint: row.fingerprint,
            status: u16::try_from(row.status)
                .map_err(|_| StoreError::Corrupt(format!("status {}", row.status)))?,
            body: row.body.0,
        })
    }
}

/// A snapshot of a game's state after entry `seq`.
#[derive(sqlx::FromRow)]
pub struct SnapshotRow {
    pub seq: i64,
    pub state: Json<RawJson>,
}

/// Converts every row, stopping at the first that does not convert.
pub fn convert<R, T>(rows: Vec<R>) -> Result<Vec<T>, StoreError>
where
    T: TryFrom<R, Error = StoreError>,
{
    rows.into_iter().map(T::try_from).collect()
}

#[derive(sqlx::FromRow)]
pub struct AccountRow {
    username: String,
    display_name: String,
    token_hash: Vec<u8>,
    /// In the store's text form, which is [`Timestamp`]'s.
    created_at: String,
    rating_value: f64,
    rating_deviation: f64,
    rated_games: i32,
}

impl TryFrom<AccountRow> for AccountRecord {
    type Error = StoreError;

    fn try_from(row: AccountRow) -> Result<Self, StoreError> {
        Ok(AccountRecord {
            username: row.username,
            display_name: row.display_name,
            token_hash: bytes32(row.token_hash, "accounts.token_hash")?,
            created_at: timestamp(&row.created_at)?,
            rating: Rating::new(row.rating_value, row.rating_deviation, row.rated_games),
        })
    }
}

#[derive(sqlx::FromRow)]
pub struct ListedGameRow {
    game_id: Uuid,
    seat: i32,
    updated_at: String,
    version: i64,
    projection: Json<RawJson>,
}

impl From<ListedGameRow> for ListedGame {
    fn from(row: ListedGameRow) -> Self {
        ListedGame {
            game_id: row.game_id,
            seat: row.seat,
            updated_at: row.updated_at,
            version: row.version,
            projection: row.projection.0,
        }
    }
}

#[derive(sqlx::FromRow)]
pub struct AccountEventRow {
    id: i64,
    at: String,
    #[sqlx(rename = "type")]
    kind: String,
    game_id: Option<Uuid>,
    data: Json<Value>,
}

/// A row of the read of an account's events for a token: an event, or all null when the token
/// is the account's and no event follows.
#[derive(sqlx::FromRow)]
pub struct TokenEventRow {
    id: Option<i64>,
    at: Option<String>,
    #[sqlx(rename = "type")]
    kind: Option<String>,
    game_id: Option<Uuid>,
    data: Option<Json<Value>>,
}

impl TokenEventRow {
    /// The event of the row, if it holds one.
    pub fn event(self) -> Option<AccountEventRecord> {
        Some(AccountEventRecord {
            id: self.id?,
            at: self.at?,
            kind: self.kind?,
            game_id: self.game_id,
            data: self.data?.0,
        })
    }
}

impl From<AccountEventRow> for AccountEventRecord {
    fn from(row: AccountEventRow) -> Self {
        AccountEventRecord {
            id: row.id,
            at: row.at,
            kind: row.kind,
            game_id: row.game_id,
            data: row.data.0,
        }
    }
}
