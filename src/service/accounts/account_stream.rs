//! The live stream of an account's events: every event after a given id, then each new one as
//! an append on any instance stores it.
//!
//! Like the live log of a game ([`super::live`]), it never holds a connection while it waits: it
//! sleeps on the store's wake-up hub under the account's key ([`crate::store::accounts::wake_key`])
//! and reads only when woken, or at each keep-alive, the safety net for a lost wake-up. Every read
//! starts after the last event handed out, so none is skipped or repeated.
//!
//! A rotation of the account's token wakes its streams ([`crate::store::AccountStore::rotate_account_token`]):
//! each one checks at every wake-up and keep-alive that the token it was opened with is still the
//! account's, and ends when it is not, so a revoked token reads nothing more.

use serde_json::Value;
use tokio::time::Instant;

use crate::service::accounts::account_games::check_after;
use crate::service::accounts::events::shown;
use crate::service::games::live::KEEP_ALIVE;
use crate::service::{Accounts, ServiceError};
use crate::store::Subscription;
use crate::store::accounts::wake_key;

/// Events read by one query of the stream.
const PAGE: i64 = 100;

/// What an account's stream has next.
#[derive(Debug)]
pub enum AccountItem {
    /// New events, in order, as `(id, event)`.
    Events(Vec<(i64, Value)>),
    /// Nothing new for [`KEEP_ALIVE`].
    KeepAlive,
    /// The token the stream was opened with is no longer the account's: the stream ends.
    Revoked,
}

/// One account's live stream of events.
pub struct AccountStream {
    service: Accounts,
    username: String,
    /// The hash of the token it was opened with.
    token_hash: [u8; 32],
    /// The id of the last event handed out.
    last: i64,
    /// Read before waiting (just opened, woken, or more pages to read).
    dirty: bool,
    subscription: Subscription,
    next_keep_alive: Instant,
}

impl Accounts {
    /// Opens the stream of the events of `token`'s account after id `after`.
    pub async fn account_stream(
        &self,
        token: Option<&str>,
        after: Option<i64>,
    ) -> Result<AccountStream, ServiceError> {
        let account = self.account_of(token).await?;
        let last = check_after(after)?;
        // Subscribed before the first read: an event stored during it wakes the first wait.
        let subscription = self.store.changes().subscribe(wake_key(&account.username));
        Ok(AccountStream {
            service: self.clone(),
            username: account.username,
            token_hash: account.token_hash,
            last,
            dirty: true,
            subscription,
            next_keep_alive: Instant::now() + KEEP_ALIVE,
        })
    }
}

impl AccountStream {
    /// Waits for what comes next; cancelling it loses nothing (the next call reads again).
    pub async fn next(&mut self) -> AccountItem {
        loop {
            if self.dirty {
                match self.read().await {
                    Ok(None) => return AccountItem::Revoked,
                    Ok(Some(events)) if !events.is_empty() => return AccountItem::Events(events),
                    Ok(Some(_)) => {}
                    // The database away for a while: try again at the next keep-alive.
                    Err(error) => {
                        tracing::warn!(%error, "cannot read an account's events");
                        self.dirty = false;
                    }
                }
            }
            tokio::select! {
                _ = self.subscription.changed() => self.dirty = true,
                _ = tokio::time::sleep_until(self.next_keep_alive) => {
                    self.next_keep_alive = Instant::now() + KEEP_ALIVE;
                    self.dirty = true;
                    return AccountItem::KeepAlive;
                }
            }
        }
    }

    /// The events after `last`, a page at most, read with the check that the token the stream
    /// was opened with is still the account's (`None` once it is not: a revoked token reads
    /// nothing more). The stream stays `dirty` only after a full page (an event stored after
    /// the read wakes it again). A database away for a while revokes nothing: the next wake-up
    /// asks again.
    async fn read(&mut self) -> Result<Option<Vec<(i64, Value)>>, ServiceError> {
        let read = self.service.store.accounts().account_events_for_token(
            &self.username,
            &self.token_hash,
            self.last,
            PAGE,
        );
        let Some(events) = read.await? else {
            return Ok(None);
        };
        if let Some(event) = events.last() {
            self.last = event.id;
        }
        self.dirty = events.len() as i64 == PAGE;
        Ok(Some(
            events
                .iter()
                .map(|event| (event.id, shown(event)))
                .collect(),
        ))
    }
}
