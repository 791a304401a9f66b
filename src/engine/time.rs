//! [`Timestamp`]: the time of a log entry. It is no rule of the game, but
//! [`apply`](fn@super::apply) stamps the start of each turn with the time of the entry that
//! starts it.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use utoipa::ToSchema;

/// A point in time: Unix time in microseconds. Displayed and serialized as RFC 3339 UTC with
/// exactly six fractional digits and `Z` (`2026-12-01T03:26:30.123456Z`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default, ToSchema)]
#[schema(value_type = String, format = DateTime)]
pub struct Timestamp(pub i64);

/// A string that is not a timestamp in the format of [`Timestamp`].
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
#[error("not a timestamp like 2026-12-01T03:26:30.123456Z: {0:?}")]
pub struct InvalidTimestamp(pub String);

const TIMESTAMP_FORMAT: &str = "%Y-%m-%dT%H:%M:%S%.6fZ";

impl Timestamp {
    /// Parses the exact format of [`Timestamp`]'s `Display`.
    pub fn parse(text: &str) -> Result<Timestamp, InvalidTimestamp> {
        let invalid = || InvalidTimestamp(text.to_owned());
        // Exactly six fractional digits: the dot sits 7 bytes before the final `Z`.
        let dot = text.len().checked_sub(8).ok_or_else(invalid)?;
        if text.as_bytes().get(dot) != Some(&b'.') {
            return Err(invalid());
        }
        chrono::NaiveDateTime::parse_from_str(text, TIMESTAMP_FORMAT)
            .map(|t| Timestamp(t.and_utc().timestamp_micros()))
            .map_err(|_| invalid())
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let time = chrono::DateTime::from_timestamp_micros(self.0).unwrap_or(if self.0 < 0 {
            chrono::DateTime::<chrono::Utc>::MIN_UTC
        } else {
            chrono::DateTime::<chrono::Utc>::MAX_UTC
        });
        write!(f, "{}", time.format(TIMESTAMP_FORMAT))
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Timestamp, D::Error> {
        let text = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Timestamp::parse(&text).map_err(serde::de::Error::custom)
    }
}
