//! Playouts of the rest of a hole as one seat may imagine it, for the `expert` bot and the
//! analysis of finished games: a [`Table`] dealt from an [`Observation`] (the cards the seat
//! cannot see sampled from the ones it has not seen: determinization), a move played on it, then
//! every seat played by a fast copy of the greedy bot's policy until the hole ends.
//!
//! Everything here is on fixed arrays of ranks (suits never score), so that a playout allocates
//! nothing and costs a few microseconds; randomness comes from [`Playout`]'s own generator, seeded
//! by the caller, so that the same seed plays the same playouts on every machine.

use super::cards::{Card, MAX_CELLS, Rank};
use super::moves::{Move, Source};
use super::rules::{FlipRule, Rules};
use super::stage::Stage;
use super::view::{MAX_SEATS, Observation};

/// The most cards of a deck (52 and two jokers).
const DECK: usize = 54;

/// A grid's ranks, row-major (`Rank as u8`, the joker 13).
type Ranks = [u8; MAX_CELLS];

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

/// What the rules of a game say to a playout: scoring and turn options, precomputed.
#[derive(Clone, Copy, Debug)]
pub struct Rulebook {
    rows: usize,
    columns: usize,
    /// Points by rank (`Rank as u8`), the joker's last.
    points: [i32; 14],
    keep_negative_pairs: bool,
    four_of_a_kind: i32,
    final_turns: bool,
    flip: FlipRule,
    knock: bool,
    max_turns: u32,
    /// Whether the greedy policy moves overdue holes on (games with house rules, as the bot).
    overdue: bool,
    deck: usize,
    initial_reveal: usize,
}

/// Expected points of a face-down card, in tenths, as the greedy bot counts them.
const UNKNOWN: i32 = 55;
/// The greedy bot's thresholds, in tenths (see `bots.rs`).
const TAKE_DISCARD_GAIN: i32 = 25;
const HIGH_GRID_PER_CELL: i32 = 25;
const KNOCK_PER_CELL: i32 = 10;

impl Rulebook {
    /// The playout rules of a game under `rules`.
    pub fn new(rules: &Rules) -> Rulebook {
        let scoring = rules.scoring();
        let mut points = [0; 14];
        for (i, rank) in Rank::ALL.iter().enumerate() {
            points[i] = scoring.card_points(Card::new(*rank, super::cards::Suit::Spades));
        }
        points[Rank::Joker as usize] = rules.joker_value;
        Rulebook {
            rows: rules.grid.rows(),
            columns: rules.grid.columns(),
            points,
            keep_negative_pairs: scoring.keep_negative_pairs,
            four_of_a_kind: scoring.four_of_a_kind,
            final_turns: rules.final_turns,
            flip: rules.flip_after_discard,
            knock: rules.knock,
            max_turns: rules.max_turns_per_hole,
            overdue: rules.has_variants(),
            deck: rules.deck_size(),
            initial_reveal: usize::from(rules.initial_reveal),
        }
    }

    fn cells(&self) -> usize {
        self.rows * self.columns
    }

    /// The score of a whole grid, as [`Scoring::grid`](super::score::Scoring::grid) gives it.
    fn score(&self, grid: &Ranks) -> i32 {
        let mut paired = [0u8; 14];
        let mut total = 0;
        for column in 0..self.columns {
            let first = grid[column];
            let mut sum = 0;
            let mut same = true;
            for row in 0..self.rows {
                let rank = grid[row * self.columns + column];
                sum += self.points[usize::from(rank)];
                same &= rank == first;
            }
            let negative = first == Rank::Two as u8 || first == Rank::Joker as u8;
            if !same || (negative && self.keep_negative_pairs) {
                total += sum;
            }
            if same {
                paired[usize::from(first)] += 1;
                if paired[usize::from(first)] == 2 && self.rows == 2 {
                    total += self.four_of_a_kind;
                }
            }
        }
        total
    }
}

