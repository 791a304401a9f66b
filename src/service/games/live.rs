//! The live log: a game's entries as they are appended, for one viewer, from a given seq on.
//!
//! A [`LiveLog`] never holds a database connection while it waits: it sleeps on the store's
//! wake-up hub ([`crate::store::Changes`]) and reads only when woken, or at each keep-alive
//! (every [`KEEP_ALIVE`], a game at most every [`RECHECK_AGE`]), the safety net for a wake-up
//! that never came. Every read starts after the last entry it handed out, so entries arrive in
//! order, none twice and none skipped, however many wake-ups are lost or doubled. Entries are
//! exactly those `GET .../events` gives the same caller at that moment, as the same text: the
//! shared reads decode and write each entry once, and redact it for each viewer with the same
//! [`redacted_entry`] as [`entry_for`].
//!
//! The streams of one game on one instance share their reads ([`SharedReads`]): the first woken
//! reads the game row and the new entries, the others take them from there, so that one wake-up
//! costs one read per game on each instance rather than one per stream. A stream that opens
//! starts from the shared read too (the streams of a game opened together read it once), unless
//! it asks for entries further back than the shared ones reach: then, as any stream that far
//! behind, it reads on its own.
//!
//! The entries an append of this instance commits are handed to its streams of that game at
//! once ([`SharedReads::publish`]): they need no read, and the append's notification, which says
//! the version it reached, finds them already there.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;
use uuid::Uuid;

use crate::engine::{Event, Status, Viewer};
use crate::service::games::Views;
use crate::service::games::reads::{entry_for, redacted_entry};
use crate::service::{Games, ParsedLater, ServiceError};
use crate::store::codec::entry_event;
use crate::store::{Entry, StoreError, Subscription, Wake};

/// How often an idle stream gets a keep-alive, and re-checks its game in case a wake-up was lost.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// How long a stream waits before it reads again after a failed read.
const RETRY: Duration = Duration::from_millis(500);

/// Entries read by one query of the live log.
const PAGE: i64 = 1000;

/// Entries a game's shared read keeps beyond those of its latest append or read: enough for the
/// moves of a few seconds. Small, because it is kept for every watched game: at 64, the tails of
/// 5,000 games in play held about 130 MiB (docs/SCALING.md).
const SHARED_TAIL: usize = 8;

/// Entries one shared read reaches back at most: streams further behind read on their own.
const SHARED_READ: i64 = 64;

/// A shared read this old is redone by a stream's keep-alive re-check: at most one re-check per
/// game a minute, however many streams follow it. The re-check is the last resort for a wake-up
/// that never came (the hub wakes every stream after it reconnects), and an idle game costs a
/// read each time: at 5 s, 15,000 idle streams of 7,500 games took 7 % of a core, four times
/// what their keep-alives alone did (docs/SCALING.md).
const RECHECK_AGE: Duration = Duration::from_secs(60);

/// What the latest shared read of a game found.
#[derive(Debug, Default)]
struct Recent {
    /// The wake-up generation this read is current for, and when it was made (`None`: never
    /// read).
    fresh_for: Option<(u64, Instant)>,
    /// The game row's status then (`None` once the game is gone: cancelled).
    status: Option<Status>,
    /// The game's version then.
    version: i64,
    /// The latest entries, contiguous and ending at `version`: those of the latest append or
    /// read, and a few more.
    tail: Vec<SharedEntry>,
}

/// An entry of a shared read, with what every stream of its game needs of it, made once rather
/// than once per stream.
#[derive(Debug)]
struct SharedEntry {
    /// The entry without its data, which `event` and `whole` hold: a redaction replaces it.
    entry: Entry,
    /// Its event, for each viewer's redaction (an error if it does not decode: a corrupt log).
    event: Result<Event, String>,
    /// Its JSON text for a viewer from whom it hides nothing.
    whole: String,
}

