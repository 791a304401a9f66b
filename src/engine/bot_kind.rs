//! [`BotKind`]: which strategy plays a bot's seat, as the state, the log and the views name it
//! (the strategies themselves live in [`bots`](super::bots)).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A bot's strategy.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BotKind {
    /// Uniform over the legal moves.
    Random,
    /// One-ply greedy on the expected score of its own grid.
    Greedy,
    /// Plays each candidate move out on sampled deals of the cards it cannot see, and picks the
    /// one of least mean hole score.
    Expert,
}

impl BotKind {
    /// The strategy's name in JSON (`"random"`, `"greedy"`, `"expert"`).
    pub const fn name(self) -> &'static str {
        match self {
            BotKind::Random => "random",
            BotKind::Greedy => "greedy",
            BotKind::Expert => "expert",
        }
    }
}

impl std::str::FromStr for BotKind {
    type Err = String;

    /// Parses `"random"`, `"greedy"` or `"expert"`.
    fn from_str(s: &str) -> Result<BotKind, String> {
        match s {
            "random" => Ok(BotKind::Random),
            "greedy" => Ok(BotKind::Greedy),
            "expert" => Ok(BotKind::Expert),
            other => Err(format!("unknown bot {other:?}: random, greedy or expert")),
        }
    }
}
