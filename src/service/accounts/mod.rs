//! Accounts (v1.2): usernames and their rules, creating an account, telling whose account token
//! (or game token) a request presents, rotating it, and the account's and profile's replies;
//! an account's games and events ([`account_games`], [`events`]), its live stream
//! ([`account_stream`]) and its webhook ([`webhooks`], behind the address guard of
//! [`webhook_client`]).
//!
//! An account token is a [`Token`] like a seat's: shown once, stored as its SHA-256, and looked up
//! by that hash on every request (no instance keeps one), then compared in constant time.

pub mod account_games;
pub mod account_stream;
pub mod events;
pub mod webhook_client;
pub mod webhooks;

use std::sync::Arc;

use serde::Serialize;
use subtle::ConstantTimeEq;
use utoipa::ToSchema;

use crate::engine::{PlayerName, Timestamp};
use crate::ratings::Rating;
use crate::service::accounts::account_games::{GameCounts, GameSummary};
use crate::service::games::credentials::{Credential, Token, account_credential, authenticate};
use crate::service::{Answer, Clock, IdempotencyKey, ServiceError};
use crate::store::codec::to_json;
use crate::store::{
    AccountRecord, CreateIdempotency, EventStore, GameRecord, NewAccount, StoreError,
};
use webhooks::Webhooks;

/// The accounts, over the store.
#[derive(Clone)]
pub struct Accounts {
    store: Arc<dyn EventStore>,
    clock: Clock,
    webhooks: Arc<Webhooks>,
}

impl Accounts {
    /// The accounts of `store`, on `clock`, whose webhooks are registered as `webhooks` says.
    pub fn new(store: Arc<dyn EventStore>, clock: Clock, webhooks: Arc<Webhooks>) -> Self {
        Accounts {
            store,
            clock,
            webhooks,
        }
    }

    /// How this instance registers and delivers webhooks.
    pub fn webhooks(&self) -> &Arc<Webhooks> {
        &self.webhooks
    }

    fn now(&self) -> Timestamp {
        self.clock.now()
    }
}

/// Usernames that start so are the built-in bots' (`bot-random`, `bot-greedy`, ...).
const RESERVED_PREFIX: &str = crate::ratings::BOT_PREFIX;

/// A username: 3 to 24 of `a-z 0-9 _ -`, starting with a letter, lowercase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Username(String);

impl Username {
    /// `raw` lowercased, if it is a username a person may take.
    pub fn choose(raw: &str) -> Result<Username, ServiceError> {
        let name = raw.to_ascii_lowercase();
        let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || "_-".contains(c);
        let valid = (3..=24).contains(&name.len())
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && name.chars().all(allowed);
        if !valid {
            return Err(ServiceError::InvalidUsername(
                "A username is 3 to 24 of a-z, 0-9, _ and -, starting with a letter.",
            ));
        }
        if name.starts_with(RESERVED_PREFIX) {
            return Err(ServiceError::InvalidUsername(
                "Usernames starting with bot- are reserved for the built-in bots.",
            ));
        }
        Ok(Username(name))
    }

    /// `raw` lowercased, as usernames are compared (for a lookup: no rule checked).
    pub fn lookup(raw: &str) -> Username {
        Username(raw.to_ascii_lowercase())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// An account as its holder sees it (`GET /v1/account`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Account {
    /// Lowercase; see `POST /v1/accounts`.
    pub username: String,
    /// The name its seats take unless a join names another.
    pub display_name: String,
    /// When it was created (RFC 3339, UTC).
    pub created_at: String,
    /// Its rating in free-for-all rated games (1500 before the first).
    pub rating: Rating,
    pub games: GameCounts,
}

/// A new account, with its secret token (shown once).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct CreatedAccount {
    #[serde(flatten)]
    pub account: Account,
    /// The account token: `Authorization: Bearer <token>`. Shown once, stored only hashed.
    pub token: String,
}

