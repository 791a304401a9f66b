//! Paging: page sizes within their bounds, and the one codec of the opaque cursors of every
//! list (the lobby's, an account's games', the leaderboard's).

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

/// A cursor: the fields of the place where a page ended, joined by `|` and hex-encoded, so that
/// a client passes it back as it got it. The last field may hold `|` itself.
pub fn cursor(fields: &[&str]) -> String {
    hex::encode(fields.join("|"))
}

/// The `N` fields of a cursor this server gave; any other text is `malformed_request`.
pub fn cursor_fields<const N: usize>(text: &str) -> Result<[String; N], ServiceError> {
    let bytes = hex::decode(text).map_err(|_| malformed_cursor())?;
    let text = String::from_utf8(bytes).map_err(|_| malformed_cursor())?;
    let fields: Vec<String> = text.splitn(N, '|').map(str::to_owned).collect();
    fields.try_into().map_err(|_| malformed_cursor())
}

/// A time in a cursor: only one this server could have written (its exact format, from 1970 to
/// 9999), so that the store is never handed a date it cannot compare.
pub fn cursor_time(text: &str) -> Result<Timestamp, ServiceError> {
    const YEAR_10000: i64 = 253_402_300_800_000_000;
    let time = Timestamp::parse(text).map_err(|_| malformed_cursor())?;
    if !(0..YEAR_10000).contains(&time.0) || time.to_string() != text {
        return Err(malformed_cursor());
    }
    Ok(time)
}

/// What a cursor this server did not give is.
pub fn malformed_cursor() -> ServiceError {
    ServiceError::Malformed("cursor is not one this server gave.".to_owned())
}

/// The cursor a client passes back for the lobby page after `cursor`'s game.
pub fn encode_cursor(cursor: &LobbyCursor) -> String {
    self::cursor(&[&cursor.created_at.to_string(), &cursor.id.to_string()])
}

/// A lobby cursor this server gave; any other text is `malformed_request`.
pub fn decode_cursor(text: &str) -> Result<LobbyCursor, ServiceError> {
    let [created_at, id] = cursor_fields(text)?;
    Ok(LobbyCursor {
        created_at: cursor_time(&created_at)?,
        id: id.parse().map_err(|_| malformed_cursor())?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_gives_back_its_fields_and_refuses_any_other_text() {
        let text = cursor(&["2026-05-01T12:00:00.000000Z", "a|b"]);
        let fields: [String; 2] = cursor_fields(&text).unwrap();
        assert_eq!(fields, ["2026-05-01T12:00:00.000000Z", "a|b"]);
        assert!(
            cursor_fields::<3>(&cursor(&["a", "b"])).is_err(),
            "a field short"
        );
        assert!(cursor_fields::<2>("zz").is_err(), "not hex");
        assert!(
            cursor_time("2026-05-01T12:00:00Z").is_err(),
            "not the server's format"
        );
        assert!(cursor_time(&fields[0]).is_ok());
        let lobby = LobbyCursor {
            created_at: Timestamp(1_000_000),
            id: uuid::Uuid::nil(),
        };
        assert_eq!(decode_cursor(&encode_cursor(&lobby)).unwrap(), lobby);
    }
}
