//! [`decide`]: a [`Command`] checked against the [`State`], and the events it causes (reading
//! the [`Secrets`] to deal, reshuffle and end a game).

use uuid::Uuid;

use super::bot_kind::BotKind;
use super::cards::{Card, Cells, Position};
use super::deadline::overdue_seats;
use super::error::RuleError;
use super::event::{Event, TakeoverReason};
use super::inputs::{ClientSeed, PlayerName};
use super::legal::{check_turn, check_values, seat_in_play};
use super::moves::{Command, Move, Source};
use super::rules::{Rules, RulesInput, check_game_size};
use super::secrets::Secrets;
use super::shuffle;
use super::stage::Seat;
use super::state::{State, Status};
use super::time::Timestamp;
use super::turn::{TurnEnd, flip_follows, turn_end};

/// Checks `command` against `state` and returns the events it causes, in log order.
///
/// `secrets` is a separate argument because the server seed must stay secret until the game
/// ends, while `State` is rebuilt from the public log and so may hold nothing secret that the
/// log does not. Only the commands that deal a hole, reshuffle the stock or end the game read it
/// (the dealt order, the reshuffled order and the server seed then go into the events, so
/// [`apply`](fn@super::apply) never needs it).
pub fn decide(
    state: &State,
    command: &Command,
    secrets: &Secrets,
) -> Result<Vec<Event>, RuleError> {
    match command {
        Command::Create {
            game_id,
            seats,
            holes,
            rules,
            commitment,
            stacked,
            rated,
        } => decide_create(
            state,
            *game_id,
            (*seats, *holes),
            rules,
            commitment,
            (*stacked, *rated),
        ),
        Command::Join {
            name,
            bot,
            client_seed,
            account,
        } => decide_join(state, name, *bot, client_seed, account.as_deref(), secrets),
        Command::Play { seat, mv } => decide_play(state, *seat, mv, secrets),
        Command::Leave { seat } => decide_takeover(state, *seat, TakeoverReason::Left, None),
        Command::TimeOut { seat, now } => {
            decide_takeover(state, *seat, TakeoverReason::TurnTimeout, Some(*now))
        }
    }
}

/// The greedy bot takes `seat` of a running game, for `reason`; a timeout (at `timed_out_at`)
/// only once the seat's deadline has passed.
fn decide_takeover(
    state: &State,
    seat: Seat,
    reason: TakeoverReason,
    timed_out_at: Option<Timestamp>,
) -> Result<Vec<Event>, RuleError> {
    let player = seat_in_play(state, seat)?;
    if player.bot.is_some() {
        return Err(RuleError::SeatTakenByBot(seat));
    }
    if let Some(now) = timed_out_at
        && !overdue_seats(state, now).contains(&seat)
    {
        return Err(RuleError::TurnNotOver(seat));
    }
    Ok(vec![Event::BotTookSeat {
        seat,
        bot: BotKind::Greedy,
        reason,
    }])
}

/// `game_created` of a game of `(seats, holes)`, `(stacked, rated)`: a rated game's deals are
/// never chosen by its creator.
fn decide_create(
    state: &State,
    game_id: Uuid,
    (seats, holes): (u8, u8),
    rules: &Rules,
    commitment: &str,
    (stacked, rated): (bool, bool),
) -> Result<Vec<Event>, RuleError> {
    if state.game_id.is_some() {
        return Err(RuleError::AlreadyCreated);
    }
    if stacked && rated {
        return Err(RuleError::InvalidGameOptions(
            "a rated game cannot be stacked: leave out decks, or rated".to_owned(),
        ));
    }
    check_game_size(i64::from(seats), i64::from(holes))?;
    let rules = RulesInput::from(*rules).resolve(seats)?;
    Ok(vec![Event::GameCreated {
        game_id,
        format: rules.log_format().to_owned(),
        seats,
        holes,
        rules,
        commitment: commitment.to_owned(),
        stacked,
        rated,
    }])
}

/// The seat a join would take, or why the game takes no more players. Checked before the
/// joiner's name and seed, as docs/API.md ranks a conflict with the game's state (409) before a bad
/// value (422).
pub fn check_join(state: &State) -> Result<Seat, RuleError> {
    if state.game_id.is_none() {
        return Err(RuleError::NotCreated);
    }
    let seat = state.players.len();
    if state.status != Status::Waiting || seat >= usize::from(state.seats) {
        return Err(RuleError::GameFull);
    }
    Ok(seat as Seat)
}

