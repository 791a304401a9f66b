//! The catalog of problem codes: the one table from each `code` to its HTTP status, its meaning
//! and what a client should do about it.
//!
//! Errors take their status from it ([`crate::api::problem::ApiError::new`]); the OpenAPI
//! document (`Problem.code`, the problem responses) and the page `GET /problems` are made from it.

use std::fmt::Write;

use Remedy::{Authenticate, FixRequest, Reload, Report, RetryLater};

/// What a client should do about a problem.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Remedy {
    /// The request is wrong as sent: sending it again gets the same answer.
    FixRequest,
    /// The game moved on or the request came at the wrong time: reload the view, then decide.
    Reload,
    /// Nothing was applied; the same request may succeed shortly.
    RetryLater,
    /// Authenticate: send the token of a seat (or the host) of this game.
    Authenticate,
    /// A fault of the server: report it with the `X-Request-Id`.
    Report,
}

impl Remedy {
    /// The remedy in a few words.
    pub const fn advice(self) -> &'static str {
        match self {
            Remedy::FixRequest => "Fix the request: sent again as it is, it fails again.",
            Remedy::Reload => "Reload the view (or the log), then choose again.",
            Remedy::RetryLater => "Nothing was applied: send the same request again shortly.",
            Remedy::Authenticate => {
                "Send `Authorization: Bearer <token>` with a seat or host token of this game."
            }
            Remedy::Report => "Retry later; if it persists, report it with the X-Request-Id.",
        }
    }
}

/// One problem code.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ProblemCode {
    /// The `code` of the problem (and the end of its `type`).
    pub code: &'static str,
    /// The HTTP status it comes with.
    pub status: u16,
    /// What it means.
    pub meaning: &'static str,
    /// What a client should do.
    pub remedy: Remedy,
}

const fn code(
    code: &'static str,
    status: u16,
    meaning: &'static str,
    remedy: Remedy,
) -> ProblemCode {
    ProblemCode {
        code,
        status,
        meaning,
        remedy,
    }
}

