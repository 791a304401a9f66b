//! Why a use case failed: [`ServiceError`], which `api::problem` maps to one HTTP problem each.

use crate::engine::RuleError;
use crate::store::StoreError;

/// Why a use case failed; [`crate::api::problem`] maps each to one HTTP problem.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// No such game (or entry).
    #[error("{0}")]
    NotFound(&'static str),
    /// A missing or wrong token.
    #[error("{0}")]
    Unauthorized(&'static str),
    /// A username that breaks the rules, or is reserved.
    #[error("{0}")]
    InvalidUsername(&'static str),
    /// Another account has this username.
    #[error("This username is taken: choose another.")]
    UsernameTaken,
    /// A webhook URL that is not https, or resolves to an address deliveries may not reach.
    #[error("{0}")]
    InvalidWebhookUrl(String),
    /// The account already holds a seat of this game.
    #[error("This account already holds a seat of this game: its token acts as that seat's.")]
    AlreadySeated,
    /// The request does not parse into its shape.
    #[error("{0}")]
    Malformed(String),
    /// `If-Match` names another version.
    #[error("The game is at version {current}, not {expected}: reload it and try again.")]
    StaleVersion {
        /// What the client expected, as it sent it.
        expected: String,
        /// What the game is at.
        current: i64,
    },
    /// An `Idempotency-Key` already used with another body.
    #[error("This Idempotency-Key was already used with a different request body.")]
    IdempotencyKeyReused,
    /// The game is not finished: its complete log is not public yet (export).
    #[error("The game is not finished: its complete log is exported once it is.")]
    NotFinished,
    /// An answer to, or cancellation of, a challenge that is no longer open, or a second answer
    /// that changes the first.
    #[error("{0}")]
    ChallengeClosed(&'static str),
    /// A challenge's list of accounts breaks its rules (1 to 3 distinct others, no bot).
    #[error("{0}")]
    InvalidChallenge(String),
    /// The author holds as many open challenges as it may, in all or to one of the accounts.
    #[error("{0}")]
    TooManyChallenges(&'static str),
    /// The account already waits in a seek.
    #[error("This account already waits in a seek: cancel it, or wait for its match.")]
    AlreadySeeking,
    /// A cancellation of a seek that no longer waits (matched or expired).
    #[error("This seek no longer waits: it was matched or expired.")]
    SeekClosed,
    /// A seek's rating range or wait before bots out of its bounds.
    #[error("{0}")]
    InvalidSeek(&'static str),
    /// A username that names no account, in a request's body.
    #[error("There is no account named {0}.")]
    UnknownAccount(String),
    /// The game is not finished: it has no analysis yet.
    #[error("The game is not finished: it is analysed once it is.")]
    NotAnalysable,
    /// The operator turned analyses off (`GOLF_ANALYSIS_THREADS=0`).
    #[error("Analyses are turned off on this server.")]
    AnalysisDisabled,
    /// A value out of its range outside the rules (paging limits).
    #[error("{0}")]
    OutOfRange(String),
    /// A fault of the server (a bot's move refused by the rules): logged, answered with 500.
    #[error("internal error: {0}")]
    Internal(String),
    /// A rule of the game or of the contract.
    #[error(transparent)]
    Rule(#[from] RuleError),
    /// The database.
    #[error(transparent)]
    Store(#[from] StoreError),
}
