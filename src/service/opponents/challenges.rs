//! Challenges and rematches (v1.2): an account invites others to a game; each answers; the last
//! acceptance creates the game with every seat taken (the author at seat 0, the others in the
//! order of `to`, then a rematch's bots), in the transaction of that answer. A rematch is a
//! challenge from a seat of a finished game to its other accounts.
//!
//! Every write is decided on the challenge as read and stored only if it has not moved since
//! (`ChallengeStore`), so two last acceptances at once create one game: the loser reads the
//! challenge again and finds it accepted.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::json;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::engine::{self, BotKind, PlayerName, Rules, RulesInput, Timestamp};
use crate::service::accounts::Username;
use crate::service::accounts::events::AccountEvent;
use crate::service::retry;
use crate::service::{Games, ServiceError};
use crate::store::{AccountRecord, ChallengeAnswer, ChallengeCaps, ChallengeRecord, SeatedGame};

/// The challenges and rematches.
#[derive(Clone)]
pub struct Challenges {
    games: Games,
    /// How long a challenge stays open for its answers.
    expiry: Duration,
}

impl Challenges {
    /// Challenges whose games `games` starts, open for `expiry`.
    pub fn new(games: Games, expiry: Duration) -> Self {
        Challenges { games, expiry }
    }
}

/// Open challenges one account lists at most.
const LISTED: i64 = 100;

/// The open challenges one author may hold, in all and to any one account: enough for anyone
/// looking for a game, too few to bury another author's challenge or to flood an account's
/// events and webhook.
const CAPS: ChallengeCaps = ChallengeCaps {
    open: 20,
    open_to_one: 3,
};

/// `POST /v1/challenges`: a game offered to 1 to 3 accounts.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = CreateChallengeBody, example = json!({"to": ["bob"], "holes": 9, "rated": true}))]
pub struct NewChallengeRequest {
    /// The challenged usernames, 1 to 3, seated in this order after the author.
    pub to: Vec<String>,
    /// Number of holes, 1 to 18 (default 9).
    #[serde(default = "crate::engine::rules::default_holes")]
    #[schema(minimum = 1, maximum = 18, default = 9)]
    pub holes: i64,
    /// Rule options; any left out take their defaults.
    #[serde(default, deserialize_with = "crate::engine::rules::rules_object")]
    pub rules: RulesInput,
    /// Whether the game is rated (default false).
    #[serde(default)]
    pub rated: bool,
}

/// One challenged account and its answer.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Invitation {
    pub username: String,
    /// Null until it answers; `accepted` or `declined`.
    pub answer: Option<String>,
}

/// A challenge as its author and the challenged read it.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(example = json!({"id": "5b0e3c1a-8a2f-4d6e-9c71-2f4b8d0e6a13", "from": "ada", "to": [{"username": "bob", "answer": null}], "holes": 9, "rules": {"final_turns": false, "flip_after_discard": "never", "max_turns_per_hole": 100, "turn_timeout_s": null}, "rated": true, "bots": [], "status": "open", "game_id": null, "created_at": "2026-05-01T12:00:00.000000Z", "expires_at": "2026-05-02T12:00:00.000000Z"}))]
pub struct Challenge {
    pub id: Uuid,
    /// Its author, seated at seat 0.
    pub from: String,
    /// The challenged accounts, seated in this order after the author.
    pub to: Vec<Invitation>,
    pub holes: i32,
    #[schema(value_type = Object)]
    pub rules: Rules,
    pub rated: bool,
    /// Built-in bots seated after the accounts (a rematch of a game that had them).
    pub bots: Vec<String>,
    /// `open`, `accepted` (then `game_id` is set), `declined`, `cancelled` or `expired`.
    pub status: String,
    pub game_id: Option<Uuid>,
    pub created_at: String,
    /// When it expires if still open.
    pub expires_at: String,
}

/// `GET /v1/account/challenges`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChallengeList {
    /// The open challenges the account sent or received, newest first.
    pub challenges: Vec<Challenge>,
}

