//! The validated inputs of a player who joins: [`PlayerName`] and [`ClientSeed`].

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::error::RuleError;

/// A player's name: 1 to 40 Unicode scalar values after trimming white space at both ends, with
/// no control character (category Cc) anywhere.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize, ToSchema)]
#[serde(try_from = "String", into = "String")]
#[schema(value_type = String)]
pub struct PlayerName(String);

impl PlayerName {
    /// Trims and checks a name; fails with [`RuleError::InvalidName`].
    pub fn parse(raw: &str) -> Result<PlayerName, RuleError> {
        if raw.chars().any(char::is_control) {
            return Err(RuleError::InvalidName(
                "a name may not contain control characters".into(),
            ));
        }
        let name = raw.trim();
        match name.chars().count() {
            0 => Err(RuleError::InvalidName("a name may not be empty".into())),
            1..=40 => Ok(PlayerName(name.to_owned())),
            n => Err(RuleError::InvalidName(format!(
                "a name has at most 40 characters, this one has {n}"
            ))),
        }
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for PlayerName {
    type Error = RuleError;
    fn try_from(raw: String) -> Result<PlayerName, RuleError> {
        PlayerName::parse(&raw)
    }
}

impl From<PlayerName> for String {
    fn from(name: PlayerName) -> String {
        name.0
    }
}

/// A player's client seed: at most 64 Unicode scalar values, no control characters; `""` when
/// none is given (and for bots).
#[derive(Clone, PartialEq, Eq, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(try_from = "String", into = "String")]
#[schema(value_type = String)]
pub struct ClientSeed(String);

impl ClientSeed {
    /// Checks a client seed (kept as given, not trimmed); fails with
    /// [`RuleError::InvalidClientSeed`].
    pub fn parse(raw: &str) -> Result<ClientSeed, RuleError> {
        if raw.chars().any(char::is_control) {
            return Err(RuleError::InvalidClientSeed(
                "a client seed may not contain control characters".into(),
            ));
        }
        let n = raw.chars().count();
        if n > 64 {
            return Err(RuleError::InvalidClientSeed(format!(
                "a client seed has at most 64 characters, this one has {n}"
            )));
        }
        Ok(ClientSeed(raw.to_owned()))
    }

    /// The seed as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for ClientSeed {
    type Error = RuleError;
    fn try_from(raw: String) -> Result<ClientSeed, RuleError> {
        ClientSeed::parse(&raw)
    }
}

impl From<ClientSeed> for String {
    fn from(seed: ClientSeed) -> String {
        seed.0
    }
}
