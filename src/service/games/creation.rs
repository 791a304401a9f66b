//! The one way a game comes to be: its shape checked and its rules resolved, a fresh server
//! seed and its commitment, a host token, `game_created` decided by the rules. A game created
//! on request ([`Games::create`]) then waits for its players; one started for accounts that
//! agreed to play (a challenge, a rematch, a seek, [`Games::start_game`]) has every seat taken
//! and hole 1 dealt in the same write. Either is counted once stored
//! ([`Games::count_created`]).

use uuid::Uuid;

use crate::engine::{
    self, BotKind, Card, ClientSeed, Command, Event, PlayerName, RuleError, Rules, RulesInput,
    Secrets, State, Timestamp, Viewer,
};
use crate::service::games::attempts::{Advanced, update_after};
use crate::service::games::credentials::{Token, random_bytes};
use crate::service::games::notices::notices;
use crate::service::{Answer, CreatedGame, Games, IdempotencyKey, ServiceError};
use crate::store::codec::{self, to_json};
use crate::store::{CreateIdempotency, NewEvent, NewGame, NewSeat, SeatedGame, StoreError};

/// A new game as the client asks for it, before validation.
#[derive(Debug, Clone)]
pub struct NewGameRequest {
    /// 2 to 4.
    pub seats: i64,
    /// 1 to 18.
    pub holes: i64,
    /// The options; missing ones take their defaults.
    pub rules: RulesInput,
    /// Kept out of the lobby.
    pub private: bool,
    /// Explicit deal orders for holes 1, 2, ...
    pub decks: Option<Vec<Vec<String>>>,
    /// Whether its end updates its seats' ratings: then only accounts and the built-in bots
    /// take its seats, and it cannot be stacked.
    pub rated: bool,
}

/// What a new game is: its seats and holes (checked by the rules), its options (resolved with
/// `turn_timeout_s` when they name none), whether it is rated.
struct Shape {
    seats: i64,
    holes: i64,
    rules: RulesInput,
    turn_timeout_s: Option<u32>,
    rated: bool,
}

/// A game as the rules created it, before anybody sits: its state, its first events, its
/// secrets, its host token and when.
struct Founded {
    state: State,
    events: Vec<Event>,
    secrets: Secrets,
    host_token: Token,
    at: Timestamp,
}

impl Games {
    /// Creates a game: a fresh server seed and its commitment, a host token, `game_created`.
    /// Created with an account `token`, the account is its host.
    pub async fn create(
        &self,
        token: Option<&str>,
        request: NewGameRequest,
        idempotency: Option<IdempotencyKey>,
    ) -> Result<Answer<CreatedGame>, ServiceError> {
        let host = match token {
            Some(_) => Some(self.accounts.account_of(token).await?.username),
            None => None,
        };
        if let Some(key) = &idempotency
            && let Some(stored) = self.store.find_create_response(&key.storage_key()).await?
        {
            return Ok(Answer::Replayed(key.replay(stored)?));
        }
        let (mut game, created, events) = self.new_game(&request)?;
        game.host_account = host;
        let stored_answer = idempotency.as_ref().map(|key| CreateIdempotency {
            key: key.storage_key(),
            fingerprint: key.fingerprint().to_owned(),
            response_status: 201,
            response_body: key.mask_tokens(&to_json(&created)),
        });
        match self.store.create_game(game, events, stored_answer).await {
            Ok(_) => {
                self.metrics.games_created.inc();
                Ok(Answer::Fresh(created))
            }
            // A concurrent retry with the same key created the game first: answer as it did.
            Err(StoreError::Conflict) => match &idempotency {
                Some(key) => match self.store.find_create_response(&key.storage_key()).await? {
                    Some(stored) => Ok(Answer::Replayed(key.replay(stored)?)),
                    None => Err(StoreError::Conflict.into()),
                },
                None => Err(StoreError::Conflict.into()),
            },
            Err(error) => Err(error.into()),
        }
    }

    /// The game that `request` asks for: its row, the answer to its creator, and its first
    /// entries. A rated game always has a clock ([`Games::match_rules`]).
    fn new_game(
        &self,
        request: &NewGameRequest,
    ) -> Result<(NewGame, CreatedGame, Vec<NewEvent>), ServiceError> {
        let rules = match request.rated {
            true => {
                let (seats, _) = engine::check_game_size(request.seats, request.holes)?;
                RulesInput::from(self.match_rules(&request.rules, seats)?)
            }
            false => request.rules.clone(),
        };
        let shape = Shape {
            seats: request.seats,
            holes: request.holes,
            rules,
            turn_timeout_s: self.default_turn_timeout_s,
            rated: request.rated,
        };
        let raw_decks = request.decks.as_deref().unwrap_or_default();
        let founded = self.found(shape, raw_decks)?;
        let game = NewGame::created(
            &founded.state,
            founded.at,
            founded.secrets.server_seed,
            founded.host_token.hash(),
            request.private,
            request.decks.as_ref(),
        )?;
        let created = CreatedGame {
            view: engine::view(&founded.state, Viewer::Spectator),
            host_token: founded.host_token.0,
        };
        Ok((
            game,
            created,
            codec::new_events(&founded.events, founded.at),
        ))
    }