/// A grid as its owner's policy sees it: ranks, which are face up, and the expected score of each
/// column, in tenths (face-down cards counted at [`UNKNOWN`]).
struct Estimate<'a> {
    book: &'a Rulebook,
    grid: &'a Ranks,
    up: u16,
    columns: [i32; 4],
    total: i32,
}

impl<'a> Estimate<'a> {
    fn new(book: &'a Rulebook, grid: &'a Ranks, up: u16) -> Self {
        let mut estimate = Estimate {
            book,
            grid,
            up,
            columns: [0; 4],
            total: 0,
        };
        for column in 0..book.columns {
            estimate.columns[column] = estimate.column(column, None);
        }
        estimate.total = estimate.columns.iter().sum();
        estimate
    }

    /// Expected score of `column`, with the rank `placed` put at a position if given.
    fn column(&self, column: usize, placed: Option<(usize, u8)>) -> i32 {
        let (mut sum, mut unknown, mut same, mut first) = (0, 0, true, None);
        for row in 0..self.book.rows {
            let p = row * self.book.columns + column;
            let rank = match placed {
                Some((q, rank)) if q == p => rank,
                _ if self.up & (1 << p) != 0 => self.grid[p],
                _ => {
                    unknown += 1;
                    continue;
                }
            };
            sum += self.book.points[usize::from(rank)];
            same &= *first.get_or_insert(rank) == rank;
        }
        if unknown > 0 {
            return 10 * sum + UNKNOWN * unknown;
        }
        let rank = first.unwrap_or_default();
        let negative = rank == Rank::Two as u8 || rank == Rank::Joker as u8;
        if same && !(negative && self.book.keep_negative_pairs) {
            0
        } else {
            10 * sum
        }
    }

    /// The expected score with `rank` at `p`.
    fn placed(&self, p: usize, rank: u8) -> i32 {
        let column = p % self.book.columns;
        self.total - self.columns[column] + self.column(column, Some((p, rank)))
    }

    /// Where `rank` lowers the expected score most (the first such position), and that score.
    fn best_placement(&self, rank: u8) -> (usize, i32) {
        let mut best = (0, i32::MAX);
        for p in 0..self.book.cells() {
            let estimate = self.placed(p, rank);
            if estimate < best.1 {
                best = (p, estimate);
            }
        }
        best
    }

    fn face_down(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.book.cells()).filter(|p| self.up & (1 << p) == 0)
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

/// The rank code of a card.
fn rank_of(card: Card) -> u8 {
    card.rank() as u8
}

impl Table {
    /// A hole consistent with everything `obs` shows: its visible cards where they are, the
    /// cards its seat has not seen (every card of the deck but the face-up ones, the discard pile
    /// and its own drawn card) shuffled into the face-down cells and the stock.
    pub fn deal(book: &Rulebook, obs: &Observation, rng: &mut Playout) -> Table {
        let seats = usize::from(obs.seats).min(MAX_SEATS);
        let mut seen = obs.discard_set;
        let mut table = Table {
            seats,
            grids: [[0; MAX_CELLS]; MAX_SEATS],
            up: [0; MAX_SEATS],
            stock: [0; DECK],
            stock_len: 0,
            discard: [0; DECK],
            discard_len: 0,
            drawn: obs.drawn.map(|(source, card)| (source, rank_of(card))),
            current: usize::from(obs.current_seat.unwrap_or(obs.seat)),
            stage: obs.stage.unwrap_or(Stage::HoleOver),
            turns: obs.turns,
            final_left: obs.final_turns_left,
            knocked: obs.knocked.is_some(),
            dealer: usize::from(obs.dealer),
        };
        if let Some((_, card)) = obs.drawn {
            seen |= 1 << card.index();
        }
        for (seat, grid) in obs.grids.iter().take(seats).enumerate() {
            for (p, card) in grid.iter().enumerate() {
                if let Some(card) = card {
                    table.grids[seat][p] = rank_of(*card);
                    table.up[seat] |= 1 << p;
                    seen |= 1 << card.index();
                }
            }
        }
        table.fill_discard(obs);
        let mut unseen = [0u8; DECK];
        let mut count = 0;
        for index in 0..book.deck {
            if seen & (1 << index) == 0 {
                unseen[count] = rank_of(Card::from_index(index as u8).unwrap_or_default());
                count += 1;
            }
        }
        rng.shuffle(&mut unseen[..count]);
        table.fill_hidden(book, &unseen[..count], obs.stock_count as usize);
        table
    }

