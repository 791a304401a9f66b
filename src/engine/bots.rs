//! Bots: the strategies of each [`BotKind`] (the `expert`'s in [`expert`](mod@super::expert)) ([`choose`] picks a move from an [`Observation`]
//! only, as a bot never sees a face-down card, the stock or another seat's draw) and the driver
//! that plays every bot turn that is due ([`play_bot_turns`]).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use sha2::{Digest, Sha256};

use super::apply::execute;
use super::bot_kind::BotKind;
use super::error::RuleError;
use super::event::Event;
use super::expert::expert;
use super::greedy::{Rulebook, Turn, greedy_move, rank_of};
use super::legal::legal_move_list;
use super::moves::{Command, Move};
use super::secrets::Secrets;
use super::stage::{Seat, Stage};
use super::state::State;
use super::time::Timestamp;
use super::view::{Observation, observe};

/// The move a bot of `kind` makes, seeing `obs`. Always one of `obs.legal()` when that is not
/// empty (`pass` otherwise: callers only ask a seat that may move).
pub fn choose(kind: BotKind, obs: &Observation, rng: &mut impl Rng) -> Move {
    let wanted = match kind {
        BotKind::Random => None,
        BotKind::Greedy => Some(greedy(obs)),
        BotKind::Expert => Some(expert(obs, rng)),
    };
    match wanted {
        Some(mv) if obs.allows(&mv) => mv,
        _ => {
            let legal = obs.legal();
            if legal.is_empty() {
                Move::Pass
            } else {
                legal[rng.random_range(0..legal.len())]
            }
        }
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

/// The greedy bot's move: the greedy policy of the playouts ([`greedy_move`]) on the bot's own
/// grid as it sees it.
fn greedy(obs: &Observation) -> Move {
    let Some(stage) = obs.stage() else {
        return Move::Pass;
    };
    let grid = obs.own_grid();
    let turn = Turn {
        stage,
        grid: &grid.cards.map(rank_of),
        up: grid.up,
        discard_top: obs.discard_top().map(rank_of),
        drawn: obs.drawn().map(|(source, card)| (source, rank_of(card))),
        may_knock: stage == Stage::Draw && obs.allows(&Move::Knock),
        turns: obs.turns(),
        seats: usize::from(obs.seats()),
    };
    greedy_move(&Rulebook::new(obs.rules()), &turn)
}