impl SharedEntry {
    /// `entry`, whose event the caller holds already (an append's own).
    fn new(entry: &Entry, event: Result<Event, String>) -> Self {
        SharedEntry {
            entry: Entry {
                seq: entry.seq,
                at: entry.at.clone(),
                kind: entry.kind.clone(),
                data: Value::Null,
                salt: entry.salt.clone(),
                hash: entry.hash.clone(),
            },
            event,
            whole: entry.to_json().to_string(),
        }
    }

    /// `entry` as read from the store, its event decoded from it.
    fn decoded(entry: &Entry) -> Self {
        SharedEntry::new(entry, entry_event(entry).map(|(event, _)| event))
    }

    fn seq(&self) -> i64 {
        self.entry.seq
    }

    /// The entry's JSON text as `viewer` may see it: the text of [`entry_for`]'s answer.
    fn text_for(&self, viewer: Viewer, finished: bool) -> Result<String, ServiceError> {
        if finished {
            return Ok(self.whole.clone());
        }
        let event = self
            .event
            .as_ref()
            .map_err(|error| StoreError::Corrupt(error.clone()))?;
        Ok(redacted_entry(&self.entry, event, viewer)
            .map_or_else(|| self.whole.clone(), |json| json.to_string()))
    }
}

impl Recent {
    /// Adds `entries`, which follow the tail (or replace it when they do not), and keeps at least
    /// all of them: every stream that was current before them finds them here.
    fn follow(&mut self, entries: Vec<SharedEntry>) {
        let (Some(first), Some(last)) = (entries.first(), entries.last()) else {
            return;
        };
        if first.seq() != self.version + 1 {
            self.tail.clear();
        }
        self.version = last.seq();
        let keep = SHARED_TAIL.max(entries.len());
        self.tail.extend(entries);
        let excess = self.tail.len().saturating_sub(keep);
        self.tail.drain(..excess);
    }
}

/// The shared reads of the games this instance streams: one per game, while a stream of it is
/// open.
#[derive(Default)]
pub struct SharedReads {
    games: Mutex<HashMap<Uuid, Weak<tokio::sync::Mutex<Recent>>>>,
}

impl SharedReads {
    /// The shared read of game `id`, made if no open stream holds it.
    fn of(self: &Arc<Self>, id: Uuid) -> SharedRead {
        let mut games = self.lock();
        let recent = match games.get(&id).and_then(Weak::upgrade) {
            Some(recent) => recent,
            None => {
                let recent = Arc::default();
                games.insert(id, Arc::downgrade(&recent));
                recent
            }
        };
        SharedRead {
            id,
            recent,
            reads: Arc::clone(self),
        }
    }