impl Challenges {
    /// Creates a challenge from the account of `token` to 1 to 3 other accounts; each of them
    /// gets `challenge_received`.
    pub async fn create_challenge(
        &self,
        token: Option<&str>,
        request: NewChallengeRequest,
    ) -> Result<Challenge, ServiceError> {
        let author = self.games.accounts().account_of(token).await?;
        let invitees = self.invitees(&author.username, &request.to).await?;
        let seats = 1 + invitees.len() as i64;
        let (seats, holes) = engine::check_game_size(seats, request.holes)?;
        let rules = self.games.match_rules(&request.rules, seats)?;
        let record = self.new_challenge(&author, invitees, (holes, rules, request.rated), vec![]);
        self.store_challenge(record, None).await
    }

    /// A rematch of finished game `id`, offered by the account of `token` (which held one of its
    /// seats) to its other accounts, with the same holes, rules, rated and bots. Without other
    /// accounts, the new game starts at once.
    pub async fn rematch(&self, id: Uuid, token: Option<&str>) -> Result<Challenge, ServiceError> {
        let author = self.games.accounts().account_of(token).await?;
        let (record, state) = self.games.load(id).await?;
        if !record
            .accounts
            .seats
            .iter()
            .any(|(_, a)| *a == author.username)
        {
            return Err(ServiceError::Unauthorized(
                "A rematch is offered by an account that held a seat of the game.",
            ));
        }
        if state.status != engine::Status::Finished {
            return Err(ServiceError::NotFinished);
        }
        let mut invitees = Vec::new();
        let mut bots = Vec::new();
        for player in &state.players {
            match (&player.account, player.bot) {
                (Some(account), _) if *account == author.username => {}
                (Some(account), _) => invitees.push(account.clone()),
                (None, Some(bot)) => bots.push(bot.name().to_owned()),
                (None, None) => {}
            }
        }
        let settings = (
            i32::from(state.holes),
            self.games.clocked(state.rules),
            state.rated,
        );
        let mut record = self.new_challenge(&author, invitees, settings, bots);
        let game = match record.invitees.is_empty() {
            true => {
                let game = self.seated_game(&record).await?;
                record.status = "accepted".to_owned();
                record.game_id = Some(game.game.id);
                Some(game)
            }
            false => None,
        };
        self.store_challenge(record, game).await
    }

    /// Challenge `id` as the account of `token` (its author or one it challenged) reads it.
    pub async fn challenge(
        &self,
        id: Uuid,
        token: Option<&str>,
    ) -> Result<Challenge, ServiceError> {
        let account = self.games.accounts().account_of(token).await?;
        let record = self.party_to(id, &account.username).await?;
        Ok(self.shown(record))
    }

    /// The open challenges the account of `token` sent or received.
    pub async fn open_challenges(
        &self,
        token: Option<&str>,
    ) -> Result<ChallengeList, ServiceError> {
        let account = self.games.accounts().account_of(token).await?;
        let records = self
            .games
            .store()
            .challenges()
            .open_challenges(&account.username, LISTED)
            .await?;
        let challenges = records.into_iter().map(|record| self.shown(record));
        Ok(ChallengeList {
            challenges: challenges.filter(|c| c.status == "open").collect(),
        })
    }

    /// The account of `token` accepts (or declines) challenge `id`. The last acceptance creates
    /// the game; a decline closes the challenge. Its author gets `challenge_answered`, and every
    /// seat's account `game_started` when the game is created.
    pub async fn answer_challenge(
        &self,
        id: Uuid,
        token: Option<&str>,
        accept: bool,
    ) -> Result<Challenge, ServiceError> {
        let account = self.games.accounts().account_of(token).await?;
        let account = &account;
        let answered = retry::on_conflict(|| async move {
            let record = self.party_to(id, &account.username).await?;
            let Some(answer) = self
                .decide_answer(&record, &account.username, accept)
                .await?
            else {
                return Ok(Some(self.shown(record)));
            };
            let answered = AccountEvent::ChallengeAnswered {
                challenge_id: id,
                username: account.username.clone(),
                answer: answer.answer.to_owned(),
            };
            let notice = answered.for_account(&record.author, self.games.now());
            let started = answer.game.is_some();
            let challenges = self.games.store().challenges();
            challenges.answer_challenge(answer, vec![notice]).await?;
            if started {
                self.games.count_created();
            }
            Ok(None)
        })
        .await?;
        match answered {
            Some(unchanged) => Ok(unchanged),
            None => self.challenge(id, token).await,
        }
    }

