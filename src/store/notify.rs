//! The per-instance wake-up hub: who waits for new entries of which game, and what wakes them.
//!
//! Streams of the live log subscribe to a game and sleep until it changes. A wake-up only says
//! "look again": a stream always re-reads the log after the last entry it sent, so a wake-up
//! that is lost, doubled or spurious never skips or repeats an entry. On SQLite the store wakes
//! the hub itself after each commit (one process owns the file). On PostgreSQL every append
//! sends `NOTIFY golf_events` with its game id inside its transaction (delivered on commit to
//! every instance), and each instance holds one dedicated listening connection that feeds its
//! hub; when that connection drops, the hub reconnects with back-off and then wakes every
//! stream, since notifications sent meanwhile are lost.
//!
//! A wake-up may say which version the game reached (an append's notification carries it:
//! `{id} {version}`), so that a stream that already holds that version (its instance made the
//! append and handed its entries over at once) need not read; one that does not say (a cancel,
//! a reconnection) always makes the streams read. The announcement of an append that this
//! instance is still handing over ([`Changes::expect_own`]) is left to the hand-over, which may
//! come after it: woken by the announcement, the streams would read what they are about to get.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgListener, PgPoolOptions};
use tokio::sync::{oneshot, watch};
use uuid::Uuid;

/// The PostgreSQL channel that appends notify, with `{game id} {version}` as payload (or the
/// game id alone, for a change without a version).
pub const CHANNEL: &str = "golf_events";

/// The `application_name` of the listening connection, so operators (and a test) can find it in
/// `pg_stat_activity`.
pub const LISTENER_APPLICATION_NAME: &str = "golf-server-listener";

/// The first and the longest wait before reconnecting a dropped listening connection.
const BACKOFF_FIRST: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// Where one game's wake-ups stand.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wake {
    /// Counts the wake-ups.
    pub generation: u64,
    /// The highest version a wake-up announced.
    pub version: i64,
    /// The generation of the last wake-up that announced no version.
    pub unversioned: u64,
}

impl Wake {
    /// Whether a read made at generation `read_at`, which saw the game at `version`, may miss
    /// something a wake-up announced: a version beyond it (whenever it was announced: another
    /// instance's append can be announced before this instance hands over its own, older one),
    /// or a wake-up since that said no version.
    pub fn outdates(&self, read_at: u64, version: i64) -> bool {
        self.version > version || self.unversioned > read_at
    }
}

/// The hub: one [`Wake`] per game that somebody waits for.
#[derive(Default)]
pub struct Changes {
    games: Mutex<HashMap<Uuid, watch::Sender<Wake>>>,
    /// This instance's appends on their way: (game, version it reaches) → how many.
    own: Mutex<HashMap<(Uuid, i64), usize>>,
    /// Dropped with the hub, which stops its listening task.
    stop: Mutex<Option<oneshot::Sender<()>>>,
    /// The listening task, until the jobs take it to run it.
    listener: Mutex<Option<Listener>>,
}

/// The task that feeds a hub from its listening connection.
pub type Listener = std::pin::Pin<Box<dyn Future<Output = ()> + Send>>;

impl Changes {
    /// A hub woken only in-process, by [`Changes::wake`].
    pub fn in_process() -> Arc<Self> {
        Arc::new(Changes::default())
    }

    /// A hub fed by a dedicated connection that listens on [`CHANNEL`] of the database that
    /// `server` names. The connection is opened by a task that the instance's jobs run
    /// ([`Changes::take_listener`]), so that a database that is slow to answer does not hold up
    /// the start; it ends when the hub is dropped, or when the jobs stop.
    pub fn listening(server: &PgConnectOptions) -> Arc<Self> {
        let changes = Arc::new(Changes::default());
        let (stop_sender, stop) = oneshot::channel();
        *lock(&changes.stop) = Some(stop_sender);
        // One connection, kept for as long as it lives: no lifetime or idle limit, and no
        // statement timeout, since it only waits.
        let pool = PgPoolOptions::new()
            .max_connections(1)
            .max_lifetime(None)
            .idle_timeout(None)
            .acquire_timeout(BACKOFF_MAX)
            .connect_lazy_with(server.clone().application_name(LISTENER_APPLICATION_NAME));
        *lock(&changes.listener) = Some(Box::pin(listen(pool, Arc::downgrade(&changes), stop)));
        changes
    }

    /// The task that listens for other instances' changes, once (none for an in-process hub).
    pub fn take_listener(&self) -> Option<Listener> {
        lock(&self.listener).take()
    }

