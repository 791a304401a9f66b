//! The fair-shuffle protocol of docs/RULES.md: the commitment, the effective seed `S`, the SHA-256
//! word stream of shuffle `k` of hole `h`, and the unbiased Fisher–Yates shuffle that reads it.

use sha2::{Digest, Sha256};

use super::cards::{Card, game_deck};

/// `hex(SHA-256(server_seed))`, published at creation.
pub fn commitment(server_seed: &[u8; 32]) -> String {
    hex::encode(Sha256::digest(server_seed))
}

/// The effective seed `S = SHA-256(server_seed ‖ c_0 ‖ 0x00 ‖ … ‖ c_{n-1} ‖ 0x00)`, from the
/// client seeds of seats `0..n` in seat order (`""` for a seat that gave none).
pub fn effective_seed<'a>(
    server_seed: &[u8; 32],
    client_seeds: impl IntoIterator<Item = &'a str>,
) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(server_seed);
    for client_seed in client_seeds {
        hasher.update(client_seed.as_bytes());
        hasher.update([0u8]);
    }
    hasher.finalize().into()
}

/// The word stream of shuffle `k` of hole `h`: the blocks
/// `SHA-256(S ‖ "golf-shuffle" ‖ u32be(h) ‖ u32be(k) ‖ u64be(i))` for `i = 0, 1, …`,
/// read as successive big-endian `u64` words.
pub struct WordStream {
    prefix: Sha256,
    block_index: u64,
    block: [u8; 32],
    offset: usize,
}

impl WordStream {
    /// The stream of shuffle `shuffle` (0 = the deal) of hole `hole` (from 1) under seed `seed`.
    pub fn new(seed: &[u8; 32], hole: u32, shuffle: u32) -> WordStream {
        let mut prefix = Sha256::new();
        prefix.update(seed);
        prefix.update(b"golf-shuffle");
        prefix.update(hole.to_be_bytes());
        prefix.update(shuffle.to_be_bytes());
        WordStream {
            prefix,
            block_index: 0,
            block: [0; 32],
            offset: 32,
        }
    }

    /// The next big-endian `u64` word.
    pub fn next_word(&mut self) -> u64 {
        if self.offset == 32 {
            let mut hasher = self.prefix.clone();
            hasher.update(self.block_index.to_be_bytes());
            self.block = hasher.finalize().into();
            self.block_index += 1;
            self.offset = 0;
        }
        let mut word = [0u8; 8];
        word.copy_from_slice(&self.block[self.offset..self.offset + 8]);
        self.offset += 8;
        u64::from_be_bytes(word)
    }

    /// A uniform integer in `0..bound` (`bound >= 1`), by rejection: words are taken until
    /// `w < 2^64 − (2^64 mod bound)`, then `w mod bound` is returned.
    pub fn below(&mut self, bound: u64) -> u64 {
        // 2^64 mod bound, computed without 128-bit arithmetic.
        let excess = (u64::MAX % bound + 1) % bound;
        loop {
            let word = self.next_word();
            if excess == 0 || word < excess.wrapping_neg() {
                return word % bound;
            }
        }
    }
}

/// Shuffles `cards` in place: Fisher–Yates from the last element down, reading `stream`.
pub fn fisher_yates(cards: &mut [Card], stream: &mut WordStream) {
    for i in (1..cards.len()).rev() {
        let j = stream.below(i as u64 + 1) as usize;
        cards.swap(i, j);
    }
}

/// The dealt order of hole `hole`: the canonical deck of a game with `jokers` jokers (0: the 52
/// cards; 2: then `JR`, `JB`) shuffled by shuffle 0 of that hole.
pub fn deal_order(seed: &[u8; 32], hole: u32, jokers: u8) -> Vec<Card> {
    let mut deck = game_deck(jokers);
    fisher_yates(&mut deck, &mut WordStream::new(seed, hole, 0));
    deck
}

/// Reshuffle `shuffle` (from 1) of hole `hole`: `cards` is the discard pile minus its top,
/// listed bottom-up; the result lists the new stock top first.
pub fn reshuffle(seed: &[u8; 32], hole: u32, shuffle: u32, cards: &[Card]) -> Vec<Card> {
    let mut order = cards.to_vec();
    fisher_yates(&mut order, &mut WordStream::new(seed, hole, shuffle));
    order
}
