//! Bots: the strategies of each [`BotKind`] (the `expert`'s in [`expert`](mod@super::expert)) ([`choose`] picks a move from an [`Observation`]
//! only, as a bot never sees a face-down card, the stock or another seat's draw) and the driver
//! that plays every bot turn that is due ([`play_bot_turns`]).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use sha2::{Digest, Sha256};

use super::apply::execute;
use super::bot_kind::BotKind;
use super::cards::{Card, Cells, GridShape, Position};
use super::error::RuleError;
use super::event::Event;
use super::expert::expert;
use super::legal::legal_move_list;
use super::moves::{Command, Move, Source};
use super::rules::FlipRule;
use super::score::Scoring;
use super::secrets::Secrets;
use super::stage::{Seat, Stage};
use super::state::State;
use super::time::Timestamp;
use super::view::{Observation, observe};

/// The move a bot of `kind` makes, seeing `obs`. Always one of `obs.legal` when that is not
/// empty (`pass` otherwise: callers only ask a seat that may move).
pub fn choose(kind: BotKind, obs: &Observation, rng: &mut impl Rng) -> Move {
    let legal = &obs.legal;
    let wanted = match kind {
        BotKind::Random => None,
        BotKind::Greedy => Some(greedy(obs)),
        BotKind::Expert => Some(expert(obs, rng)),
    };
    match wanted {
        Some(mv) if legal.contains(&mv) => mv,
        _ if legal.is_empty() => Move::Pass,
        _ => legal[rng.random_range(0..legal.len())],
    }
}

/// Plays every bot turn that is due, in seat order, until a human is to move or the game ends;
/// every event is applied at `at` and returned in log order (see [`play_bot_move`]).
pub fn play_bot_turns(
    state: &mut State,
    secrets: &Secrets,
    at: Timestamp,
) -> Result<Vec<Event>, RuleError> {
    let mut events = Vec::new();
    while let Some(played) = play_bot_move(state, secrets, at)? {
        events.extend(played);
    }
    Ok(events)
}

/// Plays the move of the first bot seat that may move, if any: its events, applied at `at`.
///
/// A bot's rng for each move is seeded with SHA-256(server seed ‖ `"golf-bot"` ‖ the state's
/// version as 8 big-endian bytes): players cannot predict it without the secret seed, and the
/// same game plays the same way again. Fails only if a bot's move is refused, which is a bug.
pub fn play_bot_move(
    state: &mut State,
    secrets: &Secrets,
    at: Timestamp,
) -> Result<Option<Vec<Event>>, RuleError> {
    let Some((seat, bot)) = next_bot(state) else {
        return Ok(None);
    };
    let observation = observe(state, seat);
    let mut rng = bot_rng(&secrets.server_seed, state.version);
    let mv = choose(bot, &observation, &mut rng);
    execute(state, &Command::Play { seat, mv }, secrets, at).map(Some)
}

/// The first bot seat that may move, and its strategy.
fn next_bot(state: &State) -> Option<(Seat, BotKind)> {
    state.players.iter().enumerate().find_map(|(seat, player)| {
        let seat = seat as Seat;
        let bot = player.bot?;
        (!legal_move_list(state, seat).is_empty()).then_some((seat, bot))
    })
}

/// The rng of the bot move made at `version`.
fn bot_rng(server_seed: &[u8; 32], version: u64) -> StdRng {
    let seed = Sha256::new()
        .chain_update(server_seed)
        .chain_update(b"golf-bot")
        .chain_update(version.to_be_bytes())
        .finalize();
    StdRng::from_seed(seed.into())
}

/// Expected points of a face-down card, in tenths (the deck's mean is 71/13 ≈ 5.5).
const UNKNOWN: i32 = 55;

/// Take the discard top when it lowers the expected grid score by at least this (tenths).
const TAKE_DISCARD_GAIN: i32 = 25;

/// Decline an optional flip that would end the hole while the grid scores more than this many
/// tenths a cell (150 for six cells).
const HIGH_GRID_PER_CELL: i32 = 25;

/// Knock when the grid is expected to score at most this many tenths a cell, with at most a
/// third of it face down.
const KNOCK_PER_CELL: i32 = 10;

/// A grid as a bot sees it (its face-up cards) with the game's scoring, and the expected score
/// of each of its columns as it stands (a bot weighs every position against them).
struct Sight<'a> {
    grid: &'a [Option<Card>],
    scoring: Scoring,
    columns: [i32; 4],
    estimate: i32,
}

impl<'a> Sight<'a> {
    fn new(grid: &'a [Option<Card>], scoring: Scoring) -> Self {
        let mut sight = Sight {
            grid,
            scoring,
            columns: [0; 4],
            estimate: 0,
        };
        for column in 0..scoring.shape.columns() {
            sight.columns[column] = sight.column(column, None);
        }
        sight.estimate = sight.columns.iter().sum();
        sight
    }

