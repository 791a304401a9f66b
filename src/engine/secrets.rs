//! [`Secrets`]: what the server keeps of a game outside the log (the server seed, explicit
//! decks), which [`decide`](fn@super::decide) reads to deal, reshuffle and end a game.

use std::fmt;

use super::cards::Card;

/// The secret inputs of a game, kept by the server outside the log.
pub struct Secrets {
    /// The 32 random bytes committed to at creation and revealed at the end.
    pub server_seed: [u8; 32],
    /// Explicit deal orders of holes 1, 2, ... for a stacked game (may cover fewer holes); each
    /// the game's 52 cards (54 with jokers).
    pub decks: Vec<Vec<Card>>,
}

impl fmt::Debug for Secrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secrets { .. }")
    }
}
