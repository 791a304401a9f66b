//! Paging: page sizes within their bounds, and the lobby's opaque cursor.

use crate::engine::Timestamp;
use crate::service::ServiceError;
use crate::store::LobbyCursor;

/// `limit`, or `default` when absent; out of `1..=max` it is `out_of_range`.
pub fn check_limit(limit: Option<i64>, default: i64, max: i64) -> Result<i64, ServiceError> {
    match limit {
        None => Ok(default),
        Some(limit) if (1..=max).contains(&limit) => Ok(limit),
        Some(limit) => Err(ServiceError::OutOfRange(format!(
            "limit must be 1 to {max}, not {limit}."
        ))),
    }
}

/// The cursor a client passes back for the lobby page after `cursor`'s game.
pub fn encode_cursor(cursor: &LobbyCursor) -> String {
    hex::encode(format!("{}|{}", cursor.created_at, cursor.id))
}

/// A cursor this server gave; any other text is `malformed_request`.
pub fn decode_cursor(text: &str) -> Result<LobbyCursor, ServiceError> {
    let malformed = || ServiceError::Malformed("cursor is not one this server gave.".to_owned());
    let bytes = hex::decode(text).map_err(|_| malformed())?;
    let text = String::from_utf8(bytes).map_err(|_| malformed())?;
    let (created_at, id) = text.split_once('|').ok_or_else(malformed)?;
    // Only a time this server could have written (its exact format, from 1970 to 9999), so
    // that the store is never handed a date it cannot compare.
    const YEAR_10000: i64 = 253_402_300_800_000_000;
    let time = Timestamp::parse(created_at).map_err(|_| malformed())?;
    if !(0..YEAR_10000).contains(&time.0) || time.to_string() != created_at {
        return Err(malformed());
    }
    Ok(LobbyCursor {
        created_at: time,
        id: id.parse().map_err(|_| malformed())?,
    })
}
