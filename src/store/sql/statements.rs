//! [`Statements`]: the statements of the event store whose text differs between PostgreSQL and
//! SQLite, each written whole in `postgres.rs` and `sqlite.rs`.

/// The statements whose text differs between the dialects, each complete.
///
/// Parameters are numbered as [`SqlStore`](super::SqlStore) binds them; in every statement on
/// idempotency records, `$1` is [`Backend::IDEMPOTENCY_TTL`](super::Backend::IDEMPOTENCY_TTL).
/// `games.created_at` is read back in the store's fixed text form (UTC, microseconds). The lobby
/// statements spell "not private" as the partial index `games_lobby` does, so that the planner
/// uses the index.
pub struct Statements {
    /// Inserts a game row: `$1` id, `$2` created_at (the store's RFC 3339 text), `$3` status, `$4` version,
    /// `$5` seats, `$6` holes, `$7` rules, `$8` commitment, `$9` server_seed,
    /// `$10` host_token_hash, `$11` private, `$12` stacked, `$13` decks, `$14` projection,
    /// `$15` head_hash, `$16` host_account, `$17` rated: the row before its first append.
    pub insert_game: &'static str,
    /// The row of game `$1` unless cancelled, with `seat_tokens`, the JSON array
    /// `[[seat, hex token hash or null, account or null], ...]` of its seats in seat order
    /// ([`GameRow`](crate::store::rows::GameRow)). On PostgreSQL the seats' subquery names the
    /// game by `$1` too: Citus then sends the whole read to the game's shard (else to every one).
    pub load_game: &'static str,
    /// Stores a creation's response (`$2` key, `$3` fingerprint, `$4` status, `$5` body),
    /// replacing an expired record with the same key only.
    pub insert_create_response: &'static str,
    /// The unexpired response for game `$2`, scope `$3` (a seat, or the joins'), key `$4`
    /// ([`ResponseRow`](crate::store::rows::ResponseRow)).
    pub find_game_response: &'static str,
    /// The unexpired response for creation key `$2`
    /// ([`ResponseRow`](crate::store::rows::ResponseRow)).
    pub find_create_response: &'static str,
    /// Deletes up to `$2` expired responses of writes to games (moves, leaves, joins).
    pub purge_game_responses: &'static str,
    /// Deletes up to `$2` expired creation responses.
    pub purge_create_responses: &'static str,
    /// The first `$1` games of the lobby, newest first
    /// ([`LobbyRow`](crate::store::rows::LobbyRow)).
    pub list_waiting: &'static str,
    /// The next `$1` games of the lobby after created_at `$2` (RFC 3339 text) and id `$3`.
    pub list_waiting_after: &'static str,
    /// Up to `$2` ids of games whose deadline is at or before `$1` (RFC 3339 text), earliest
    /// first.
    pub overdue_games: &'static str,
    /// Moves the deadline of game `$1` to `$2` if it is still at or before `$3` (RFC 3339 text).
    pub postpone_deadline: &'static str,
    /// Up to `$2` ids of waiting games created at or before `$1` (RFC 3339 text), oldest first.
    pub expired_waiting_games: &'static str,
    /// Cancels game `$1` if it is waiting (one row affected); where the backend announces
    /// changes through the database
    /// ([`Backend::NOTIFIES_ON_COMMIT`](super::Backend::NOTIFIES_ON_COMMIT)), the same statement
    /// announces it.
    pub cancel_game: &'static str,
    /// Up to `$1` finished games without an analysis, fair between their hosts: each host's
    /// newest first, then each host's second newest, and so on (the games of no account as one
    /// host, those of before the last entry's time was kept last), so that one host's many games
    /// do not hold back the others'. Chosen among the first 1000 of the backlog in id order
    /// (`games_unanalysed`), so that a backlog of millions costs a pass no more.
    pub unanalysed_games: &'static str,
    /// Marks game `$1` analysed, in the transaction that stores its analysis.
    pub mark_analysed: &'static str,
    /// Up to `$1` finished games without an audit, in id order, spelt as `games_unaudited`.
    pub unaudited_games: &'static str,
}
