//! Playouts of the rest of a hole as one seat may imagine it, for the `expert` bot and the
//! analysis of finished games: a [`Table`] dealt from an [`Observation`] (the cards the seat
//! cannot see sampled from the ones it has not seen: determinization, see [`Deal`]), a move played
//! on it, then every seat played by the greedy policy until the hole ends.
//!
//! Everything here is on fixed arrays of ranks, so that a playout allocates nothing and costs a
//! few microseconds, with the grid's shape a constant as in [`greedy`](super::greedy); randomness
//! comes from [`Playout`]'s own generator, seeded by the caller, so that the same seed plays the
//! same playouts on every machine.

use super::cards::{Card, MAX_CELLS, Rank};
use super::greedy::{Ranks, Rulebook, Turn, by_shape, greedy_shaped, rank_of, spread_mask};
use super::moves::{Move, Source};
use super::rules::FlipRule;
use super::stage::Stage;
use super::view::{MAX_SEATS, Observation};

/// The most cards of a deck (52 and two jokers).
const DECK: usize = 54;

/// SplitMix64: a small generator whose stream depends on its seed only (not on a crate's
/// version), so that analyses and expert moves replay identically everywhere.
#[derive(Clone, Copy, Debug)]
pub struct Playout(u64);

impl Playout {
    /// The generator seeded with `seed`.
    pub const fn new(seed: u64) -> Playout {
        Playout(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` at most 2^32; the bias of a multiply-shift is negligible here).
    fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 32) * n as u64) >> 32) as usize
    }

    /// Shuffles `items` (Fisher–Yates).
    fn shuffle(&mut self, items: &mut [u8]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

/// The score of a whole grid of `R` rows and `C` columns, as
/// [`Scoring::grid`](super::score::Scoring::grid) gives it.
fn score<const R: usize, const C: usize>(book: &Rulebook, grid: &Ranks) -> i32 {
    let mut paired = [0u8; 14];
    let mut total = 0;
    for column in 0..C {
        let first = grid[column];
        let mut sum = 0;
        let mut same = true;
        for row in 0..R {
            let rank = grid[row * C + column];
            sum += book.points[usize::from(rank)];
            same &= rank == first;
        }
        let negative = first == Rank::Two as u8 || first == Rank::Joker as u8;
        if !same || (negative && book.keep_negative_pairs) {
            total += sum;
        }
        if same {
            paired[usize::from(first)] += 1;
            if paired[usize::from(first)] == 2 && R == 2 {
                total += book.four_of_a_kind;
            }
        }
    }
    total
}

/// What one seat has seen of a hole, to deal determinizations of it from: a table with the
/// visible cards where they are, and the cards the seat has not seen (every card of the deck but
/// the face-up ones, the discard pile and its own drawn card).
#[derive(Clone, Debug)]
pub struct Deal {
    table: Table,
    unseen: [u8; DECK],
    unseen_len: usize,
    stock: usize,
}

impl Deal {
    /// What `obs` shows.
    pub fn new(book: &Rulebook, obs: &Observation) -> Deal {
        let seats = usize::from(obs.seats()).min(MAX_SEATS);
        let discard_set = obs.discard_set();
        let mut seen = discard_set;
        let mut table = Table {
            seats,
            grids: [[0; MAX_CELLS]; MAX_SEATS],
            up: [0; MAX_SEATS],
            stock: [0; DECK],
            stock_len: 0,
            discard: [0; DECK],
            discard_len: 0,
            drawn: obs.drawn().map(|(source, card)| (source, rank_of(card))),
            current: usize::from(obs.current_seat().unwrap_or(obs.seat())),
            stage: obs.stage().unwrap_or(Stage::HoleOver),
            turns: obs.turns(),
            final_left: obs.final_turns_left(),
            knocked: obs.knocked().is_some(),
            dealer: usize::from(obs.dealer()),
        };
        if let Some((_, card)) = obs.drawn() {
            seen |= 1 << card.index();
        }
        for seat in 0..seats {
            let grid = obs.grid(seat);
            for p in 0..book.cells() {
                if let Some(card) = grid.get(p) {
                    table.grids[seat][p] = rank_of(card);
                    table.up[seat] |= 1 << p;
                    seen |= 1 << card.index();
                }
            }
        }
        table.fill_discard(obs, discard_set);
        let mut deal = Deal {
            table,
            unseen: [0; DECK],
            unseen_len: 0,
            stock: obs.stock_count() as usize,
        };
        for index in 0..book.deck {
            if seen & (1 << index) == 0 {
                deal.unseen[deal.unseen_len] =
                    rank_of(Card::from_index(index as u8).unwrap_or_default());
                deal.unseen_len += 1;
            }
        }
        deal
    }

    /// A hole consistent with everything the seat saw: the cards it has not seen shuffled into
    /// the face-down cells and the stock.
    pub fn sample(&self, book: &Rulebook, rng: &mut Playout) -> Table {
        let mut table = self.table.clone();
        let mut unseen = self.unseen;
        let unseen = &mut unseen[..self.unseen_len];
        rng.shuffle(unseen);
        table.fill_hidden(book, unseen, self.stock);
        table
    }
}

/// One determinization of a hole: every card placed, hidden ones sampled.
#[derive(Clone, Debug)]
pub struct Table {
    seats: usize,
    grids: [Ranks; MAX_SEATS],
    up: [u16; MAX_SEATS],
    /// The stock, top last.
    stock: [u8; DECK],
    stock_len: usize,
    /// The discard pile, top last.
    discard: [u8; DECK],
    discard_len: usize,
    drawn: Option<(Source, u8)>,
    current: usize,
    stage: Stage,
    turns: u32,
    final_left: Option<u8>,
    knocked: bool,
    /// The dealer, who starts play after the reveal (seat `dealer + 1`).
    dealer: usize,
}

impl Table {
    /// The discard pile: its top last, the rest in any order (only a reshuffle reads it).
    fn fill_discard(&mut self, obs: &Observation, discard_set: u64) {
        let top = obs.discard_top().map(|card| card.index());
        for index in 0..DECK as u8 {
            if discard_set & (1 << index) != 0 && Some(index) != top {
                self.discard[self.discard_len] =
                    rank_of(Card::from_index(index).unwrap_or_default());
                self.discard_len += 1;
            }
        }
        if let Some(card) = obs.discard_top() {
            self.discard[self.discard_len] = rank_of(card);
            self.discard_len += 1;
        }
    }

    /// The face-down cells, seat by seat, then the stock, from the shuffled `unseen` ranks.
    fn fill_hidden(&mut self, book: &Rulebook, unseen: &[u8], stock: usize) {
        let mut next = unseen.iter().copied();
        for seat in 0..self.seats {
            for p in 0..book.cells() {
                if self.up[seat] & (1 << p) == 0 {
                    self.grids[seat][p] = next.next().unwrap_or_default();
                }
            }
        }
        for rank in next.take(stock) {
            self.stock[self.stock_len] = rank;
            self.stock_len += 1;
        }
    }

    /// Plays `mv` for the seat to move (or, during the reveal, for `seat`); a move the table
    /// cannot make is ignored.
    pub fn play(&mut self, book: &Rulebook, seat: usize, mv: Move, rng: &mut Playout) {
        match mv {
            Move::Reveal { positions } => {
                for p in positions.iter() {
                    self.up[seat] |= 1 << p.index();
                }
            }
            Move::Draw { source } => self.draw(source, rng),
            Move::Knock => {
                self.knocked = true;
                self.end_turn(book, true);
            }
            Move::Swap { position } => self.swap(book, position.index()),
            Move::Discard => self.discard_drawn(book),
            Move::Flip { position } => {
                self.up[self.current] |= 1 << position.index();
                self.end_turn(book, false);
            }
            Move::Pass => self.end_turn(book, false),
        }
    }

    /// Plays the rest of the hole, every seat by the greedy policy, and returns each seat's score.
    pub fn play_out(&mut self, book: &Rulebook, rng: &mut Playout) -> [i32; MAX_SEATS] {
        by_shape!(book.shape, play_out_shaped(self, book, rng))
    }

    /// The seats still to reveal reveal as the greedy bot does; then the first turn starts.
    fn finish_reveal(&mut self, book: &Rulebook) {
        let spread = spread_mask(book);
        for seat in 0..self.seats {
            if book.initial_reveal > 0 && self.up[seat] == 0 {
                self.up[seat] = spread;
            }
        }
        self.stage = Stage::Draw;
        self.current = (self.dealer + 1) % self.seats.max(1);
    }

    fn draw(&mut self, source: Source, rng: &mut Playout) {
        let rank = match source {
            Source::Discard if self.discard_len > 0 => {
                self.discard_len -= 1;
                self.discard[self.discard_len]
            }
            Source::Discard => return,
            Source::Stock => {
                if self.stock_len == 0 {
                    self.reshuffle(rng);
                }
                if self.stock_len == 0 {
                    // Nothing left to draw anywhere: the hole cannot go on.
                    self.stage = Stage::HoleOver;
                    return;
                }
                self.stock_len -= 1;
                self.stock[self.stock_len]
            }
        };
        self.drawn = Some((source, rank));
        self.stage = Stage::Place;
    }

    /// The discard pile but its top becomes the stock, shuffled.
    fn reshuffle(&mut self, rng: &mut Playout) {
        if self.discard_len < 2 {
            return;
        }
        let below = self.discard_len - 1;
        self.stock[..below].copy_from_slice(&self.discard[..below]);
        rng.shuffle(&mut self.stock[..below]);
        self.stock_len = below;
        self.discard[0] = self.discard[below];
        self.discard_len = 1;
    }

    fn swap(&mut self, book: &Rulebook, p: usize) {
        let Some((_, rank)) = self.drawn.take() else {
            return;
        };
        let seat = self.current;
        self.discard[self.discard_len] = self.grids[seat][p];
        self.discard_len += 1;
        self.grids[seat][p] = rank;
        self.up[seat] |= 1 << p;
        self.end_turn(book, false);
    }

    fn discard_drawn(&mut self, book: &Rulebook) {
        let Some((_, rank)) = self.drawn.take() else {
            return;
        };
        self.discard[self.discard_len] = rank;
        self.discard_len += 1;
        if book.flip != FlipRule::Never && !self.complete(book, self.current) {
            self.stage = Stage::Flip;
        } else {
            self.end_turn(book, false);
        }
    }

    fn complete(&self, book: &Rulebook, seat: usize) -> bool {
        self.up[seat].count_ones() as usize == book.cells()
    }

    /// The end of the current seat's turn, as the engine's `turn_end` decides it.
    fn end_turn(&mut self, book: &Rulebook, knocking: bool) {
        let completed = self.complete(book, self.current);
        let knocked = knocking || self.knocked;
        let final_left = match self.final_left {
            Some(left) => Some(left.saturating_sub(1)),
            None if knocking || (completed && book.final_turns) => Some(self.seats as u8 - 1),
            None => None,
        };
        let over = (completed && !book.final_turns && !knocked)
            || final_left == Some(0)
            || self.turns + 1 >= book.max_turns;
        self.final_left = final_left;
        self.turns += 1;
        if over {
            self.stage = Stage::HoleOver;
        } else {
            self.current = (self.current + 1) % self.seats;
            self.stage = Stage::Draw;
        }
    }

    /// One move of the seat to move, as the greedy bot would make it.
    fn greedy_step<const R: usize, const C: usize>(&mut self, book: &Rulebook, rng: &mut Playout) {
        let seat = self.current;
        if matches!(self.stage, Stage::Reveal | Stage::HoleOver) {
            self.stage = Stage::HoleOver;
            return;
        }
        let turn = Turn {
            stage: self.stage,
            grid: &self.grids[seat],
            up: self.up[seat],
            discard_top: self.discard[..self.discard_len].last().copied(),
            drawn: self.drawn,
            may_knock: book.knock && self.final_left.is_none(),
            turns: self.turns,
            seats: self.seats,
        };
        let mv = greedy_shaped::<R, C>(book, &turn);
        self.play(book, seat, mv, rng);
    }
}

/// [`Table::play_out`] on a grid of `R` rows and `C` columns.
fn play_out_shaped<const R: usize, const C: usize>(
    table: &mut Table,
    book: &Rulebook,
    rng: &mut Playout,
) -> [i32; MAX_SEATS] {
    if table.stage == Stage::Reveal {
        table.finish_reveal(book);
    }
    while table.stage != Stage::HoleOver {
        table.greedy_step::<R, C>(book, rng);
    }
    std::array::from_fn(|seat| {
        if seat < table.seats {
            score::<R, C>(book, &table.grids[seat])
        } else {
            0
        }
    })
}
