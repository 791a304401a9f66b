//! [`Timestamp`]: the time of a log entry. It is no rule of the game, but
//! [`apply`](fn@super::apply) stamps the start of each turn with the time of the entry that
//! starts it.

use std::fmt;

use chrono::{Datelike, Timelike};
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
        // Every entry and view writes times: the fields by hand, not through strftime's parse
        // of the format, which costs several times as much. Years of other than four digits
        // take the format's way of writing them.
        if !(0..=9999).contains(&time.year()) {
            return write!(f, "{}", time.format(TIMESTAMP_FORMAT));
        }
        write!(
            f,
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z",
            time.year(),
            time.month(),
            time.day(),
            time.hour(),
            time.minute(),
            time.second(),
            time.timestamp_subsec_micros()
        )
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn a_time_is_written_as_the_format_says_and_reads_back(micros in prop_oneof![
            // Years 0 to 9999, and beyond them (chrono's range ends near 262,000 years).
            -62_167_219_200_000_000i64..253_402_300_800_000_000,
            -8_000_000_000_000_000_000i64..8_000_000_000_000_000_000,
        ]) {
            let time = chrono::DateTime::from_timestamp_micros(micros).expect("in range");
            let written = Timestamp(micros).to_string();
            prop_assert_eq!(&written, &time.format(TIMESTAMP_FORMAT).to_string());
            if (0..=9999).contains(&time.year()) {
                prop_assert_eq!(Timestamp::parse(&written), Ok(Timestamp(micros)));
            }
        }
    }

    #[test]
    fn times_of_this_era_are_written_in_full() {
        assert_eq!(
            Timestamp(1_764_559_590_123_456).to_string(),
            "2025-12-01T03:26:30.123456Z"
        );
        assert_eq!(Timestamp(0).to_string(), "1970-01-01T00:00:00.000000Z");
        assert_eq!(Timestamp(-1).to_string(), "1969-12-31T23:59:59.999999Z");
    }
}
