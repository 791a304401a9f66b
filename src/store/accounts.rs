//! Accounts (v1.2): the [`AccountStore`] trait and its data types. An account is a username, a
//! display name and the SHA-256 of its token; the store decides nothing about them (the rules of
//! usernames live in `service::accounts`).

use async_trait::async_trait;

use super::{CreateIdempotency, StoreError};
use crate::engine::Timestamp;

/// An account to create.
#[derive(Debug, Clone)]
pub struct NewAccount {
    /// Lowercase, checked by the service.
    pub username: String,
    pub display_name: String,
    pub token_hash: [u8; 32],
    pub created_at: Timestamp,
}

/// An account as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountRecord {
    pub username: String,
    pub display_name: String,
    /// The hash of its current token.
    pub token_hash: [u8; 32],
    pub created_at: Timestamp,
}

/// The accounts table. Nothing is cached: every call reads or writes the database, so a rotated
/// token is refused at once by every instance.
#[async_trait]
pub trait AccountStore: Send + Sync {
    /// Inserts the account and, if given, the creation's idempotency record, in one transaction.
    ///
    /// Fails with `Conflict` if the username is taken or the key is recorded (and not expired).
    async fn create_account(
        &self,
        account: NewAccount,
        idem: Option<CreateIdempotency>,
    ) -> Result<(), StoreError>;

    /// The account whose token hashes to `token_hash`, if any.
    async fn account_by_token(
        &self,
        token_hash: &[u8; 32],
    ) -> Result<Option<AccountRecord>, StoreError>;

    /// The account named `username` (lowercase), if any.
    async fn account_by_name(&self, username: &str) -> Result<Option<AccountRecord>, StoreError>;

    /// Replaces the token hash of `username` with `new`, if it is still `old`: whether it did.
    async fn rotate_account_token(
        &self,
        username: &str,
        old: &[u8; 32],
        new: &[u8; 32],
    ) -> Result<bool, StoreError>;
}