    /// Expected score of column `column`, in tenths, with `placed` put at `at` if given.
    fn column(&self, column: usize, at: Option<(usize, Card)>) -> i32 {
        let mut known = [Card::default(); 3];
        let (mut count, mut unknown) = (0, 0);
        for p in self.scoring.shape.column(column) {
            match at
                .filter(|&(q, _)| q == p)
                .map(|(_, card)| card)
                .or(self.grid[p])
            {
                Some(card) => {
                    known[count] = card;
                    count += 1;
                }
                None => unknown += 1,
            }
        }
        if unknown == 0 {
            10 * self.scoring.column(&known[..count])
        } else {
            let points: i32 = known[..count]
                .iter()
                .map(|&card| self.scoring.card_points(card))
                .sum();
            10 * points + UNKNOWN * unknown
        }
    }

    /// Expected score of the grid, in tenths.
    fn estimate(&self) -> i32 {
        self.estimate
    }

    /// Where `card` lowers the expected score most, and the expected score it leaves.
    fn best_placement(&self, card: Card) -> (Position, i32) {
        let mut best = (Position::ALL[0], i32::MAX);
        for position in &Position::ALL[..self.grid.len()] {
            let estimate = self.placed(*position, card);
            if estimate < best.1 {
                best = (*position, estimate);
            }
        }
        best
    }

    /// The expected score with `card` at `position`: only the column of the position changes.
    fn placed(&self, position: Position, card: Card) -> i32 {
        let column = position.index() % self.scoring.shape.columns();
        self.estimate - self.columns[column] + self.column(column, Some((position.index(), card)))
    }

    /// The face-down positions, in order.
    fn face_down(&self) -> impl Iterator<Item = Position> + '_ {
        Position::ALL[..self.grid.len()]
            .iter()
            .copied()
            .filter(|p| self.grid[p.index()].is_none())
    }
}

/// Where a drawn card that improves nothing goes once the hole is overdue, in a game with house
/// rules: after `cells` turns a seat, into the face-down position where it costs least, so that
/// grids fill even when only high cards go round (four seats on nine cards leave 15 in the stock,
/// and a greedy bot that only ever discards them never ends the hole). Games without house rules
/// keep the greedy bot's decisions as they were: audits of stored games re-decide them.
fn overdue_reveal(obs: &Observation, sight: &Sight, card: Card) -> Option<Position> {
    let turns_a_seat = obs.grid.len() as u32 * u32::from(obs.seats);
    if !obs.rules.has_variants() || obs.turns < turns_a_seat {
        return None;
    }
    sight
        .face_down()
        .min_by_key(|position| sight.placed(*position, card))
}

/// The initial reveal: `count` positions spread over the columns (one a column, on a diagonal,
/// then the rest in order), listed increasing (`[0, 4]` on the six-card grid).
fn spread_reveal(shape: GridShape, count: usize) -> Move {
    let (rows, columns) = (shape.rows(), shape.columns());
    let diagonal = (0..columns).map(|c| (c % rows) * columns + c);
    let mut order: Vec<usize> = diagonal.collect();
    order.extend((0..shape.cells()).filter(|p| (p % columns) % rows != p / columns));
    let mut chosen: Vec<usize> = order.into_iter().take(count).collect();
    chosen.sort_unstable();
    Move::Reveal {
        positions: Cells::from_fn(chosen.len(), |i| Position::ALL[chosen[i]]),
    }
}

fn greedy(obs: &Observation) -> Move {
    let sight = Sight::new(&obs.grid, obs.rules.scoring());
    let cells = obs.grid.len() as i32;
    match obs.stage {
        Some(Stage::Reveal) => spread_reveal(obs.rules.grid, usize::from(obs.rules.initial_reveal)),
        Some(Stage::Draw) => {
            let estimate = sight.estimate();
            let hidden = sight.face_down().count() as i32;
            if obs.legal.contains(&Move::Knock)
                && estimate <= KNOCK_PER_CELL * cells
                && 3 * hidden <= cells
            {
                return Move::Knock;
            }
            let take = obs
                .discard_top
                .is_some_and(|top| estimate - sight.best_placement(top).1 >= TAKE_DISCARD_GAIN);
            let source = if take { Source::Discard } else { Source::Stock };
            Move::Draw { source }
        }
        Some(Stage::Place) => match obs.drawn {
            Some((source, card)) => {
                let (position, estimate) = sight.best_placement(card);
                if source == Source::Discard || estimate < sight.estimate() {
                    Move::Swap { position }
                } else if let Some(position) = overdue_reveal(obs, &sight, card) {
                    Move::Swap { position }
                } else {
                    Move::Discard
                }
            }
            None => Move::Discard,
        },
        Some(Stage::Flip) => {
            let last_one = sight.face_down().count() == 1;
            match sight.face_down().next() {
                Some(position)
                    if obs.rules.flip_after_discard == FlipRule::Always
                        || !(last_one && sight.estimate() > HIGH_GRID_PER_CELL * cells) =>
                {
                    Move::Flip { position }
                }
                _ => Move::Pass,
            }
        }
        Some(Stage::HoleOver) | None => Move::Pass,
    }
}
