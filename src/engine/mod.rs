//! The rules engine: pure, synchronous and deterministic (no I/O, no clock, no OS randomness).
//!
//! It owns the rules of six-card Golf and the fair-shuffle protocol of RULES.md, and the shapes
//! of API.md's moves, views and log events:
//! - [`cards`]: cards, codes like `"10H"`, grid positions;
//! - [`shuffle`]: the commitment, the effective seed and the audited Fisher–Yates shuffle;
//! - [`score`]: points of cards, columns and grids;
//! - [`game`]: the state, commands, events, moves, options, errors, and `decide` / `apply`;
//! - [`view`](mod@view): what each viewer may see (the only place that redacts) and the bots' observation;
//! - [`bots`]: the `random` and `greedy` strategies.
//!
//! The server keeps the secrets ([`Secrets`]: the server seed, explicit decks) and the clock: it
//! passes the secrets to [`decide`] and the time of each log entry to [`apply`].

pub mod bots;
pub mod cards;
pub mod game;
pub mod score;
pub mod shuffle;
pub mod view;

pub use bots::{BotKind, choose};
pub use cards::{Card, Position, Rank, Suit, UnknownCard, canonical_deck, parse_deck};
pub use game::{
    ClientSeed, Command, Drawn, EndReason, Event, FlipRule, HoleResult, InvalidTimestamp,
    LOG_FORMAT, MAX_TURNS_PER_SEAT, Move, MoveKind, MoveList, MoveRequest, Player, PlayerName,
    RuleError, Rules, RulesInput, Seat, Secrets, Source, Stage, State, Status, Timestamp, apply,
    check_game_size, check_join, decide, legal_move_list, legal_moves, parse_move,
};
pub use score::{card_points, column_score, grid_score};
pub use view::{DrawnView, Observation, PlayerView, View, Viewer, observe, redact_event, view};