    /// Its author cancels challenge `id` while it is open.
    pub async fn cancel_challenge(
        &self,
        id: Uuid,
        token: Option<&str>,
    ) -> Result<(), ServiceError> {
        let account = self.games.accounts().account_of(token).await?;
        let account = &account;
        retry::on_conflict(|| async move {
            let record = self.party_to(id, &account.username).await?;
            if record.author != account.username {
                return Err(ServiceError::Unauthorized(
                    "Only its author may cancel a challenge.",
                ));
            }
            self.check_open(&record)?;
            let challenges = self.games.store().challenges();
            challenges
                .close_challenge(id, record.version, "cancelled")
                .await?;
            Ok(())
        })
        .await
    }

    /// Marks expired the open challenges past their expiry (the sweep); answers how many.
    pub async fn expire_challenges(&self) -> Result<u64, ServiceError> {
        const BATCH: i64 = 100;
        Ok(self
            .games
            .store()
            .challenges()
            .expire_challenges(self.games.now(), BATCH)
            .await?)
    }
}

impl Challenges {
    /// The accounts `to` names, lowercase and checked: 1 to 3 distinct existing accounts, none
    /// of them `author` or a built-in bot.
    async fn invitees(&self, author: &str, to: &[String]) -> Result<Vec<String>, ServiceError> {
        let invalid = |why: &str| Err(ServiceError::InvalidChallenge(why.to_owned()));
        if to.is_empty() || to.len() > 3 {
            return invalid("to must name 1 to 3 accounts.");
        }
        let mut invitees: Vec<String> = Vec::with_capacity(to.len());
        for name in to {
            let name = Username::lookup(name).as_str().to_owned();
            if name == author || name.starts_with("bot-") || invitees.contains(&name) {
                return invalid("to names accounts other than yours, each once, and no bot.");
            }
            let accounts = self.games.store().accounts();
            if accounts.account_by_name(&name).await?.is_none() {
                return Err(ServiceError::UnknownAccount(name));
            }
            invitees.push(name);
        }
        Ok(invitees)
    }

    /// A new open challenge from `author` to `invitees`, for a game of `(holes, rules, rated)`
    /// with `bots` after them.
    fn new_challenge(
        &self,
        author: &AccountRecord,
        invitees: Vec<String>,
        (holes, rules, rated): (impl Into<i32>, Rules, bool),
        bots: Vec<String>,
    ) -> ChallengeRecord {
        let now = self.games.now();
        let expiry = i64::try_from(self.expiry.as_micros()).unwrap_or(i64::MAX);
        ChallengeRecord {
            id: Uuid::new_v4(),
            author: author.username.clone(),
            invitees: invitees.into_iter().map(|name| (name, None)).collect(),
            holes: holes.into(),
            rules,
            rated,
            bots,
            status: "open".to_owned(),
            version: 0,
            game_id: None,
            created_at: now.to_string(),
            expires_at: Timestamp(now.0.saturating_add(expiry)).to_string(),
        }
    }

    /// Stores `record` (and the game it starts at once, if any): its invitees get
    /// `challenge_received`.
    async fn store_challenge(
        &self,
        record: ChallengeRecord,
        game: Option<SeatedGame>,
    ) -> Result<Challenge, ServiceError> {
        let now = self.games.now();
        let notices = record
            .invitees
            .iter()
            .map(|(name, _)| {
                let received = AccountEvent::ChallengeReceived {
                    challenge_id: record.id,
                    from: record.author.clone(),
                };
                received.for_account(name, now)
            })
            .collect();
        let challenges = self.games.store().challenges();
        let started = game.is_some();
        let stored = challenges
            .create_challenge(record.clone(), notices, game, CAPS)
            .await?;
        if !stored {
            return Err(ServiceError::TooManyChallenges(
                "An account holds at most 20 open challenges, and 3 to any one account: cancel \
                 one, or wait for its answer or its expiry.",
            ));
        }
        if started {
            self.games.count_created();
        }
        Ok(self.shown(record))
    }

