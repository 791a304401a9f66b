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
}

impl BotKind {
    /// The strategy's name in JSON (`"random"`, `"greedy"`).
    pub const fn name(self) -> &'static str {
        match self {
            BotKind::Random => "random",
            BotKind::Greedy => "greedy",
        }
    }
}

impl std::str::FromStr for BotKind {
    type Err = String;

    /// Parses `"random"` or `"greedy"`.
    fn from_str(s: &str) -> Result<BotKind, String> {
        match s {
            "random" => Ok(BotKind::Random),
            "greedy" => Ok(BotKind::Greedy),
            other => Err(format!("unknown bot {other:?}: random or greedy")),
        }
    }
}