    /// Hands the entries that an append of this instance committed to game `id` (`events`: the
    /// engine's events they record, one each; the append left the game at `status`; `wake`: the
    /// hub's wake-ups of the game just before) to the streams of that game here, if any. The
    /// append was made at the version before its first entry, so the entries follow the game's
    /// log without a gap, whatever the shared read held. Skipped (those streams then read, as
    /// for another instance's append) if a stream is reading the game right now: a move's answer
    /// never waits for a read.
    pub fn publish(
        &self,
        id: Uuid,
        entries: &[Entry],
        events: &[Event],
        status: Status,
        wake: Wake,
    ) {
        let Some(shared) = self.lock().get(&id).and_then(Weak::upgrade) else {
            return;
        };
        let Ok(mut recent) = shared.try_lock() else {
            return;
        };
        let ahead = entries.last().is_some_and(|last| last.seq > recent.version);
        if !ahead || entries.len() != events.len() {
            return;
        }
        let appended = entries.iter().zip(events);
        recent.follow(
            appended
                .map(|(entry, event)| SharedEntry::new(entry, Ok(event.clone())))
                .collect(),
        );
        recent.status = Some(status);
        recent.fresh_for = Some((wake.generation, Instant::now()));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Uuid, Weak<tokio::sync::Mutex<Recent>>>> {
        self.games
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A stream's hold on its game's shared read; the last one dropped forgets the game.
struct SharedRead {
    id: Uuid,
    recent: Arc<tokio::sync::Mutex<Recent>>,
    reads: Arc<SharedReads>,
}

impl Drop for SharedRead {
    fn drop(&mut self) {
        // Under the map's lock, which every new holder takes first: no one takes it meanwhile.
        let mut games = self.reads.lock();
        if Arc::strong_count(&self.recent) == 1 {
            games.remove(&self.id);
        }
    }
}

/// What a live log has next.
#[derive(Debug)]
pub enum LiveItem {
    /// New entries, in order, as `(seq, the entry's JSON text as the viewer may see it)`.
    Entries(Vec<(i64, String)>),
    /// Nothing new for [`KEEP_ALIVE`]: time to show the client the stream is alive.
    KeepAlive,
    /// The game is gone (cancelled): nothing will ever come.
    Closed,
    /// The account token the stream was opened with was rotated: the stream ends, and what was
    /// read with it is not handed out.
    Revoked,
}

/// One viewer's live log of one game.
pub struct LiveLog {
    service: Games,
    id: Uuid,
    viewer: Viewer,
    /// The hash of the account token it was opened with, if it was one: checked again before
    /// entries are handed out and at every keep-alive.
    account_token: Option<[u8; 32]>,
    /// The seq of the last entry handed out.
    last: i64,
    /// The game finished: no entry can follow the ones read, so no need to look again.
    finished: bool,
    /// Read the log on its own before waiting (more pages to read).
    dirty: bool,
    /// Look at the shared read before waiting (just opened, woken, or re-checking at a
    /// keep-alive).
    woken: bool,
    subscription: Subscription,
    shared: SharedRead,
    next_keep_alive: Instant,
}

impl Views {
    /// Opens the live log of game `id` for the holder of `token`, after entry `after`.
    pub async fn live_log(
        &self,
        id: Uuid,
        token: Option<&str>,
        after: ParsedLater<Option<i64>>,
    ) -> Result<LiveLog, ServiceError> {
        // Subscribed before the first read: a change during it wakes the first wait.
        let subscription = self.games.store.changes().subscribe(id);
        let (record, _) = self.games.load(id).await?;
        let (credential, account_token) = self
            .games
            .accounts
            .lasting_credential(&record, token)
            .await?;
        let after = after.open()?.unwrap_or(0);
        if after < 0 {
            return Err(ServiceError::OutOfRange(
                "after (or Last-Event-ID) must be 0 or more.".to_owned(),
            ));
        }
        Ok(LiveLog {
            service: self.games.clone(),
            id,
            viewer: credential.viewer(),
            account_token,
            last: after,
            finished: false,
            dirty: false,
            woken: true,
            subscription,
            shared: self.games.shared_reads.of(id),
            next_keep_alive: Instant::now() + KEEP_ALIVE,
        })
    }
}

impl LiveLog {
    /// Waits for what comes next, and ends the stream once the account token it was opened with
    /// is rotated: the token is checked after the read, so that nothing appended after the
    /// rotation is handed out. Cancelling it (the client left, the server stops) ends the stream:
    /// what an interrupted call read is not handed out.
    pub async fn next(&mut self) -> LiveItem {
        let item = self.next_item().await;
        let handed_out = matches!(item, LiveItem::Entries(_) | LiveItem::KeepAlive);
        if handed_out && !self.token_is_current().await {
            return LiveItem::Revoked;
        }
        item
    }

    /// Whether the account token the stream was opened with is still its account's (always, for
    /// a seat or host token, which nobody rotates). A check that fails ends the stream too: what
    /// was read could be a rotated token's to see no more, and the client reopens it.
    async fn token_is_current(&self) -> bool {
        let Some(hash) = &self.account_token else {
            return true;
        };
        match self.service.accounts.token_is_current(hash).await {
            Ok(current) => current,
            Err(error) => {
                tracing::warn!(game = %self.id, %error, "cannot check a stream's account token");
                false
            }
        }
    }

    /// What comes next, whatever the token: an interrupted read hands out nothing and is done
    /// again by the next call.
    async fn next_item(&mut self) -> LiveItem {
        loop {
            if (self.dirty || self.woken) && !self.finished {
                let read = if self.dirty {
                    self.dirty = false;
                    self.read().await
                } else {
                    self.read_shared().await
                };
                self.woken = false;
                match read {
                    Ok(None) => return LiveItem::Closed,
                    Ok(Some(entries)) if !entries.is_empty() => return LiveItem::Entries(entries),
                    Ok(Some(_)) => {}
                    // A busy pool or a database away for a while: the client's stream stays
                    // open, the read is tried again shortly, and the keep-alives go on meanwhile,
                    // or a proxy would take the silence for a dead stream.
                    Err(error) => {
                        tracing::warn!(game = %self.id, %error, "cannot read the live log");
                        self.woken = true;
                        let retry = Instant::now() + RETRY;
                        if retry < self.next_keep_alive {
                            tokio::time::sleep_until(retry).await;
                            continue;
                        }
                        tokio::time::sleep_until(self.next_keep_alive).await;
                        self.next_keep_alive = Instant::now() + KEEP_ALIVE;
                        return LiveItem::KeepAlive;
                    }
                }
            }
            tokio::select! {
                _ = self.subscription.changed() => self.woken = true,
                _ = tokio::time::sleep_until(self.next_keep_alive) => {
                    self.next_keep_alive = Instant::now() + KEEP_ALIVE;
                    self.woken = true;
                    return LiveItem::KeepAlive;
                }
            }
        }
    }

    /// New entries from the game's shared read, refreshed first if a wake-up since it was made
    /// may announce more than it holds, or (for a keep-alive re-check) if it is older than
    /// [`RECHECK_AGE`]; a stream behind what it holds reads on its own. `None` when the game is
    /// gone.
    async fn read_shared(&mut self) -> Result<Option<Vec<(i64, String)>>, ServiceError> {
        let shared = Arc::clone(&self.shared.recent);
        let mut recent = shared.lock().await;
        let wake = self.subscription.latest();
        let stale = recent.fresh_for.is_none_or(|(generation, at)| {
            wake.outdates(generation, recent.version) || at.elapsed() >= RECHECK_AGE
        });
        if stale {
            // Taken before reading: a wake-up during the read makes the next reader read again.
            let generation = wake.generation;
            self.refresh(&mut recent).await?;
            recent.fresh_for = Some((generation, Instant::now()));
        }
        let Some(status) = recent.status else {
            return Ok(None);
        };
        let first = recent
            .tail
            .first()
            .map_or(recent.version + 1, SharedEntry::seq);
        // `last` may be any seq a client names, up to i64::MAX.
        if first > self.last.saturating_add(1) {
            drop(recent);
            return self.read().await;
        }
        let finished = status == Status::Finished;
        let shown = recent
            .tail
            .iter()
            .filter(|entry| entry.seq() > self.last)
            .map(|entry| Ok((entry.seq(), entry.text_for(self.viewer, finished)?)))
            .collect::<Result<Vec<_>, ServiceError>>()?;
        self.last = self.last.max(recent.version);
        self.finished = finished;
        Ok(Some(shown))
    }

    /// Reads the game row and the entries after `recent`'s (at most [`SHARED_READ`]) into it.
    async fn refresh(&self, recent: &mut Recent) -> Result<(), ServiceError> {
        let Some(record) = self.service.store.load_game(self.id).await? else {
            recent.status = None;
            return Ok(());
        };
        if record.version > recent.version {
            let after = recent.version.max(record.version - SHARED_READ);
            let entries = self
                .service
                .store
                .load_events(self.id, after, record.version - after)
                .await?;
            recent.follow(entries.iter().map(SharedEntry::decoded).collect());
            if recent.version != record.version {
                // An entry was missing: the tail must end at `version`, so it holds none, and
                // the streams read on their own.
                recent.tail.clear();
                recent.version = record.version;
            }
        }
        recent.status = Some(record.status);
        Ok(())
    }

    /// Entries after `last` up to the version the game row shows (a page at most), redacted as
    /// that row's status says; `None` when the game is gone.
    async fn read(&mut self) -> Result<Option<Vec<(i64, String)>>, ServiceError> {
        let Some(record) = self.service.store.load_game(self.id).await? else {
            return Ok(None);
        };
        let finished = record.status == Status::Finished;
        if record.version <= self.last {
            self.finished = finished;
            return Ok(Some(Vec::new()));
        }
        // No further than the version read with the status: an entry appended since then is
        // redacted as its own read will say.
        let limit = (record.version - self.last).min(PAGE);
        let entries = self
            .service
            .store
            .load_events(self.id, self.last, limit)
            .await?;
        let shown = entries
            .iter()
            .map(|entry| {
                let json = entry_for(entry, self.viewer, finished)?;
                Ok((entry.seq, json.to_string()))
            })
            .collect::<Result<Vec<_>, ServiceError>>()?;
        if let Some((seq, _)) = shown.last() {
            self.last = *seq;
        }
        // More to read than one page: read again before waiting.
        self.dirty = self.last < record.version;
        self.finished = finished && !self.dirty;
        Ok(Some(shown))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(seqs: std::ops::RangeInclusive<i64>) -> Vec<SharedEntry> {
        seqs.map(|seq| Entry {
            seq,
            at: String::new(),
            kind: "card_drawn".to_owned(),
            data: Value::Null,
            salt: String::new(),
            hash: String::new(),
        })
        .map(|entry| SharedEntry::decoded(&entry))
        .collect()
    }

    #[test]
    fn a_shared_entry_shows_each_viewer_what_the_log_page_shows_them() {
        let drawn = Entry {
            seq: 7,
            at: "2026-12-05T18:00:00.000000Z".to_owned(),
            kind: "card_drawn".to_owned(),
            data: serde_json::json!({"seat": 0, "source": "stock", "card": "10H"}),
            salt: "00112233445566778899aabbccddeeff".to_owned(),
            hash: "ab".repeat(32),
        };
        let shared = SharedEntry::decoded(&drawn);
        for viewer in [Viewer::Spectator, Viewer::Seat(0), Viewer::Seat(1)] {
            for finished in [false, true] {
                let page = entry_for(&drawn, viewer, finished).unwrap().to_string();
                let streamed = shared.text_for(viewer, finished).unwrap();
                assert_eq!(streamed, page, "{viewer:?}, finished: {finished}");
                let hidden = !finished && viewer != Viewer::Seat(0);
                assert_eq!(!streamed.contains("10H"), hidden, "{streamed}");
            }
        }
    }

    fn seqs(recent: &Recent) -> Vec<i64> {
        recent.tail.iter().map(SharedEntry::seq).collect()
    }

    #[test]
    fn a_shared_read_keeps_a_few_entries_and_all_of_the_latest_append() {
        let mut recent = Recent::default();
        recent.follow(entries(1..=5));
        recent.follow(entries(6..=10));
        assert_eq!(seqs(&recent), (3..=10).collect::<Vec<_>>());
        // One append of a move and the bot turns it led to: a stream current before it finds
        // every entry of it here.
        recent.follow(entries(11..=30));
        assert_eq!(seqs(&recent), (11..=30).collect::<Vec<_>>());
        recent.follow(entries(31..=31));
        assert_eq!(seqs(&recent), (24..=31).collect::<Vec<_>>());
        assert_eq!(recent.version, 31);
        // Entries that do not follow the tail replace it.
        recent.follow(entries(40..=41));
        assert_eq!(seqs(&recent), [40, 41]);
        assert_eq!(recent.version, 41);
    }
}