/// The account's new token, after a rotation; the old one is refused from now on.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RotatedToken {
    /// The account token: `Authorization: Bearer <token>`. Shown once, stored only hashed.
    pub token: String,
}

/// An account as anyone sees it (`GET /v1/accounts/{username}`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Profile {
    pub username: String,
    pub display_name: String,
    /// Its rating in free-for-all rated games (1500 before the first).
    pub rating: Rating,
    pub games: GameCounts,
    /// Its last 10 finished games, newest first.
    pub recent: Vec<GameSummary>,
}

/// An account as the client asks for it, before validation.
#[derive(Debug, Clone)]
pub struct NewAccountRequest {
    pub username: String,
    pub display_name: Option<String>,
}

impl Account {
    fn of(record: &AccountRecord, games: GameCounts) -> Account {
        Account {
            username: record.username.clone(),
            display_name: record.display_name.clone(),
            created_at: record.created_at.to_string(),
            rating: record.rating,
            games,
        }
    }
}

impl Accounts {
    /// Creates an account with a fresh token. A retry with the same key (from the same client)
    /// gets the stored answer.
    pub async fn create_account(
        &self,
        request: NewAccountRequest,
        idempotency: Option<IdempotencyKey>,
    ) -> Result<Answer<CreatedAccount>, ServiceError> {
        if let Some(answer) = self.stored_creation(idempotency.as_ref()).await? {
            return Ok(answer);
        }
        let username = Username::choose(&request.username)?;
        let display_name =
            PlayerName::choose(request.display_name.as_deref().unwrap_or(username.as_str()))?;
        let token = Token::generate();
        let record = AccountRecord {
            username: username.as_str().to_owned(),
            display_name: display_name.as_str().to_owned(),
            token_hash: token.hash(),
            created_at: self.now(),
            rating: Rating::initial(),
        };
        let created = CreatedAccount {
            account: Account::of(&record, GameCounts::default()),
            token: token.0,
        };
        let stored_answer = idempotency.as_ref().map(|key| CreateIdempotency {
            key: key.storage_key(),
            fingerprint: key.fingerprint().to_owned(),
            response_status: 201,
            response_body: key.mask_tokens(&to_json(&created)),
        });
        let new = NewAccount {
            username: record.username,
            display_name: record.display_name,
            token_hash: record.token_hash,
            created_at: record.created_at,
        };
        match self
            .store
            .accounts()
            .create_account(new, stored_answer)
            .await
        {
            Ok(()) => Ok(Answer::Fresh(created)),
            // A concurrent retry with the same key created it first, or the name is taken.
            Err(StoreError::Conflict) => match self.stored_creation(idempotency.as_ref()).await? {
                Some(answer) => Ok(answer),
                None => Err(ServiceError::UsernameTaken),
            },
            Err(error) => Err(error.into()),
        }
    }

    /// The answer stored for a creation with `key`, if any.
    async fn stored_creation<T>(
        &self,
        key: Option<&IdempotencyKey>,
    ) -> Result<Option<Answer<T>>, ServiceError> {
        let Some(key) = key else {
            return Ok(None);
        };
        let stored = self.store.find_create_response(&key.storage_key()).await?;
        Ok(stored
            .map(|stored| key.replay(stored))
            .transpose()?
            .map(Answer::Replayed))
    }

    /// The account of `token`: 401 without one, or with one that is no account's.
    pub async fn account_of(&self, token: Option<&str>) -> Result<AccountRecord, ServiceError> {
        const REFUSED: &str =
            "This operation needs an account token: Authorization: Bearer <token>.";
        let token = token.ok_or(ServiceError::Unauthorized(REFUSED))?;
        self.find_account(token)
            .await?
            .ok_or(ServiceError::Unauthorized(REFUSED))
    }