/// Every code the service answers, by status.
pub const CODES: &[ProblemCode] = &[
    code(
        "malformed_request",
        400,
        "The body, a parameter or a header does not parse into the request's shape: JSON syntax, missing or unknown fields, wrong types, unknown `type` or `source` values.",
        FixRequest,
    ),
    code(
        "unauthorized",
        401,
        "No token where the operation needs one, or a token that is not a seat (or host) token of this game. A bad token is never taken as no token.",
        Authenticate,
    ),
    code(
        "not_found",
        404,
        "No such game (or log entry), or nothing at this path.",
        FixRequest,
    ),
    code(
        "method_not_allowed",
        405,
        "The path exists but does not answer this method: the `Allow` header lists those it answers.",
        FixRequest,
    ),
    code("not_your_turn", 409, "Another seat is to play.", Reload),
    code(
        "wrong_stage",
        409,
        "No seat is to play, or the stage of the turn takes no move of this type (a draw after a draw, ...): `legal_moves` lists what is possible.",
        Reload,
    ),
    code(
        "already_revealed",
        409,
        "The seat has made its initial reveal: the others still reveal theirs.",
        Reload,
    ),
    code(
        "seat_taken_by_bot",
        409,
        "A bot plays this seat for the rest of the game: it took the seat after a turn timeout \
         or the player's leave. The token still reads the seat's view.",
        FixRequest,
    ),
    code(
        "turn_not_over",
        409,
        "The seat's turn timeout has not passed (or the game does not wait for it): it may \
         still play.",
        Reload,
    ),
    code("game_full", 409, "Every seat of the game is taken.", Reload),
    code(
        "game_not_started",
        409,
        "Seats are still free: moves wait for the game to start.",
        Reload,
    ),
    code(
        "game_finished",
        409,
        "The game is finished: it takes no more moves.",
        Reload,
    ),
    code(
        "game_exists",
        409,
        "A game with this id exists already.",
        FixRequest,
    ),
    code(
        "already_seated",
        409,
        "The account whose token came with the join already holds a seat of this game (an \
         account holds one seat per game): its token acts as that seat's.",
        FixRequest,
    ),
    code(
        "username_taken",
        409,
        "Another account has this username (usernames are compared in lowercase).",
        FixRequest,
    ),
    code(
        "game_not_waiting",
        409,
        "The game has started: only a waiting game can be cancelled.",
        Reload,
    ),
    code(
        "not_finished",
        409,
        "The game is not finished: its complete log is exported, its analysis computed and a \
         rematch offered only at the end.",
        Reload,
    ),
    code(
        "too_many_challenges",
        409,
        "The author holds as many open challenges as it may: 20 in all, 3 to any one account.",
        Reload,
    ),
    code(
        "challenge_closed",
        409,
        "The challenge is no longer open (accepted, declined, cancelled or expired), or the \
         account already gave another answer.",
        Reload,
    ),
    code(
        "already_seeking",
        409,
        "The account already waits in a seek: cancel it (DELETE /v1/seeks/{id}) or wait for its \
         match.",
        Reload,
    ),
    code(
        "seek_closed",
        409,
        "The seek no longer waits: it was matched (see its game_id) or expired.",
        Reload,
    ),
    code(
        "write_conflict",
        409,
        "Concurrent writes to the game won every retry of this one; nothing was applied.",
        Reload,
    ),
    code(
        "database_busy",
        409,
        "Another request held the game's data too long; nothing was applied.",
        RetryLater,
    ),
    code(
        "stale_version",
        412,
        "`If-Match` names a version the game has moved past.",
        Reload,
    ),
    code(
        "request_timeout",
        408,
        "The body did not arrive within the client timeout (`GOLF_CLIENT_TIMEOUT_MS`).",
        FixRequest,
    ),
    code(
        "payload_too_large",
        413,
        "The body is over 64 KiB.",
        FixRequest,
    ),
    code(
        "position_out_of_range",
        422,
        "A position is not 0 to 5.",
        FixRequest,
    ),
    code(
        "duplicate_positions",
        422,
        "A reveal names the same position twice.",
        FixRequest,
    ),
    code(
        "invalid_reveal",
        422,
        "A reveal names other than two positions.",
        FixRequest,
    ),
    code(
        "position_already_revealed",
        422,
        "The card at the position is face up already.",
        FixRequest,
    ),
    code(
        "must_swap_discard_draw",
        422,
        "A card drawn from the discard pile must be swapped into the grid, not discarded.",
        FixRequest,
    ),
    code(
        "flip_required",
        422,
        "The rules require a flip after a discard: a pass is not allowed.",
        FixRequest,
    ),
    code(
        "no_such_seat",
        422,
        "The game has no seat of this number.",
        FixRequest,
    ),
    code(
        "invalid_username",
        422,
        "A username is not 3 to 24 of a-z, 0-9, _ and -, starting with a letter, or starts with \
         `bot-` (reserved for the built-in bots).",
        FixRequest,
    ),
    code(
        "invalid_webhook_url",
        422,
        "A webhook URL is not https on an allowed port (443 unless `GOLF_WEBHOOK_PORTS` lists \
         more), does not resolve, or resolves to an address deliveries may not reach (any block \
         IANA does not call globally reachable); one refusal says all of this, never which.",
        FixRequest,
    ),
    code(
        "invalid_name",
        422,
        "A player name is empty, longer than 40 characters or has control characters.",
        FixRequest,
    ),
    code(
        "invalid_client_seed",
        422,
        "A client seed breaks its limits (see `client_seed`).",
        FixRequest,
    ),
    code(
        "invalid_deck",
        422,
        "An explicit deck is not the 52 distinct cards.",
        FixRequest,
    ),
    code(
        "invalid_game_options",
        422,
        "Seats, holes or rule options are out of their ranges, or they do not go together (a \
         rated game with explicit decks).",
        FixRequest,
    ),
    code(
        "invalid_challenge",
        422,
        "A challenge's `to` is not 1 to 3 distinct usernames other than its author's, or names a \
         built-in bot.",
        FixRequest,
    ),
    code(
        "invalid_seek",
        422,
        "A seek's rating_range is not [lo, hi] with lo at most hi, or its bots_after_s is not null \
         or 5 to 600.",
        FixRequest,
    ),
    code(
        "unknown_account",
        422,
        "A username in the request names no account.",
        FixRequest,
    ),
    code(
        "account_required",
        422,
        "The game is rated: its seats are taken with an account token (or by the host's \
         built-in bots).",
        FixRequest,
    ),
    code(
        "idempotency_key_reused",
        422,
        "The `Idempotency-Key` was used with another request.",
        FixRequest,
    ),
    code(
        "out_of_range",
        422,
        "A parameter (`after`, `limit`, a seq, ...) is out of its range.",
        FixRequest,
    ),
    code(
        "rate_limited",
        429,
        "This client (its address, or its IPv6 /64) spent its budget for the minute: of creations (games, joins, accounts, challenges, seeks, webhooks: `GOLF_RATE_LIMIT_PER_MIN`), of expert bots seated (`GOLF_MAX_EXPERT_SEATS_PER_MIN`), or of exports, audits, replays and log pages (`GOLF_READ_RATE_LIMIT_PER_MIN`); `Retry-After` says when a request is allowed again.",
        RetryLater,
    ),
    code(
        "too_many_streams",
        429,
        "This client holds as many open streams as it may (`GOLF_MAX_STREAMS_PER_CLIENT`), or the instance serves as many streaming clients as it may; close one, or retry after `Retry-After`.",
        RetryLater,
    ),
    code(
        "internal_error",
        500,
        "A fault of the server; its reason is in the server's log, not in the answer.",
        Report,
    ),
    code(
        "analysis_disabled",
        503,
        "This server computes no analyses (GOLF_ANALYSIS_THREADS=0); another instance may.",
        RetryLater,
    ),
    code(
        "unavailable",
        503,
        "The database cannot be reached.",
        RetryLater,
    ),
];