    /// Challenge `id`, if `account` is its author or one it challenged (else 404, as for a
    /// challenge that does not exist).
    async fn party_to(&self, id: Uuid, account: &str) -> Result<ChallengeRecord, ServiceError> {
        let record = self.games.store().challenges().load_challenge(id).await?;
        record
            .filter(|record| {
                record.author == account || record.invitees.iter().any(|(name, _)| name == account)
            })
            .ok_or(ServiceError::NotFound("There is no such challenge."))
    }

    /// Fails with `challenge_closed` unless `record` is open and not past its expiry.
    fn check_open(&self, record: &ChallengeRecord) -> Result<(), ServiceError> {
        if self.shown_status(record) == "open" {
            Ok(())
        } else {
            Err(ServiceError::ChallengeClosed(
                "This challenge is no longer open.",
            ))
        }
    }

    /// What `account`'s answer writes, or `None` when it repeats the answer it gave.
    async fn decide_answer(
        &self,
        record: &ChallengeRecord,
        account: &str,
        accept: bool,
    ) -> Result<Option<ChallengeAnswer>, ServiceError> {
        let answer = if accept { "accepted" } else { "declined" };
        let Some(position) = record.invitees.iter().position(|(name, _)| name == account) else {
            return Err(ServiceError::Unauthorized(
                "Only a challenged account answers a challenge.",
            ));
        };
        match record.invitees[position].1.as_deref() {
            Some(given) if given == answer => return Ok(None),
            Some(_) => {
                return Err(ServiceError::ChallengeClosed(
                    "This account already gave another answer.",
                ));
            }
            None => {}
        }
        self.check_open(record)?;
        let others_accepted = record
            .invitees
            .iter()
            .enumerate()
            .all(|(at, (_, given))| at == position || given.as_deref() == Some("accepted"));
        let (status, game) = match (accept, others_accepted) {
            (false, _) => ("declined", None),
            (true, false) => ("open", None),
            (true, true) => ("accepted", Some(self.seated_game(record).await?)),
        };
        Ok(Some(ChallengeAnswer {
            id: record.id,
            expected_version: record.version,
            position: position as i32,
            answer,
            status,
            game,
        }))
    }

    /// The status `record` shows now: an open one past its expiry is expired, whether or not a
    /// sweep has marked it yet.
    fn shown_status(&self, record: &ChallengeRecord) -> String {
        if record.status == "open" && record.expires_at <= self.games.now().to_string() {
            "expired".to_owned()
        } else {
            record.status.clone()
        }
    }

    fn shown(&self, record: ChallengeRecord) -> Challenge {
        Challenge {
            status: self.shown_status(&record),
            id: record.id,
            from: record.author,
            to: record
                .invitees
                .into_iter()
                .map(|(username, answer)| Invitation { username, answer })
                .collect(),
            holes: record.holes,
            rules: record.rules,
            rated: record.rated,
            bots: record.bots,
            game_id: record.game_id,
            created_at: record.created_at,
            expires_at: record.expires_at,
        }
    }
}

impl Challenges {
    /// The game `record` starts: created by its author (its host) with every seat taken, the
    /// author's, the challenged accounts' in order, then the bots', hole 1 dealt and the bots'
    /// reveals made; private, since its players are known.
    async fn seated_game(&self, record: &ChallengeRecord) -> Result<SeatedGame, ServiceError> {
        let mut accounts = vec![record.author.clone()];
        accounts.extend(record.invitees.iter().map(|(name, _)| name.clone()));
        let mut seats = Vec::new();
        for name in &accounts {
            let found = self.games.store().accounts().account_by_name(name).await?;
            let account = found.ok_or_else(|| ServiceError::UnknownAccount(name.clone()))?;
            let name = PlayerName::choose(&account.display_name)?;
            seats.push((name, None, Some(account.username)));
        }
        for bot in &record.bots {
            let kind: BotKind = serde_json::from_value(json!(bot))
                .map_err(|_| ServiceError::Internal(format!("a challenge's bot {bot:?}")))?;
            seats.push((PlayerName::choose("Bot")?, Some(kind), None));
        }
        let shape = (record.holes, record.rules, record.rated);
        self.games.start_game(&record.author, shape, seats)
    }
}
