//! The rows that appends write, as both backends read them: one document of named parts (the
//! game rows to move, and the log entries, seats, stored responses and snapshots written
//! beside them), built here once and consumed whole by each backend's append statements.
//!
//! Each part is a JSON array of objects with named fields, bound as one text parameter: a
//! statement reads a part by its name and its fields by theirs (PostgreSQL with
//! `json_to_recordset`, SQLite with `json_each`). Bytes travel as lowercase hex, ids as
//! hyphenated UUIDs, times as the store's RFC 3339 text.
//!
//! The projections and snapshot states, a few kilobytes each, are not in the parts: they travel
//! apart, as the list of their JSON texts ([`Batch::documents`]), which the parts name by their
//! place (from 1). Inside a part, PostgreSQL would parse each of them twice more than a column of
//! its own needs (the part's cast to `json`, then `json_to_recordset`); measured, that made a
//! move cost PostgreSQL half as much again.

use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use super::Sealed;
use crate::store::StoreError;
use crate::store::accounts::wake_key;

/// The parts of a batch of appends to distinct games, each a JSON array (see the module doc).
pub struct Batch<'a> {
    /// The game rows, each moved only if at `expected` and not cancelled:
    /// `{id, expected, version, head_hash, status, projection, joined, deadline_at,
    /// last_entry_seq, last_entry_at}`, where `projection` is the place of the new projection in
    /// `documents` and the last two describe the last new entry (null without one).
    pub games: String,
    /// The entries: `{game_id, seq, type, data, at, salt, hash}`.
    pub events: String,
    /// The seats taken: `{game_id, seat, name, bot, client_seed, token_hash, account}`.
    pub seats: String,
    /// The stored responses (of moves, leaves, joins): `{game_id, seat, key, fingerprint, status,
    /// body}`.
    pub responses: String,
    /// The snapshots: `{game_id, seq, state}`, `state` a place in `documents`.
    pub snapshots: String,
    /// Where each game stands for the accounts bound to its seats, when a seat is taken or the
    /// status changes: `{game_id, account, seat, status, updated_at, won}`.
    pub account_games: String,
    /// The accounts' events: `{game_id, account, wake, ord, at, type, data}`, numbered per
    /// account in the order of `ord`; `wake` is the account's key in the wake-up hub.
    pub account_events: String,
    /// The JSON texts of the projections and snapshot states, in the order the parts name them.
    pub documents: Vec<&'a str>,
    /// The accounts that `account_events` names, in name order, each with its count of events
    /// and its wake-up key.
    pub noticed: Vec<Noticed<'a>>,
}

/// An account that a batch's events go to.
pub struct Noticed<'a> {
    pub account: &'a str,
    pub events: i64,
    pub wake: Uuid,
}

#[derive(Serialize)]
struct AccountGamePart<'a> {
    game_id: Uuid,
    account: &'a str,
    seat: i32,
    status: &'a str,
    updated_at: String,
    won: bool,
}

#[derive(Serialize)]
struct AccountEventPart<'a> {
    game_id: Uuid,
    account: &'a str,
    /// The account's key in the wake-up hub.
    wake: Uuid,
    ord: usize,
    at: String,
    #[serde(rename = "type")]
    kind: &'a str,
    data: &'a Value,
}

#[derive(Serialize)]
struct GamePart<'a> {
    id: Uuid,
    expected: i64,
    version: i64,
    head_hash: String,
    status: &'a str,
    projection: usize,
    joined: i32,
    deadline_at: Option<String>,
    last_entry_seq: Option<i64>,
    last_entry_at: Option<&'a str>,
}

#[derive(Serialize)]
struct EventPart<'a> {
    game_id: Uuid,
    seq: i64,
    #[serde(rename = "type")]
    kind: &'a str,
    data: &'a Value,
    at: &'a str,
    salt: &'a str,
    hash: &'a str,
}

#[derive(Serialize)]
struct SeatPart<'a> {
    game_id: Uuid,
    seat: i32,
    name: &'a str,
    bot: Option<&'a str>,
    client_seed: &'a str,
    token_hash: Option<String>,
    account: Option<&'a str>,
}

#[derive(Serialize)]
struct ResponsePart<'a> {
    game_id: Uuid,
    seat: i32,
    key: &'a str,
    fingerprint: &'a str,
    status: u16,
    body: &'a Value,
}

#[derive(Serialize)]
struct SnapshotPart {
    game_id: Uuid,
    seq: i64,
    state: usize,
}

/// The parts as rows, before they become text.
#[derive(Default)]
struct Parts<'a> {
    games: Vec<GamePart<'a>>,
    events: Vec<EventPart<'a>>,
    seats: Vec<SeatPart<'a>>,
    responses: Vec<ResponsePart<'a>>,
    snapshots: Vec<SnapshotPart>,
    account_games: Vec<AccountGamePart<'a>>,
    account_events: Vec<AccountEventPart<'a>>,
    documents: Vec<&'a str>,
}