    /// Starts a private game of `(holes, rules, rated)` hosted by account `host` and seats
    /// `seats` (name, bot, account) in order: hole 1 is dealt and the bots have revealed. The
    /// caller stores it (with the challenge or seek that made it), then counts it.
    pub fn start_game(
        &self,
        host: &str,
        (holes, rules, rated): (i32, Rules, bool),
        seats: Vec<(PlayerName, Option<BotKind>, Option<String>)>,
    ) -> Result<SeatedGame, ServiceError> {
        let shape = Shape {
            seats: seats.len() as i64,
            holes: holes.into(),
            // Resolved when the challenge or seek was made.
            rules: RulesInput::from(rules),
            turn_timeout_s: None,
            rated,
        };
        let Founded {
            mut state,
            mut events,
            secrets,
            host_token,
            at,
        } = self.found(shape, &[])?;
        let (advanced, new_seats, bound) = seat_all(&mut state, &secrets, seats, at)?;
        let (joined, snapshots) = advanced.into_parts();
        events.extend(joined);
        let mut game = NewGame::created(
            &state,
            at,
            secrets.server_seed,
            host_token.hash(),
            true,
            None,
        )?;
        game.host_account = Some(host.to_owned());
        let mut update = update_after(&state, snapshots);
        update.new_seats = new_seats;
        (update.account_games, update.account_events) =
            notices(&bound, &State::default(), &events, at, &state);
        Ok(SeatedGame {
            game,
            events: codec::new_events(&events, at),
            update,
        })
    }

    /// Counts a game started by [`Games::start_game`] once it is stored.
    pub fn count_created(&self) {
        self.metrics.games_created.inc();
        self.metrics.games_started.inc();
    }

    /// A game of `shape` (with `decks` for its first holes, if stacked) decided by the rules
    /// with a fresh server seed and host token.
    fn found(&self, shape: Shape, decks: &[Vec<String>]) -> Result<Founded, ServiceError> {
        let (seats, holes) = engine::check_game_size(shape.seats, shape.holes)?;
        let rules = shape.rules.resolve_with(seats, shape.turn_timeout_s)?;
        let secrets = Secrets {
            server_seed: random_bytes(),
            decks: parse_decks(decks, holes, &rules)?,
        };
        let command = Command::Create {
            game_id: Uuid::new_v4(),
            seats,
            holes,
            rules,
            commitment: engine::shuffle::commitment(&secrets.server_seed),
            stacked: !secrets.decks.is_empty(),
            rated: shape.rated,
        };
        let at = self.now();
        let mut state = State::default();
        let events = engine::execute(&mut state, &command, &secrets, at)?;
        Ok(Founded {
            state,
            events,
            secrets,
            host_token: Token::generate(),
            at,
        })
    }
}

/// The joins' writes of a new game's seats, their rows, and the seats bound to accounts.
type Seating = (Advanced, Vec<NewSeat>, Vec<(i32, String)>);

/// Seats `seats` (name, bot, account) in order in the game `state` was just created as.
fn seat_all(
    state: &mut State,
    secrets: &Secrets,
    seats: Vec<(PlayerName, Option<BotKind>, Option<String>)>,
    at: Timestamp,
) -> Result<Seating, ServiceError> {
    let mut advanced = Advanced::default();
    let mut new_seats = Vec::with_capacity(seats.len());
    let mut bound = Vec::new();
    for (seat, (name, bot, account)) in seats.into_iter().enumerate() {
        new_seats.push(NewSeat {
            seat: seat as i32,
            name: name.as_str().to_owned(),
            bot: bot.map(|bot| bot.name().to_owned()),
            client_seed: String::new(),
            token_hash: bot.is_none().then(|| Token::generate().hash()),
            account: account.clone(),
        });
        if let Some(account) = &account {
            bound.push((seat as i32, account.clone()));
        }
        let join = Command::Join {
            name,
            bot,
            client_seed: ClientSeed::default(),
            account,
        };
        advanced.advance(state, secrets, &join, at)?;
    }
    Ok((advanced, new_seats, bound))
}

/// The explicit decks of a stacked game, at most one per hole, each of the game's deck size (52
/// cards, 54 with jokers).
fn parse_decks(
    decks: &[Vec<String>],
    holes: u8,
    rules: &engine::Rules,
) -> Result<Vec<Vec<Card>>, RuleError> {
    if decks.len() > usize::from(holes) {
        return Err(RuleError::InvalidGameOptions(format!(
            "decks has {} decks for {holes} holes",
            decks.len()
        )));
    }
    decks
        .iter()
        .enumerate()
        .map(|(index, deck)| {
            let parsed = engine::parse_deck(deck).and_then(|parsed| {
                if parsed.len() == rules.deck_size() {
                    Ok(parsed)
                } else {
                    Err(RuleError::InvalidDeck(format!(
                        "this game's deck has {} cards, not {}",
                        rules.deck_size(),
                        parsed.len()
                    )))
                }
            });
            parsed.map_err(|error| match error {
                RuleError::InvalidDeck(why) => {
                    RuleError::InvalidDeck(format!("decks[{index}]: {why}"))
                }
                other => other,
            })
        })
        .collect()
}