/// The entry of `code`. A code outside the catalog is a bug (a test checks those of the
/// sources): it is logged and answered as `internal_error`, never with a guessed status.
pub fn entry(code: &str) -> &'static ProblemCode {
    let find = |code: &str| CODES.iter().find(|entry| entry.code == code);
    find(code).unwrap_or_else(|| {
        tracing::error!(
            code,
            "a problem code outside the catalog: answered as internal_error"
        );
        find("internal_error").expect("internal_error is in the catalog")
    })
}

/// The catalog as a Markdown table, for the description of `Problem.code`.
pub fn markdown() -> String {
    let mut table = String::from(
        "A stable, machine-readable identifier of the problem (its `type` is \
         `urn:golf-server:problem:` followed by it). New codes may be added: treat an unknown one \
         by its status.\n\n| code | status | meaning | what to do |\n|---|---|---|---|\n",
    );
    for entry in CODES {
        let _ = writeln!(
            table,
            "| `{}` | {} | {} | {} |",
            entry.code,
            entry.status,
            entry.meaning,
            entry.remedy.advice()
        );
    }
    table
}

/// Escapes text for HTML, and renders `` `code` `` spans.
fn html(text: &str) -> String {
    let escaped = text
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let mut out = String::new();
    for (n, part) in escaped.split('`').enumerate() {
        if n % 2 == 1 {
            let _ = write!(out, "<code>{part}</code>");
        } else {
            out.push_str(part);
        }
    }
    out
}

/// The page `GET /problems`: the catalog as a self-contained HTML page.
pub fn page() -> String {
    let mut rows = String::new();
    for entry in CODES {
        let _ = writeln!(
            rows,
            "<tr id=\"{0}\"><td><code>{0}</code></td><td>{1}</td><td>{2}</td><td>{3}</td></tr>",
            entry.code,
            entry.status,
            html(entry.meaning),
            html(entry.remedy.advice())
        );
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>golf-server: problem codes</title>\
         <style>body{{font-family:sans-serif;margin:2em;max-width:70em}}\
         table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.3em .6em;\
         text-align:left;vertical-align:top}}</style></head><body>\n\
         <h1>Problem codes</h1>\n<p>Every error is <code>application/problem+json</code> \
         (RFC 9457) with a stable <code>code</code>; its <code>type</code> is \
         <code>urn:golf-server:problem:</code> followed by the code. New codes may be added: \
         treat an unknown one by its status. The API is described at <a href=\"/docs/\">/docs</a>.\
         </p>\n<table><thead><tr><th>code</th><th>status</th><th>meaning</th><th>what to do</th>\
         </tr></thead><tbody>\n{rows}</tbody></table>\n</body></html>\n"
    )
}