    /// Waits for changes of `game_id` from now on.
    pub fn subscribe(self: &Arc<Self>, game_id: Uuid) -> Subscription {
        let mut games = lock(&self.games);
        let sender = games
            .entry(game_id)
            .or_insert_with(|| watch::channel(Wake::default()).0);
        Subscription {
            receiver: Some(sender.subscribe()),
            seen: 0,
            game_id,
            changes: Arc::clone(self),
        }
    }

    /// Where the wake-ups of `game_id` stand (the first [`Wake`] when nobody waits for it).
    pub fn current(&self, game_id: Uuid) -> Wake {
        lock(&self.games)
            .get(&game_id)
            .map_or(Wake::default(), |sender| *sender.borrow())
    }

    /// Wakes every subscriber of `game_id` (none: nothing to do), saying nothing of its version.
    pub fn wake(&self, game_id: Uuid) {
        if let Some(sender) = lock(&self.games).get(&game_id) {
            sender.send_modify(unversioned);
        }
    }

    /// Wakes every subscriber of `game_id`, which reached `version`.
    pub fn wake_at(&self, game_id: Uuid, version: i64) {
        if let Some(sender) = lock(&self.games).get(&game_id) {
            sender.send_modify(|wake| {
                wake.generation += 1;
                wake.version = wake.version.max(version);
            });
        }
    }

    /// Wakes the subscribers of `game_id`, which an append brought to `version`, unless that
    /// append is this instance's own and still being handed over.
    pub fn announce(&self, game_id: Uuid, version: i64) {
        if !lock(&self.own).contains_key(&(game_id, version)) {
            self.wake_at(game_id, version);
        }
    }

    /// Marks an append of this instance that will bring `game_id` to `version` as on its way,
    /// until the returned mark is dropped: its announcement wakes nobody meanwhile. A mark
    /// dropped without [`OwnAppend::handed_over`] (the append failed, or its outcome is
    /// unknown) wakes the game's streams, in case it was written after all.
    pub fn expect_own(self: &Arc<Self>, game_id: Uuid, version: i64) -> OwnAppend {
        *lock(&self.own).entry((game_id, version)).or_default() += 1;
        OwnAppend {
            changes: Arc::clone(self),
            key: (game_id, version),
            handed_over: false,
        }
    }

    /// Wakes every subscriber of every game.
    pub fn wake_all(&self) {
        for sender in lock(&self.games).values() {
            sender.send_modify(unversioned);
        }
    }
}

fn unversioned(wake: &mut Wake) {
    wake.generation += 1;
    wake.unversioned = wake.generation;
}

/// An append of this instance on its way ([`Changes::expect_own`]).
pub struct OwnAppend {
    changes: Arc<Changes>,
    key: (Uuid, i64),
    handed_over: bool,
}

impl OwnAppend {
    /// The append's entries reached this instance's streams, which were woken.
    pub fn handed_over(mut self) {
        self.handed_over = true;
    }
}

impl Drop for OwnAppend {
    fn drop(&mut self) {
        let mut own = lock(&self.changes.own);
        if let Some(count) = own.get_mut(&self.key) {
            *count -= 1;
            if *count == 0 {
                own.remove(&self.key);
            }
        }
        drop(own);
        if !self.handed_over {
            self.changes.wake(self.key.0);
        }
    }
}

/// A poisoned lock only means another thread panicked while it held a plain map: keep going.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Interest in one game's changes; dropping it unsubscribes.
pub struct Subscription {
    receiver: Option<watch::Receiver<Wake>>,
    /// The generation of the last wake-up [`Subscription::changed`] returned for.
    seen: u64,
    game_id: Uuid,
    changes: Arc<Changes>,
}

impl Subscription {
    /// Resolves at the first wake-up since the previous call returned (at once if one came in
    /// between, so a change during a read of the log is never missed).
    pub async fn changed(&mut self) {
        match self.receiver.as_mut() {
            Some(receiver) => {
                // The sender lives in the hub's map while this receiver does: never closed.
                if receiver.changed().await.is_err() {
                    std::future::pending::<()>().await;
                }
                self.seen = receiver.borrow_and_update().generation;
            }
            None => std::future::pending().await,
        }
    }

    /// The wake-ups now (those not yet returned included).
    pub fn latest(&self) -> Wake {
        self.receiver.as_ref().map_or(
            Wake {
                generation: self.seen,
                ..Wake::default()
            },
            |receiver| *receiver.borrow(),
        )
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        drop(self.receiver.take());
        let mut games = lock(&self.changes.games);
        if games
            .get(&self.game_id)
            .is_some_and(|sender| sender.receiver_count() == 0)
        {
            games.remove(&self.game_id);
        }
    }
}

