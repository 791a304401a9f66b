//! The use cases that only read: views, the lobby, pages of the log, replays, and the export of a
//! finished game's log.

use serde_json::Value;
use uuid::Uuid;

use crate::audit::{ndjson, replay};
use crate::engine::{self, Event, State, Status, View, Viewer};
use crate::service::games::Views;
use crate::service::games::credentials::Credential;
use crate::service::paging::{check_limit, decode_cursor, encode_cursor};
use crate::service::{EventsPage, LobbyPage, ParsedLater, ServiceError};
use crate::store::codec::entry_event;
use crate::store::{self, Entry, GameRecord, LobbyCursor, StoreError};

/// The export of a finished game.
pub struct Exported {
    /// The game's last version, which tags its log for good.
    pub version: u64,
    /// The log as NDJSON; `None` when the caller has it already.
    pub ndjson: Option<String>,
}

impl Views {
    /// The public (spectator) view of a game. A token, if given, must still be one of this game's:
    /// a bad credential is refused, never ignored.
    pub async fn public_view(&self, id: Uuid, token: Option<&str>) -> Result<View, ServiceError> {
        let game = self.games.current(id).await?;
        self.games.accounts.credential(&game.record, token).await?;
        Ok(engine::view(&game.state, Viewer::Spectator))
    }

    /// The caller's own view: requires a seat token.
    pub async fn own_view(&self, id: Uuid, token: Option<&str>) -> Result<View, ServiceError> {
        let game = self.games.current(id).await?;
        match self.games.accounts.credential(&game.record, token).await? {
            Credential::Seat(seat) => Ok(engine::view(&game.state, Viewer::Seat(seat))),
            _ => Err(ServiceError::Unauthorized(
                "This endpoint needs a seat token: Authorization: Bearer <token>.",
            )),
        }
    }

    /// Waiting, public games with free seats, newest first; asking for another `status` is out
    /// of the lobby's range.
    pub async fn lobby(
        &self,
        status: Option<Status>,
        limit: Option<i64>,
        cursor: Option<&str>,
    ) -> Result<LobbyPage, ServiceError> {
        if let Some(status @ (Status::Playing | Status::Finished)) = status {
            return Err(ServiceError::OutOfRange(format!(
                "The lobby lists only waiting games, not {} ones.",
                status.name()
            )));
        }
        let limit = check_limit(limit, 20, 100)?;
        let cursor = cursor.map(decode_cursor).transpose()?;
        let mut games = self.games.store.list_waiting(limit + 1, cursor).await?;
        let more = games.len() as i64 > limit;
        games.truncate(limit as usize);
        let next_cursor = if more {
            games
                .last()
                .map(|game| encode_cursor(&LobbyCursor::from(game)))
        } else {
            None
        };
        let views = games
            .into_iter()
            .map(|game| {
                game.state()
                    .map(|state| engine::view(&state, Viewer::Spectator))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(LobbyPage {
            games: views,
            next_cursor,
        })
    }

    /// A page of the log, redacted for the caller while the game runs. `query` is the
    /// `(after, limit)` asked for.
    pub async fn events(
        &self,
        id: Uuid,
        token: Option<&str>,
        query: ParsedLater<(Option<i64>, Option<i64>)>,
    ) -> Result<EventsPage, ServiceError> {
        let (record, state) = self.games.load(id).await?;
        let credential = self.games.accounts.credential(&record, token).await?;
        let (after, limit) = query.open()?;
        let limit = check_limit(limit, 100, 1000)?;
        let after = after.unwrap_or(0);
        if after < 0 {
            return Err(ServiceError::OutOfRange(
                "after must be 0 or more.".to_owned(),
            ));
        }
        let entries = self.games.store.load_events(id, after, limit).await?;
        let finished = state.status == Status::Finished;
        let next_after = (entries.len() as i64 == limit && after + limit < record.version)
            .then(|| entries.last().map(|entry| entry.seq))
            .flatten();
        let events = entries
            .iter()
            .map(|entry| entry_for(entry, credential.viewer(), finished))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(EventsPage { events, next_after })
    }

    /// The complete log of a finished game as NDJSON: each line the canonical JSON of an entry
    /// (what `golf-server verify` checks byte for byte), unless `client_has` says the caller has
    /// it at the game's version already. A token, if given, must be one of this game's; before
    /// the end the log holds secrets, so it is `not_finished`.
    pub async fn export(
        &self,
        id: Uuid,
        token: Option<&str>,
        client_has: impl FnOnce(u64) -> bool,
    ) -> Result<Exported, ServiceError> {
        let (record, state) = self.games.load(id).await?;
        self.games.accounts.credential(&record, token).await?;
        if state.status != Status::Finished {
            return Err(ServiceError::NotFinished);
        }
        let version = state.version;
        if client_has(version) {
            return Ok(Exported {
                version,
                ndjson: None,
            });
        }
        let entries = store::load_log(self.games.store.as_ref(), id, record.version).await?;
        Ok(Exported {
            version,
            ndjson: Some(entries.iter().map(ndjson::line).collect()),
        })
    }

    /// The view the caller would have had right after entry `seq`.
    pub async fn replay(
        &self,
        id: Uuid,
        seq: i64,
        token: Option<&str>,
    ) -> Result<View, ServiceError> {
        let (record, current) = self.games.load(id).await?;
        let credential = self.games.accounts.credential(&record, token).await?;
        if seq < 1 || seq > record.version {
            return Err(ServiceError::NotFound(
                "This game has no entry with that seq.",
            ));
        }
        let state = if seq == record.version {
            current
        } else {
            self.state_at(&record, seq).await?
        };
        Ok(engine::view(&state, credential.viewer()))
    }

    /// Rebuilds the state of `record`'s game after entry `seq` by replaying its log through the
    /// engine, every command re-decided with the game's secrets, from the latest snapshot at or
    /// before `seq` (taken at each deal), else from the first entry.
    async fn state_at(&self, record: &GameRecord, seq: i64) -> Result<State, ServiceError> {
        let snapshot = self.games.store.load_snapshot(record.id, seq).await?;
        let after = snapshot.as_ref().map_or(0, |snapshot| snapshot.seq);
        let entries =
            store::load_log_between(self.games.store.as_ref(), record.id, after, seq).await?;
        Ok(replay::state_after(record, snapshot, &entries)?)
    }
}

/// A stored entry as `viewer` may see it: hidden fields null and `salt` null when redacted.
pub(super) fn entry_for(
    entry: &Entry,
    viewer: Viewer,
    finished: bool,
) -> Result<Value, ServiceError> {
    if finished {
        return Ok(entry.to_json());
    }
    let (event, _) = entry_event(entry).map_err(StoreError::Corrupt)?;
    Ok(redacted_entry(entry, &event, viewer).unwrap_or_else(|| entry.to_json()))
}

/// `entry` of a game not finished, whose event is `event`, redacted for `viewer` (hidden fields
/// null and `salt` null), or `None` when it hides nothing from them.
pub(super) fn redacted_entry(entry: &Entry, event: &Event, viewer: Viewer) -> Option<Value> {
    let redacted = engine::redact_event(event, viewer)?;
    let mut json = entry.to_json();
    json["data"] = redacted["data"].clone();
    json["salt"] = Value::Null;
    Some(json)
}
