//! [`RuleError`]: why the rules refuse a command, with its stable code.

use super::cards::{Card, Position};
use super::stage::{MoveKind, Seat, Stage};

/// Why a command is refused. [`RuleError::code`] is the stable machine-readable code, `Display` a
/// sentence for people that names only cards the caller may see (the HTTP layer decides the
/// status).
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum RuleError {
    /// A command other than `Create` on a game that does not exist.
    #[error("There is no such game.")]
    NotCreated,
    /// `Create` on a game that exists.
    #[error("This game already exists.")]
    AlreadyCreated,
    /// Every seat is taken.
    #[error("Every seat of this game is taken.")]
    GameFull,
    /// A move before every seat is taken.
    #[error("The game has not started: seats are still free.")]
    GameNotStarted,
    /// A seat of a rated game taken by neither an account nor a built-in bot.
    #[error("This game is rated: take its seat with an account token.")]
    AccountRequired,
    /// A move after the last hole.
    #[error("The game is finished.")]
    GameFinished,
    /// A move by a seat the game does not have.
    #[error("This game has no seat {0}.")]
    NoSuchSeat(Seat),
    /// Another seat is to play.
    #[error("It is seat {current}'s turn, not seat {seat}'s.")]
    NotYourTurn {
        /// Who tried.
        seat: Seat,
        /// Who is to play.
        current: Seat,
    },
    /// Nobody is to play, or the stage takes no move of this type.
    #[error("You cannot {kind} now: {}.", stage_phrase(.stage))]
    WrongStage {
        /// The move tried.
        kind: MoveKind,
        /// The stage.
        stage: Option<Stage>,
    },
    /// The seat already made its initial reveal this hole.
    #[error("Seat {0} has already revealed its cards: wait for the others.")]
    AlreadyRevealed(Seat),
    /// A knock where the rules allow none: in a game without `knock`, or once final turns are
    /// under way (a knock is a move of the draw stage; elsewhere it is [`RuleError::WrongStage`]).
    #[error("You cannot knock: {0}.")]
    CannotKnock(&'static str),
    /// A move or a leave by a seat that a bot took over.
    #[error(
        "A bot plays seat {0} for the rest of the game: the seat takes no more moves, and cannot be left again."
    )]
    SeatTakenByBot(Seat),
    /// A turn timeout claimed for a seat the game is not waiting for, or before its deadline.
    #[error("Seat {0} has not run out of time.")]
    TurnNotOver(Seat),
    /// A position outside the grid.
    #[error("Position {position} is out of range: positions are 0 to {}.", cells.saturating_sub(1))]
    PositionOutOfRange {
        /// The position given.
        position: i64,
        /// The cells of the grid.
        cells: u8,
    },
    /// A reveal naming the same position twice.
    #[error("A reveal names two different positions, not position {0} twice.")]
    DuplicatePositions(Position),
    /// A reveal naming other than `initial_reveal` positions.
    #[error("A reveal names exactly {wanted} positions, not {given}.")]
    InvalidReveal {
        /// Positions given.
        given: usize,
        /// The game's `initial_reveal`.
        wanted: u8,
    },
    /// A flip of a face-up card.
    #[error("The card at position {0} is already face up.")]
    PositionAlreadyRevealed(Position),
    /// A discard of a card taken from the discard pile.
    #[error("You took the {0} from the discard pile: you must swap it into your grid.")]
    MustSwapDiscardDraw(Card),
    /// A pass under `flip_after_discard: always`.
    #[error("The rules require a flip after a discard: turn one of your face-down cards face up.")]
    FlipRequired,
    /// A name that breaks the rules for names.
    #[error("Invalid name: {0}.")]
    InvalidName(String),
    /// A client seed that breaks the rules for client seeds.
    #[error("Invalid client seed: {0}.")]
    InvalidClientSeed(String),
    /// A deck that is not a permutation of the 52 cards.
    #[error("Invalid deck: {0}.")]
    InvalidDeck(String),
    /// Seats, holes or rules out of range.
    #[error("Invalid game options: {0}.")]
    InvalidGameOptions(String),
}

fn stage_phrase(stage: &Option<Stage>) -> &'static str {
    match stage {
        None => "the game has not started",
        Some(Stage::Reveal) => {
            "nobody's turn has started, every player first reveals their initial cards"
        }
        Some(Stage::Draw) => "the turn starts with a draw",
        Some(Stage::Place) => {
            "the drawn card must be swapped, or discarded if it came from the stock"
        }
        Some(Stage::Flip) => "the turn ends with a flip of a face-down card, or a pass if allowed",
        Some(Stage::HoleOver) => "the hole is over",
    }
}

impl RuleError {
    /// The stable snake_case code of docs/API.md's problem documents.
    pub const fn code(&self) -> &'static str {
        match self {
            RuleError::NotCreated => "not_found",
            RuleError::AlreadyCreated => "game_exists",
            RuleError::GameFull => "game_full",
            RuleError::AccountRequired => "account_required",
            RuleError::GameNotStarted => "game_not_started",
            RuleError::GameFinished => "game_finished",
            RuleError::NoSuchSeat(_) => "no_such_seat",
            RuleError::NotYourTurn { .. } => "not_your_turn",
            RuleError::WrongStage { .. } => "wrong_stage",
            RuleError::AlreadyRevealed(_) => "already_revealed",
            RuleError::SeatTakenByBot(_) => "seat_taken_by_bot",
            RuleError::CannotKnock(_) => "wrong_stage",
            RuleError::TurnNotOver(_) => "turn_not_over",
            RuleError::PositionOutOfRange { .. } => "position_out_of_range",
            RuleError::DuplicatePositions(_) => "duplicate_positions",
            RuleError::InvalidReveal { .. } => "invalid_reveal",
            RuleError::PositionAlreadyRevealed(_) => "position_already_revealed",
            RuleError::MustSwapDiscardDraw(_) => "must_swap_discard_draw",
            RuleError::FlipRequired => "flip_required",
            RuleError::InvalidName(_) => "invalid_name",
            RuleError::InvalidClientSeed(_) => "invalid_client_seed",
            RuleError::InvalidDeck(_) => "invalid_deck",
            RuleError::InvalidGameOptions(_) => "invalid_game_options",
        }
    }
}