/// The listening task: feeds the hub from [`CHANNEL`] until the hub is dropped, reconnecting
/// with back-off whenever the connection fails, and waking every stream after each (re)connect.
async fn listen(pool: sqlx::PgPool, changes: Weak<Changes>, mut stop: oneshot::Receiver<()>) {
    let mut backoff = BACKOFF_FIRST;
    loop {
        let connected = tokio::select! {
            _ = &mut stop => return,
            connected = connect_listener(&pool) => connected,
        };
        let mut listener = match connected {
            Ok(listener) => listener,
            Err(error) => {
                tracing::warn!(%error, retry_in = ?backoff, "cannot listen for new log entries");
                tokio::select! {
                    _ = &mut stop => return,
                    _ = tokio::time::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(BACKOFF_MAX);
                continue;
            }
        };
        backoff = BACKOFF_FIRST;
        // Entries appended while nobody listened were announced to nobody.
        match changes.upgrade() {
            Some(changes) => changes.wake_all(),
            None => return,
        }
        loop {
            let received = tokio::select! {
                _ = &mut stop => return,
                received = listener.try_recv() => received,
            };
            let Some(changes) = changes.upgrade() else {
                return;
            };
            match received {
                Ok(Some(notification)) => match parse_payload(notification.payload()) {
                    Some((game_id, Some(version))) => changes.announce(game_id, version),
                    Some((game_id, None)) => changes.wake(game_id),
                    None => tracing::warn!("a notification on golf_events without a game id"),
                },
                Ok(None) => {
                    tracing::warn!("the listening connection dropped: reconnecting");
                    break;
                }
                Err(error) => {
                    tracing::warn!(%error, "the listening connection failed: reconnecting");
                    break;
                }
            }
        }
    }
}

/// The game id and version of a notification's payload: `{id} {version}` or `{id}`.
fn parse_payload(payload: &str) -> Option<(Uuid, Option<i64>)> {
    match payload.split_once(' ') {
        Some((id, version)) => Some((id.parse().ok()?, Some(version.parse().ok()?))),
        None => Some((payload.parse().ok()?, None)),
    }
}

/// A fresh listener on [`CHANNEL`].
async fn connect_listener(pool: &sqlx::PgPool) -> Result<PgListener, sqlx::Error> {
    let mut listener = PgListener::connect_with(pool).await?;
    // The pool is this task's own: nobody closes it while the listener waits.
    listener.ignore_pool_close_event(true);
    listener.listen(CHANNEL).await?;
    Ok(listener)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn a_wake_up_between_two_waits_is_kept_and_the_last_subscriber_cleans_up() {
        let changes = Changes::in_process();
        let game = Uuid::new_v4();
        let mut first = changes.subscribe(game);
        let second = changes.subscribe(game);
        // Woken while nobody waits (a stream busy reading): the next wait returns at once.
        changes.wake(game);
        changes.wake(Uuid::new_v4());
        tokio::time::timeout(Duration::from_secs(1), first.changed())
            .await
            .expect("the wake-up was kept");
        // Consumed: the next wait waits.
        assert!(
            tokio::time::timeout(Duration::from_millis(50), first.changed())
                .await
                .is_err()
        );
        changes.wake_all();
        tokio::time::timeout(Duration::from_secs(1), first.changed())
            .await
            .expect("wake_all wakes every game");
        drop(first);
        assert!(lock(&changes.games).contains_key(&game));
        drop(second);
        assert!(lock(&changes.games).is_empty());
    }

    #[tokio::test]
    async fn an_announcement_of_an_own_append_waits_for_its_hand_over() {
        let changes = Changes::in_process();
        let game = Uuid::new_v4();
        let mut stream = changes.subscribe(game);
        let read_at = changes.current(game).generation;
        let own = changes.expect_own(game, 7);
        // The database announces version 7 before the instance handed it over: nobody wakes.
        changes.announce(game, 7);
        assert_eq!(changes.current(game).generation, read_at);
        changes.wake_at(game, 7);
        own.handed_over();
        stream.changed().await;
        let wake = stream.latest();
        assert!(
            !wake.outdates(read_at, 7),
            "a read that holds version 7 is current"
        );
        assert!(wake.outdates(read_at, 6));
        // Another instance's newer append, announced before a hand-over of version 7 that took
        // the generation after it, still outdates what was handed over.
        changes.announce(game, 8);
        assert!(
            changes
                .current(game)
                .outdates(changes.current(game).generation, 7)
        );
        stream.changed().await;
        let wake = stream.latest();
        // An append that fails, or whose outcome is unknown, wakes the streams to read.
        drop(changes.expect_own(game, 9));
        stream.changed().await;
        assert!(stream.latest().outdates(wake.generation, 8));
        assert!(parse_payload(&format!("{game} 8")) == Some((game, Some(8))));
        assert!(parse_payload(&game.to_string()) == Some((game, None)));
        assert!(parse_payload("x 8").is_none() && parse_payload(&format!("{game} x")).is_none());
    }
}