fn decide_join(
    state: &State,
    name: &PlayerName,
    bot: Option<BotKind>,
    client_seed: &ClientSeed,
    account: Option<&str>,
    secrets: &Secrets,
) -> Result<Vec<Event>, RuleError> {
    let seat = usize::from(check_join(state)?);
    if state.rated && bot.is_none() && account.is_none() {
        return Err(RuleError::AccountRequired);
    }
    let mut events = vec![Event::PlayerJoined {
        seat: seat as Seat,
        name: name.clone(),
        bot,
        client_seed: client_seed.clone(),
        account: account.map(str::to_owned),
    }];
    if seat + 1 == usize::from(state.seats) {
        let client_seeds = state
            .players
            .iter()
            .map(|p| p.client_seed.as_str())
            .chain([client_seed.as_str()]);
        let seed = shuffle::effective_seed(&secrets.server_seed, client_seeds);
        events.push(deal(state, 1, &seed, secrets));
    }
    Ok(events)
}

/// The effective seed `S` of a game whose seats are all taken.
fn seed_of(state: &State, secrets: &Secrets) -> [u8; 32] {
    shuffle::effective_seed(
        &secrets.server_seed,
        state.players.iter().map(|p| p.client_seed.as_str()),
    )
}

/// The `hole_dealt` event of `hole`: an explicit deck of a stacked game (one of the game's deck
/// size), else shuffle 0 under `seed`.
fn deal(state: &State, hole: u8, seed: &[u8; 32], secrets: &Secrets) -> Event {
    let explicit = secrets
        .decks
        .get(usize::from(hole) - 1)
        .filter(|deck| state.stacked && deck.len() == state.rules.deck_size());
    let deck = match explicit {
        Some(deck) => deck.clone(),
        None => shuffle::deal_order(seed, u32::from(hole), state.rules.jokers),
    };
    Event::HoleDealt {
        hole,
        dealer: (hole - 1) % state.seats,
        discard: deck[state.rules.cells() * usize::from(state.seats)],
        deck,
    }
}

fn decide_play(
    state: &State,
    seat: Seat,
    mv: &Move,
    secrets: &Secrets,
) -> Result<Vec<Event>, RuleError> {
    let mut events = Vec::with_capacity(3);
    decide_play_into(state, seat, mv, secrets, &mut events)?;
    Ok(events)
}

/// [`decide`] of `seat`'s move `mv`, its events added to `events` (left as they were on a
/// refusal): a caller that plays many moves reuses one list.
pub(super) fn decide_play_into(
    state: &State,
    seat: Seat,
    mv: &Move,
    secrets: &Secrets,
    events: &mut Vec<Event>,
) -> Result<(), RuleError> {
    check_turn(state, seat, mv.kind())?;
    check_values(state, seat, mv)?;
    let player = &state.players[usize::from(seat)];
    let wrong_stage = || RuleError::WrongStage {
        kind: mv.kind(),
        stage: state.stage,
    };
    match *mv {
        Move::Reveal { positions } => events.push(Event::CardsRevealed {
            seat,
            positions,
            cards: Cells::from_fn(positions.len(), |i| player.grid[positions[i].index()]),
        }),
        Move::Knock => {
            let knocked = Event::Knocked { seat };
            closing(state, seat, knocked, TurnKind::Knock, secrets, events);
        }
        Move::Draw { source } => {
            let card = draw(state, source, secrets, events).ok_or_else(wrong_stage)?;
            events.push(Event::CardDrawn { seat, source, card });
        }
        Move::Swap { position } => {
            let drawn = state.drawn.ok_or_else(wrong_stage)?;
            decide_swap(state, seat, position, drawn.card, secrets, events);
        }
        Move::Discard => {
            let drawn = state.drawn.ok_or_else(wrong_stage)?;
            let discarded = Event::CardDiscarded {
                seat,
                card: drawn.card,
            };
            if flip_follows(state, seat) {
                events.push(discarded);
            } else {
                closing(state, seat, discarded, TurnKind::Open, secrets, events);
            }
        }
        Move::Flip { position } => decide_flip(state, seat, position, secrets, events),
        Move::Pass => {
            let declined = Event::FlipDeclined { seat };
            closing(state, seat, declined, TurnKind::Open, secrets, events);
        }
    }
    Ok(())
}

/// Adds `event`, which ends `seat`'s turn (`kind`) leaving its grid as it is, and what follows.
fn closing(
    state: &State,
    seat: Seat,
    event: Event,
    kind: TurnKind,
    secrets: &Secrets,
    events: &mut Vec<Event>,
) {
    events.push(event);
    let grid = state.players[usize::from(seat)].grid;
    end_turn(state, seat, grid, kind, secrets, events);
}

