//! The rules engine: pure, synchronous and deterministic (no I/O, no clock, no OS randomness).
//!
//! It owns the rules of six-card Golf and its house-rule variants (grids of 4 to 9 cards, jokers,
//! pair rules, knocking) and the fair-shuffle protocol of docs/RULES.md, and the shapes
//! of docs/API.md's moves, views and log events. Its modules are layered, in this order: a module
//! imports only modules of earlier layers, never one of its own layer or of a later one.
//! 1. Plain data:
//!    - [`cards`]: cards, codes like `"10H"`, grid shapes and positions, the cells of a grid;
//!    - [`time`]: the timestamps of log entries;
//!    - [`stage`]: seat numbers, the stages of a hole and the kinds of move;
//!    - [`bot_kind`]: which strategy plays a bot's seat.
//! 2. What the data gives:
//!    - [`error`]: why the rules refuse a command;
//!    - [`score`]: points of cards, columns and grids under a game's scoring options;
//!    - [`shuffle`]: the commitment, the effective seed and the audited Fisher–Yates shuffle;
//!    - [`secrets`]: the server seed and explicit decks, kept outside the log.
//! 3. What a game is created and joined with:
//!    - [`inputs`]: what a client gives, checked: a joining player's name and client seed, a
//!      position, an explicit deck;
//!    - [`rules`]: a game's size and rule options, their limits, the log format.
//! 4. Moves and commands:
//!    - [`moves`]: moves (and the requests they come from) and commands.
//! 5. The state:
//!    - [`state`]: the state of a game, hidden cards included.
//! 6. What the state allows and records:
//!    - [`event`]: the events the log records;
//!    - [`legal`]: which moves a seat may make, and a client's request checked into a move;
//!    - `turn` (private): how a turn ends, for `decide` and `apply`;
//!    - [`deadline`]: turn timeouts, when a bot may take the seats to play.
//! 7. The rules at work:
//!    - [`decide`](mod@decide): a command checked against the state, and the events it causes.
//! 8. Their results:
//!    - [`apply`](mod@apply): an event folded into the state, and `execute` (decide, then apply);
//!    - [`view`](mod@view): what each viewer may see (the only place that redacts) and the bots'
//!      observation.
//! 9. The greedy policy:
//!    - [`greedy`]: the `greedy` bot's policy on a grid's ranks, compiled for each grid shape.
//! 10. Playouts:
//!    - [`rollout`]: determinizations of a hole from one seat's observation, played out by the
//!      greedy policy.
//! 11. Search:
//!    - [`expert`](mod@expert): the `expert` strategy and the evaluator of candidate moves it
//!      shares with the analysis.
//! 12. On top:
//!    - [`bots`]: the `random`, `greedy` and `expert` strategies, and the driver that plays bot
//!      turns;
//!    - [`replay`](mod@replay): a log re-decided command by command and compared with the rules;
//!    - [`analysis`](mod@analysis): every decision of a finished game judged by the evaluator.
//!
//! The server keeps the secrets ([`Secrets`]: the server seed, explicit decks) and the clock: it
//! passes the secrets to [`decide()`] and the time of each log entry to [`apply()`].

pub mod analysis;
pub mod apply;
pub mod bot_kind;
pub mod bots;
pub mod cards;
pub mod deadline;
pub mod decide;
pub mod error;
pub mod event;
pub mod expert;
pub mod greedy;
pub mod inputs;
pub mod legal;
pub mod moves;
pub mod replay;
pub mod rollout;
pub mod rules;
pub mod score;
pub mod secrets;
pub mod shuffle;
pub mod stage;
pub mod state;
pub mod time;
mod turn;
pub mod view;

pub use analysis::{
    Analysis, AnalysisError, AnalysisStatus, Decision, Label, SeatAnalysis, analyze, analyze_paced,
};
pub use apply::{apply, execute, execute_play};
pub use bot_kind::BotKind;
pub use bots::{choose, play_bot_move, play_bot_turns};
pub use cards::{
    Card, Cells, GridShape, Position, Rank, Suit, UnknownCard, all_cards, canonical_deck, game_deck,
};
pub use deadline::{overdue_seats, turn_deadline};
pub use decide::{check_join, decide};
pub use error::RuleError;
pub use event::{Event, TakeoverReason};
pub use inputs::{ClientSeed, PlayerName, parse_deck};
pub use legal::{MoveList, legal_move_list, legal_moves, parse_move};
pub use moves::{Command, Move, MoveRequest, Source};
pub use replay::{LoggedEvent, ReplayError, replay, replay_prefix, replay_prefix_from};
pub use rules::{
    FlipRule, LOG_FORMAT, LOG_FORMAT_2, MAX_TURNS_PER_SEAT, PairRule, Rules, RulesInput,
    TURN_TIMEOUT_S, check_game_size,
};
pub use score::{Scoring, card_points, column_score, grid_score};
pub use secrets::Secrets;
pub use stage::{MoveKind, Seat, Stage};
pub use state::{Drawn, EndReason, HoleResult, Player, State, Status};
pub use time::{InvalidTimestamp, Timestamp};
pub use view::{
    DrawnView, FaceUp, GridSize, Observation, PlayerView, View, Viewer, observe, redact_event, view,
};