impl<'a> Batch<'a> {
    /// The parts of `appends`.
    pub fn of(appends: &[Sealed<'a>]) -> Result<Batch<'a>, StoreError> {
        let mut parts = Parts::default();
        for sealed in appends {
            parts.add_game(sealed);
            parts.add_rows(sealed);
            parts.add_accounts(sealed);
        }
        // PostgreSQL locks the game rows in this order: the same in every batch.
        parts.games.sort_unstable_by_key(|game| game.id);
        let mut noticed: Vec<Noticed<'a>> = Vec::new();
        for event in &parts.account_events {
            match noticed
                .iter_mut()
                .find(|seen| seen.account == event.account)
            {
                Some(seen) => seen.events += 1,
                None => noticed.push(Noticed {
                    account: event.account,
                    events: 1,
                    wake: event.wake,
                }),
            }
        }
        noticed.sort_unstable_by_key(|seen| seen.account);
        Ok(Batch {
            noticed,
            games: text(&parts.games)?,
            events: text(&parts.events)?,
            seats: text(&parts.seats)?,
            responses: text(&parts.responses)?,
            snapshots: text(&parts.snapshots)?,
            account_games: text(&parts.account_games)?,
            account_events: text(&parts.account_events)?,
            documents: parts.documents,
        })
    }
}

impl<'a> Parts<'a> {
    /// The game row of `sealed`, and the seats it takes.
    fn add_game(&mut self, sealed: &Sealed<'a>) {
        let game_id = sealed.game_id;
        let update = sealed.update;
        let projection = self.document(update.projection.get());
        self.games.push(GamePart {
            id: game_id,
            expected: sealed.expected_version,
            version: sealed.expected_version + sealed.entries.len() as i64,
            head_hash: hex::encode(sealed.head_hash),
            status: update.status.name(),
            projection,
            joined: update.new_seats.len() as i32,
            // In the one text form whose order is its time order, as SQLite compares it.
            deadline_at: update.deadline_at.map(|at| at.to_string()),
            last_entry_seq: sealed.entries.last().map(|entry| entry.seq),
            last_entry_at: sealed.entries.last().map(|entry| entry.at.as_str()),
        });
        self.seats
            .extend(update.new_seats.iter().map(|seat| SeatPart {
                game_id,
                seat: seat.seat,
                name: &seat.name,
                bot: seat.bot.as_deref(),
                client_seed: &seat.client_seed,
                token_hash: seat.token_hash.map(hex::encode),
                account: seat.account.as_deref(),
            }));
    }

    /// The entries, stored response and snapshots of `sealed`.
    fn add_rows(&mut self, sealed: &Sealed<'a>) {
        let game_id = sealed.game_id;
        self.events
            .extend(sealed.entries.iter().map(|entry| EventPart {
                game_id,
                seq: entry.seq,
                kind: &entry.kind,
                data: &entry.data,
                at: &entry.at,
                salt: &entry.salt,
                hash: &entry.hash,
            }));
        self.responses
            .extend(sealed.idem.iter().map(|idem| ResponsePart {
                game_id,
                seat: idem.seat,
                key: &idem.key,
                fingerprint: &idem.fingerprint,
                status: idem.response_status,
                body: &idem.response_body,
            }));
        for snapshot in &sealed.update.snapshots {
            let state = self.document(snapshot.state.get());
            self.snapshots.push(SnapshotPart {
                game_id,
                seq: snapshot.seq,
                state,
            });
        }
    }

    /// The rows of the accounts bound to `sealed`'s game: their games and their events.
    fn add_accounts(&mut self, sealed: &Sealed<'a>) {
        let game_id = sealed.game_id;
        let update = sealed.update;
        self.account_games
            .extend(update.account_games.iter().map(|row| AccountGamePart {
                game_id,
                account: &row.account,
                seat: row.seat,
                status: row.status.name(),
                updated_at: row.updated_at.to_string(),
                won: row.won,
            }));
        for event in &update.account_events {
            let ord = self.account_events.len();
            self.account_events.push(AccountEventPart {
                game_id,
                account: &event.account,
                wake: wake_key(&event.account),
                ord,
                at: event.at.to_string(),
                kind: event.kind,
                data: &event.data,
            });
        }
    }

    /// Adds a JSON document; returns its place in [`Batch::documents`], from 1.
    fn document(&mut self, json: &'a str) -> usize {
        self.documents.push(json);
        self.documents.len()
    }
}

impl Batch<'_> {
    /// Whether the batch writes any account's rows.
    pub fn touches_accounts(&self) -> bool {
        !no_rows(&self.account_games) || !no_rows(&self.account_events)
    }
}

/// Whether a part holds no row.
fn no_rows(part: &str) -> bool {
    part == EMPTY
}

/// A part without rows, as [`text`] writes it.
const EMPTY: &str = "[]";

/// One part as JSON text.
fn text(part: &impl Serialize) -> Result<String, StoreError> {
    serde_json::to_string(part).map_err(|e| StoreError::Internal(format!("an append's rows: {e}")))
}