    /// The account whose token is `token`, if any: read from the database on every call.
    pub(crate) async fn find_account(
        &self,
        token: &str,
    ) -> Result<Option<AccountRecord>, ServiceError> {
        let hash = Token::hash_of(token);
        let found = self.store.accounts().account_by_token(&hash).await?;
        Ok(found.filter(|account| bool::from(account.token_hash.ct_eq(&hash))))
    }

    /// Who `token` belongs to in `record`'s game: a seat's or the host's token, or an account's
    /// (looked up only when it is neither); any other token is refused.
    pub(crate) async fn credential(
        &self,
        record: &GameRecord,
        token: Option<&str>,
    ) -> Result<Credential, ServiceError> {
        Ok(self.lasting_credential(record, token).await?.0)
    }

    /// As [`Accounts::credential`], with the hash of the account token it was found from, if it
    /// was one: what a long stream checks again ([`Accounts::token_is_current`]), since the
    /// account may rotate that token while the stream is open.
    pub(crate) async fn lasting_credential(
        &self,
        record: &GameRecord,
        token: Option<&str>,
    ) -> Result<(Credential, Option<[u8; 32]>), ServiceError> {
        let refusal = match authenticate(record, token) {
            Err(ServiceError::Unauthorized(refusal)) => refusal,
            known => return known.map(|credential| (credential, None)),
        };
        let account = match token {
            Some(token) => self.find_account(token).await?,
            None => None,
        };
        account
            .map(|account| {
                let credential = account_credential(record, &account.username);
                (credential, Some(account.token_hash))
            })
            .ok_or(ServiceError::Unauthorized(refusal))
    }

    /// Whether `token_hash` is still an account's token (not rotated since).
    pub(crate) async fn token_is_current(
        &self,
        token_hash: &[u8; 32],
    ) -> Result<bool, ServiceError> {
        let found = self.store.accounts().account_by_token(token_hash).await?;
        Ok(found.is_some_and(|account| bool::from(account.token_hash.ct_eq(token_hash))))
    }

    /// The account of `token`, as its holder sees it.
    pub async fn account(&self, token: Option<&str>) -> Result<Account, ServiceError> {
        let record = self.account_of(token).await?;
        let games = self.game_counts(&record.username).await?;
        Ok(Account::of(&record, games))
    }

    /// Replaces the token of `token`'s account with a fresh one.
    pub async fn rotate_account_token(
        &self,
        token: Option<&str>,
    ) -> Result<RotatedToken, ServiceError> {
        let record = self.account_of(token).await?;
        let fresh = Token::generate();
        let rotated = self
            .store
            .accounts()
            .rotate_account_token(&record.username, &record.token_hash, &fresh.hash())
            .await?;
        if !rotated {
            return Err(ServiceError::Unauthorized(
                "This token was rotated meanwhile: send the new one.",
            ));
        }
        Ok(RotatedToken { token: fresh.0 })
    }

    /// The public profile of `username`.
    pub async fn profile(&self, username: &str) -> Result<Profile, ServiceError> {
        let username = Username::lookup(username);
        let record = self
            .store
            .accounts()
            .account_by_name(username.as_str())
            .await?
            .ok_or(ServiceError::NotFound(
                "There is no account with this username.",
            ))?;
        Ok(Profile {
            rating: record.rating,
            games: self.game_counts(&record.username).await?,
            recent: self.recent_games(&record.username).await?,
            username: record.username,
            display_name: record.display_name,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usernames_are_lowercased_checked_and_bot_names_reserved() {
        assert_eq!(Username::choose("Ada_99").unwrap().as_str(), "ada_99");
        for refused in [
            "ab",
            "9lives",
            "-ada",
            "ada!",
            "a".repeat(25).as_str(),
            "bot-x",
            "Bot-Greedy",
        ] {
            assert!(Username::choose(refused).is_err(), "{refused}");
        }
        assert!(Username::choose(&"a".repeat(24)).is_ok());
    }
}