    /// The discard pile: its top last, the rest in any order (only a reshuffle reads it).
    fn fill_discard(&mut self, obs: &Observation) {
        let top = obs.discard_top.map(|card| card.index());
        for index in 0..DECK as u8 {
            if obs.discard_set & (1 << index) != 0 && Some(index) != top {
                self.discard[self.discard_len] =
                    rank_of(Card::from_index(index).unwrap_or_default());
                self.discard_len += 1;
            }
        }
        if let Some(card) = obs.discard_top {
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
        if self.stage == Stage::Reveal {
            self.finish_reveal(book);
        }
        while self.stage != Stage::HoleOver {
            self.greedy_step(book, rng);
        }
        std::array::from_fn(|seat| {
            if seat < self.seats {
                book.score(&self.grids[seat])
            } else {
                0
            }
        })
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
    fn greedy_step(&mut self, book: &Rulebook, rng: &mut Playout) {
        let seat = self.current;
        let grid = self.grids[seat];
        let sight = Estimate::new(book, &grid, self.up[seat]);
        let cells = book.cells() as i32;
        let mv = match self.stage {
            Stage::Draw => self.greedy_draw(book, &sight, cells),
            Stage::Place => self.greedy_place(book, &sight),
            Stage::Flip => {
                let hidden = sight.face_down().count();
                match sight.face_down().next() {
                    Some(p)
                        if book.flip == FlipRule::Always
                            || !(hidden == 1 && sight.total > HIGH_GRID_PER_CELL * cells) =>
                    {
                        Move::Flip {
                            position: super::cards::Position::ALL[p],
                        }
                    }
                    _ => Move::Pass,
                }
            }
            Stage::Reveal | Stage::HoleOver => {
                self.stage = Stage::HoleOver;
                return;
            }
        };
        self.play(book, seat, mv, rng);
    }

    fn greedy_draw(&self, book: &Rulebook, sight: &Estimate, cells: i32) -> Move {
        let hidden = sight.face_down().count() as i32;
        if book.knock
            && self.final_left.is_none()
            && sight.total <= KNOCK_PER_CELL * cells
            && 3 * hidden <= cells
        {
            return Move::Knock;
        }
        let take = self.discard_len > 0 && {
            let top = self.discard[self.discard_len - 1];
            sight.total - sight.best_placement(top).1 >= TAKE_DISCARD_GAIN
        };
        let source = if take { Source::Discard } else { Source::Stock };
        Move::Draw { source }
    }

    fn greedy_place(&self, book: &Rulebook, sight: &Estimate) -> Move {
        let Some((source, rank)) = self.drawn else {
            return Move::Discard;
        };
        let (p, estimate) = sight.best_placement(rank);
        let position = |p: usize| Move::Swap {
            position: super::cards::Position::ALL[p],
        };
        if source == Source::Discard || estimate < sight.total {
            return position(p);
        }
        let overdue = book.overdue && self.turns >= book.cells() as u32 * self.seats as u32;
        match sight.face_down().min_by_key(|&q| sight.placed(q, rank)) {
            Some(q) if overdue => position(q),
            _ => Move::Discard,
        }
    }
}

/// The cells of the greedy bot's initial reveal, as a bit set.
pub fn spread_mask(book: &Rulebook) -> u16 {
    let (rows, columns) = (book.rows, book.columns);
    let diagonal = (0..columns).map(|c| (c % rows) * columns + c);
    let rest = (0..book.cells()).filter(|p| (p % columns) % rows != p / columns);
    diagonal
        .chain(rest)
        .take(book.initial_reveal)
        .fold(0, |mask, p| mask | 1 << p)
}