/// The card a draw from `source` takes, or `None` when there is none. From an empty stock, the
/// discard pile but its top is reshuffled into a new stock first (its event added).
fn draw(state: &State, source: Source, secrets: &Secrets, events: &mut Vec<Event>) -> Option<Card> {
    match (source, state.stock.last()) {
        (Source::Stock, Some(&card)) => Some(card),
        (Source::Stock, None) => reshuffle_stock(state, secrets, events),
        (Source::Discard, _) => state.discard.last().copied(),
    }
}

/// Adds the `stock_reshuffled` event of the next reshuffle of this hole, and returns the new
/// stock's top card; `None` when the discard pile holds no card below its top.
fn reshuffle_stock(state: &State, secrets: &Secrets, events: &mut Vec<Event>) -> Option<Card> {
    let (_, below_top) = state.discard.split_last()?;
    let shuffle = state.shuffles + 1;
    let seed = seed_of(state, secrets);
    let order = shuffle::reshuffle(&seed, u32::from(state.hole), shuffle, below_top);
    let card = *order.first()?;
    events.push(Event::StockReshuffled {
        hole: state.hole,
        shuffle,
        order,
    });
    Some(card)
}

/// `seat` swaps the drawn `card` into its grid at `position`, which ends its turn.
fn decide_swap(
    state: &State,
    seat: Seat,
    position: Position,
    card: Card,
    secrets: &Secrets,
    events: &mut Vec<Event>,
) {
    let player = &state.players[usize::from(seat)];
    events.push(Event::CardSwapped {
        seat,
        position,
        card,
        replaced: player.grid[position.index()],
    });
    let mut grid = player.grid;
    grid[position.index()] = card;
    let up = player.face_up_count() + usize::from(!player.face_up[position.index()]);
    end_turn(
        state,
        seat,
        grid,
        TurnKind::of(up, grid.len()),
        secrets,
        events,
    );
}

/// `seat` turns its card at `position` face up after a discard, which ends its turn.
fn decide_flip(
    state: &State,
    seat: Seat,
    position: Position,
    secrets: &Secrets,
    events: &mut Vec<Event>,
) {
    let player = &state.players[usize::from(seat)];
    events.push(Event::CardFlipped {
        seat,
        position,
        card: player.grid[position.index()],
    });
    let kind = TurnKind::of(player.face_up_count() + 1, player.grid.len());
    end_turn(state, seat, player.grid, kind, secrets, events);
}

/// How a turn ended, for [`end_turn`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum TurnKind {
    /// With a grid still face down somewhere.
    Open,
    /// With the mover's grid all face up.
    Completed,
    /// With a knock.
    Knock,
}

impl TurnKind {
    /// The end of a turn that leaves `up` of the grid's `cells` cards face up.
    fn of(up: usize, cells: usize) -> TurnKind {
        if up == cells {
            TurnKind::Completed
        } else {
            TurnKind::Open
        }
    }
}

/// Adds what follows the end of `seat`'s turn, `grid` being its grid after the turn: when the
/// hole is over, `hole_ended` and then the next deal or `game_ended`.
fn end_turn(
    state: &State,
    seat: Seat,
    grid: Cells<Card>,
    kind: TurnKind,
    secrets: &Secrets,
    events: &mut Vec<Event>,
) {
    let (completed, knocking) = (kind == TurnKind::Completed, kind == TurnKind::Knock);
    let TurnEnd::HoleOver(reason) = turn_end(state, seat, completed, knocking) else {
        return;
    };
    let grids: Vec<Cells<Card>> = state
        .players
        .iter()
        .enumerate()
        .map(|(s, p)| if s == usize::from(seat) { grid } else { p.grid })
        .collect();
    let scoring = state.rules.scoring();
    let scores: Vec<i32> = grids.iter().map(|grid| scoring.grid(grid)).collect();
    let next = if state.hole < state.holes {
        deal(state, state.hole + 1, &seed_of(state, secrets), secrets)
    } else {
        game_ended(state, &scores, secrets)
    };
    events.push(Event::HoleEnded {
        hole: state.hole,
        reason,
        grids,
        scores,
    });
    events.push(next);
}

/// The `game_ended` event after the last hole, scored `scores`: the totals, the seats with the
/// lowest, and the server seed revealed.
fn game_ended(state: &State, scores: &[i32], secrets: &Secrets) -> Event {
    let totals: Vec<i32> = state
        .players
        .iter()
        .zip(scores)
        .map(|(p, score)| p.total + score)
        .collect();
    let best = totals.iter().copied().min().unwrap_or_default();
    let winners = (0..state.seats)
        .filter(|&s| totals[usize::from(s)] == best)
        .collect();
    Event::GameEnded {
        totals,
        winners,
        seed: hex::encode(secrets.server_seed),
    }
}
