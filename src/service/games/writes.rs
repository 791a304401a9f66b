//! The use cases that change a game at a player's or the host's request: create, join, move,
//! cancel. Each decides on the game as loaded and appends through the shared write path
//! ([`super::attempts`]).

use uuid::Uuid;

use crate::engine::{
    self, BotKind, ClientSeed, Command, MoveRequest, PlayerName, State, View, Viewer,
};
use crate::service::games::attempts::{Attempt, advance};
use crate::service::games::credentials::{Credential, Token, account_credential};
use crate::service::{
    Answer, Games, IdempotencyKey, Joined, ParsedLater, ServiceError, VersionPrecondition,
};
use crate::store::{AccountRecord, GameRecord, JOIN_SCOPE, NewSeat};

/// A seat as the client asks for it, before validation.
#[derive(Debug, Clone)]
pub struct JoinRequest {
    /// The player's name; a seat taken with an account token defaults to its display name.
    pub name: Option<String>,
    /// The player's entropy.
    pub client_seed: Option<String>,
    /// A bot strategy (host only).
    pub bot: Option<BotKind>,
    /// `Idempotency-Key`, scoped to the client.
    pub idempotency: Option<IdempotencyKey>,
}

/// A move as the client sends it, with the headers that condition it.
#[derive(Debug, Clone)]
pub struct MoveCommand {
    /// The move.
    pub request: MoveRequest,
    /// `If-Match`: the versions the move was chosen at.
    pub if_match: Option<VersionPrecondition>,
    /// `Idempotency-Key`.
    pub idempotency: Option<IdempotencyKey>,
}

impl Games {
    /// Takes a seat. The last seat deals hole 1; bots then reveal at once. A retried request
    /// with the same idempotency key (from the same client) gets the stored answer. A person's
    /// seat taken with an account token is bound to the account, which holds at most one seat
    /// per game.
    pub async fn join(
        &self,
        id: Uuid,
        token: Option<&str>,
        request: ParsedLater<JoinRequest>,
    ) -> Result<Answer<Joined>, ServiceError> {
        let account = match token {
            Some(token) => self.accounts.find_account(token).await?,
            None => None,
        };
        self.write(id, token, async |record, mut state, credential| {
            let request = request.open()?;
            if request.bot.is_some() && !is_host(record, credential, account.as_ref()) {
                return Err(ServiceError::Unauthorized(
                    "Only the host may seat a bot: send the host token.",
                ));
            }
            let key = request.idempotency.as_ref();
            if let Some(stored) = self.stored_answer(id, JOIN_SCOPE, key).await? {
                return Ok(Attempt::Done(Answer::Replayed(stored)));
            }
            let account = account.as_ref().filter(|_| request.bot.is_none());
            if let Some(account) = account
                && let Credential::Seat(_) = account_credential(record, &account.username)
            {
                return Err(ServiceError::AlreadySeated);
            }
            let (new_seat, command, answer) = seat_for(&state, &request, account)?;
            let at = self.now();
            let advanced = advance(&mut state, record, &command, at).await?;
            let stored = key.map(|key| key.record(JOIN_SCOPE, 201, &answer));
            Ok(Attempt::write(state, advanced, at, Answer::Fresh(answer))
                .seating(new_seat)
                .storing(stored))
        })
        .await
    }

    /// Plays a move for the seat of `token`, then every bot turn it hands over; answers with the
    /// caller's view. A retried request with the same idempotency key gets the stored answer.
    pub async fn play(
        &self,
        id: Uuid,
        token: Option<&str>,
        command: ParsedLater<MoveCommand>,
    ) -> Result<Answer<View>, ServiceError> {
        self.write(id, token, async |record, mut state, credential| {
            let Credential::Seat(seat) = credential else {
                return Err(ServiceError::Unauthorized(
                    "A move needs the seat's token: Authorization: Bearer <token>.",
                ));
            };
            let MoveCommand {
                request,
                if_match,
                idempotency,
            } = command.open()?;
            let key = idempotency.as_ref();
            if let Some(stored) = self.stored_answer(id, i32::from(seat), key).await? {
                return Ok(Attempt::Done(Answer::Replayed(stored)));
            }
            if let Some(precondition) = &if_match {
                precondition.check(record.version)?;
            }
            let mv = engine::parse_move(&state, seat, &request)?;
            let at = self.now();
            let advanced = advance(&mut state, record, &Command::Play { seat, mv }, at).await?;
            let view = engine::view(&state, Viewer::Seat(seat));
            let stored = key.map(|key| key.record(i32::from(seat), 200, &view));
            Ok(Attempt::write(state, advanced, at, Answer::Fresh(view)).storing(stored))
        })
        .await
    }

    /// The host cancels a game that is still waiting for players.
    pub async fn cancel(&self, id: Uuid, token: Option<&str>) -> Result<(), ServiceError> {
        let (record, _) = self.load(id).await?;
        let credential = self.accounts.credential(&record, token).await?;
        let account = match (credential, token) {
            (Credential::Seat(_), Some(token)) => self.accounts.find_account(token).await?,
            _ => None,
        };
        if !is_host(&record, credential, account.as_ref()) {
            return Err(ServiceError::Unauthorized(
                "Only the host may cancel a game: send the host token.",
            ));
        }
        self.store.cancel_game(id).await?;
        self.cache.forget(id);
        Ok(())
    }
}

/// Whether the holder of `credential`, presented as `account`'s token if it is one, is the host
/// of `record`'s game: an account seated in the game it created acts as its seat and its host.
fn is_host(record: &GameRecord, credential: Credential, account: Option<&AccountRecord>) -> bool {
    let hosting_account = account
        .is_some_and(|account| record.accounts.host.as_deref() == Some(account.username.as_str()));
    credential == Credential::Host || hosting_account
}

/// The seat that `request` takes in the game at `state` (bound to `account`, if given), the
/// command that seats it, and the answer to the joining client (with the seat's new token,
/// unless it seats a bot).
fn seat_for(
    state: &State,
    request: &JoinRequest,
    account: Option<&AccountRecord>,
) -> Result<(NewSeat, Command, Joined), ServiceError> {
    let seat = engine::check_join(state)?;
    let name = match (&request.name, account) {
        (Some(name), _) => name,
        (None, Some(account)) => &account.display_name,
        (None, None) => {
            return Err(ServiceError::Malformed(
                "name is required, unless the seat is taken with an account token.".to_owned(),
            ));
        }
    };
    let name = PlayerName::choose(name)?;
    let account = account.map(|account| account.username.clone());
    let client_seed = match (&request.bot, &request.client_seed) {
        (Some(_), _) | (None, None) => ClientSeed::default(),
        (None, Some(seed)) => ClientSeed::choose(seed)?,
    };
    let token = request.bot.is_none().then(Token::generate);
    let new_seat = NewSeat {
        seat: i32::from(seat),
        name: name.as_str().to_owned(),
        bot: request.bot.map(|bot| bot.name().to_owned()),
        client_seed: client_seed.as_str().to_owned(),
        token_hash: token.as_ref().map(Token::hash),
        account: account.clone(),
    };
    let command = Command::Join {
        name,
        bot: request.bot,
        client_seed,
        account,
    };
    let answer = Joined {
        seat,
        token: token.map(|t| t.0),
    };
    Ok((new_seat, command, answer))
}
