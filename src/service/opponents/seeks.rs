//! Seeks (v1.2), "find me a game": an account asks for a game of some seats, holes, rules and
//! rated, optionally limiting its opponents' ratings. Waiting seeks of the same shape whose
//! ranges admit each other are matched oldest first: the seek that completes a table creates the
//! game with every matched account seated, in its own transaction under a lock on the pool
//! ([`SeekStore::place_seek`]), so no account is matched twice and no seek is lost, whatever the
//! number of instances. A seek with `bots_after_s` that still waits then gets the greedy bot in
//! its free seats (the sweep); one still waiting after the expiry expires.
//!
//! [`SeekStore::place_seek`]: crate::store::SeekStore::place_seek

use std::time::Duration;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa::openapi::schema::{
    Array, ArrayBuilder, KnownFormat, ObjectBuilder, SchemaFormat, SchemaType, Type,
};
use uuid::Uuid;

use crate::engine::{self, BotKind, PlayerName, Rules, RulesInput, Timestamp};
use crate::service::accounts::events::AccountEvent;
use crate::service::retry;
use crate::service::{Games, ServiceError};
use crate::store::accounts::NewAccountEvent;
use crate::store::{AccountRecord, SeatedGame, SeekMatch, SeekRecord, StoreError};

/// The seeks.
#[derive(Clone)]
pub struct Seeks {
    games: Games,
    /// How long a seek waits for its match.
    expiry: Duration,
}

impl Seeks {
    /// Seeks whose games `games` starts, waiting for `expiry`.
    pub fn new(games: Games, expiry: Duration) -> Self {
        Seeks { games, expiry }
    }
}

/// Waiting seeks of its pool a new seek is matched against at most, oldest first, among those
/// whose ranges and ratings admit it both ways (the others are never read).
const CANDIDATES: i64 = 200;

/// The shortest and longest wait before bots, in seconds.
const BOTS_AFTER_S: std::ops::RangeInclusive<i64> = 5..=600;

/// Seeks the sweep fills with bots, or expires, in one pass.
const SWEEP_BATCH: i64 = 100;

/// `POST /v1/seeks`: the game the account looks for.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = CreateSeekBody, example = json!({"seats": 2, "holes": 9, "rated": true, "bots_after_s": 30}))]
pub struct NewSeekRequest {
    /// Seats of the game, 2 to 4 (default 2).
    #[serde(default = "default_seats")]
    #[schema(minimum = 2, maximum = 4, default = 2)]
    pub seats: i64,
    /// Number of holes, 1 to 18 (default 9).
    #[serde(default = "crate::engine::rules::default_holes")]
    #[schema(minimum = 1, maximum = 18, default = 9)]
    pub holes: i64,
    /// Rule options; any left out take their defaults. Only seeks with the same resolved rules
    /// match.
    #[serde(default, deserialize_with = "crate::engine::rules::rules_object")]
    pub rules: RulesInput,
    /// Whether the game is rated (default false).
    #[serde(default)]
    pub rated: bool,
    /// See [`rating_range_schema`].
    #[serde(default)]
    #[schema(schema_with = rating_range_schema)]
    pub rating_range: Option<[f64; 2]>,
    /// Seconds after which the free seats go to the greedy bot, 5 to 600; absent or null:
    /// never.
    #[serde(default)]
    #[schema(minimum = 5, maximum = 600)]
    pub bots_after_s: Option<i64>,
}

fn default_seats() -> i64 {
    2
}

/// `CreateSeekBody.rating_range`: null, or exactly two numbers (a derived schema would take any
/// number of them).
fn rating_range_schema() -> Array {
    let number = ObjectBuilder::new()
        .schema_type(Type::Number)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Double)));
    ArrayBuilder::new()
        .schema_type(SchemaType::from_iter([Type::Array, Type::Null]))
        .items(number)
        .min_items(Some(2))
        .max_items(Some(2))
        .description(Some(
            "`[lo, hi]`: the opponents' ratings this seek accepts, lo at most hi, admitting the \
             account's own rating (each opponent's range must accept this account's rating \
             too). Absent or null: any.",
        ))
        .build()
}

/// A seek as its account reads it.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(example = json!({"id": "0c5d1e2f-3a4b-4c6d-8e9f-a0b1c2d3e4f5", "status": "matched", "game_id": "3f1c2b4a-5d6e-4f70-8a9b-0c1d2e3f4a5b", "seat": 1, "seats": 2, "holes": 9, "rules": {"final_turns": false, "flip_after_discard": "never", "max_turns_per_hole": 100, "turn_timeout_s": null}, "rated": true, "rating_range": [1300.0, 1700.0], "bots_after_s": 30, "created_at": "2026-05-01T12:00:00.000000Z", "expires_at": "2026-05-01T12:10:00.000000Z"}))]
pub struct Seek {
    pub id: Uuid,
    /// `waiting`, `matched` (then `game_id` and `seat` are set), `cancelled` or `expired`.
    pub status: String,
    /// The game it was matched into.
    pub game_id: Option<Uuid>,
    /// The account's seat in that game.
    pub seat: Option<i32>,
    pub seats: i32,
    pub holes: i32,
    #[schema(value_type = Object)]
    pub rules: Rules,
    pub rated: bool,
    /// The opponents' ratings it accepts, if it limits them.
    pub rating_range: Option<[f64; 2]>,
    /// Seconds after which the free seats go to the greedy bot, if ever.
    pub bots_after_s: Option<i32>,
    pub created_at: String,
    /// When it expires if still waiting.
    pub expires_at: String,
}

impl Seeks {
    /// Places a seek for the account of `token`: matched at once if the waiting seeks of its
    /// pool complete a table with it, waiting otherwise.
    pub async fn create_seek(
        &self,
        token: Option<&str>,
        request: NewSeekRequest,
    ) -> Result<Seek, ServiceError> {
        let account = self.games.accounts().account_of(token).await?;
        let (seats, holes) = engine::check_game_size(request.seats, request.holes)?;
        let rules = self.games.match_rules(&request.rules, seats)?;
        let range = check_range(request.rating_range, account.rating.value)?;
        let bots_after_s = check_bots_after(request.bots_after_s)?;
        let account = &account;
        let placed = retry::on_conflict(|| async move {
            let seeks = self.games.store().seeks();
            let waiting = seeks.waiting_seek(&account.username).await?;
            if waiting.is_some_and(|seek| seek.expires_at > self.games.now().to_string()) {
                return Err(ServiceError::AlreadySeeking);
            }
            let shape = (seats.into(), holes.into(), rules, request.rated);
            let seek = self.new_seek(account, shape, range, bots_after_s);
            let matcher = |new: &SeekRecord, waiting: &[SeekRecord]| self.match_seek(new, waiting);
            Ok(seeks.place_seek(seek, CANDIDATES, &matcher).await?)
        })
        .await?;
        if placed.game_id.is_some() {
            self.games.count_created();
        }
        Ok(self.shown_seek(placed))
    }

    /// Seek `id`, as its account reads it (404 for anyone else).
    pub async fn seek(&self, id: Uuid, token: Option<&str>) -> Result<Seek, ServiceError> {
        let account = self.games.accounts().account_of(token).await?;
        let record = self.own_seek(id, &account.username).await?;
        Ok(self.shown_seek(record))
    }

    /// Its account cancels seek `id` while it waits; a seek already cancelled stays so.
    pub async fn cancel_seek(&self, id: Uuid, token: Option<&str>) -> Result<(), ServiceError> {
        let account = self.games.accounts().account_of(token).await?;
        let record = self.own_seek(id, &account.username).await?;
        match self.shown_seek(record).status.as_str() {
            "waiting" => {}
            "cancelled" => return Ok(()),
            _ => return Err(ServiceError::SeekClosed),
        }
        match self.games.store().seeks().close_seek(id, "cancelled").await {
            Ok(()) => Ok(()),
            // Matched (or expired) since it was read.
            Err(StoreError::Conflict) => Err(ServiceError::SeekClosed),
            Err(error) => Err(error.into()),
        }
    }

    /// Fills with the greedy bot the free seats of the seeks whose wait for bots is over (the
    /// sweep); answers how many were matched so.
    pub async fn fill_due_seeks(&self) -> Result<u64, ServiceError> {
        let due = self
            .games
            .store()
            .seeks()
            .seeks_due_for_bots(self.games.now(), SWEEP_BATCH)
            .await?;
        let mut filled = 0;
        for seek in due {
            let mut seats = vec![seat_of(&seek)?];
            for _ in 1..seek.seats {
                seats.push((PlayerName::choose("Bot")?, Some(BotKind::Greedy), None));
            }
            let shape = (seek.holes, seek.rules, seek.rated);
            let mut game = self.games.start_game(&seek.account, shape, seats)?;
            matched_notices(&mut game, &[(&seek, 0)], self.games.now());
            match self.games.store().seeks().fill_seek(&seek, 0, game).await {
                Ok(()) => {
                    self.games.count_created();
                    filled += 1
                }
                // Matched with a player, or cancelled, since the query.
                Err(StoreError::Conflict) => {}
                Err(error) => return Err(error.into()),
            }
        }
        Ok(filled)
    }

    /// Marks expired the waiting seeks past their expiry (the sweep); answers how many.
    pub async fn expire_seeks(&self) -> Result<u64, ServiceError> {
        Ok(self
            .games
            .store()
            .seeks()
            .expire_seeks(self.games.now(), SWEEP_BATCH)
            .await?)
    }
}

impl Seeks {
    /// The game that seats `new` with the oldest waiting seeks of its pool that admit it and
    /// each other, if they fill its table: the oldest at seat 0, `new` last.
    fn match_seek(
        &self,
        new: &SeekRecord,
        waiting: &[SeekRecord],
    ) -> Result<Option<SeekMatch>, StoreError> {
        let Some(table) = table_for(new, waiting) else {
            return Ok(None);
        };
        let seated: Vec<(&SeekRecord, i32)> = table.into_iter().zip(0..).collect();
        let internal = |error: ServiceError| StoreError::Internal(error.to_string());
        let seats = seated
            .iter()
            .map(|(seek, _)| seat_of(seek))
            .collect::<Result<Vec<_>, _>>()
            .map_err(internal)?;
        let shape = (new.holes, new.rules, new.rated);
        let host = &seated[0].0.account;
        let mut game = self
            .games
            .start_game(host, shape, seats)
            .map_err(internal)?;
        matched_notices(&mut game, &seated, self.games.now());
        Ok(Some(SeekMatch {
            seats: seated.iter().map(|(seek, seat)| (seek.id, *seat)).collect(),
            game,
        }))
    }

    /// A new waiting seek of `account` for a game of `(seats, holes, rules, rated)`.
    fn new_seek(
        &self,
        account: &AccountRecord,
        (seats, holes, rules, rated): (i32, i32, Rules, bool),
        range: Option<(f64, f64)>,
        bots_after_s: Option<i32>,
    ) -> SeekRecord {
        let now = self.games.now();
        let bots_after = |s: i32| std::time::Duration::from_secs(s.unsigned_abs().into());
        SeekRecord {
            id: Uuid::new_v4(),
            account: account.username.clone(),
            display_name: account.display_name.clone(),
            rating: account.rating.value,
            seats,
            holes,
            pool: pool_of(seats, holes, &rules, rated),
            rules,
            rated,
            range,
            bots_after_s,
            status: "waiting".to_owned(),
            game_id: None,
            seat: None,
            created_at: now.to_string(),
            expires_at: self.after(now, self.expiry).to_string(),
            bots_at: bots_after_s.map(|s| self.after(now, bots_after(s)).to_string()),
        }
    }

    /// Seek `id`, if it is `account`'s (else 404, as for a seek that does not exist).
    async fn own_seek(&self, id: Uuid, account: &str) -> Result<SeekRecord, ServiceError> {
        let record = self.games.store().seeks().load_seek(id).await?;
        record
            .filter(|record| record.account == account)
            .ok_or(ServiceError::NotFound("There is no such seek."))
    }

    /// `at` plus `wait`.
    fn after(&self, at: Timestamp, wait: std::time::Duration) -> Timestamp {
        let micros = i64::try_from(wait.as_micros()).unwrap_or(i64::MAX);
        Timestamp(at.0.saturating_add(micros))
    }

    /// The seek as its account reads it: a waiting one past its expiry is expired, whether or
    /// not a sweep has marked it yet.
    fn shown_seek(&self, record: SeekRecord) -> Seek {
        let expired =
            record.status == "waiting" && record.expires_at <= self.games.now().to_string();
        Seek {
            id: record.id,
            status: if expired {
                "expired".to_owned()
            } else {
                record.status
            },
            game_id: record.game_id,
            seat: record.seat,
            seats: record.seats,
            holes: record.holes,
            rules: record.rules,
            rated: record.rated,
            rating_range: record.range.map(|(lo, hi)| [lo, hi]),
            bots_after_s: record.bots_after_s,
            created_at: record.created_at,
            expires_at: record.expires_at,
        }
    }
}

/// The seeks of one table: the oldest waiting seeks (none of `new`'s account) that admit `new`
/// and each other, then `new`; `None` unless they fill its seats.
fn table_for<'a>(new: &'a SeekRecord, waiting: &'a [SeekRecord]) -> Option<Vec<&'a SeekRecord>> {
    let wanted = usize::try_from(new.seats).ok()?.checked_sub(1)?;
    let mut table: Vec<&SeekRecord> = Vec::with_capacity(wanted + 1);
    for seek in waiting {
        if table.len() == wanted {
            break;
        }
        let fits = seek.account != new.account
            && mutual(seek, new)
            && table.iter().all(|seated| mutual(seated, seek));
        if fits {
            table.push(seek);
        }
    }
    (table.len() == wanted).then(|| {
        table.push(new);
        table
    })
}

/// Whether each of `a` and `b` accepts the other's rating.
fn mutual(a: &SeekRecord, b: &SeekRecord) -> bool {
    let admits = |seek: &SeekRecord, rating: f64| {
        seek.range
            .is_none_or(|(lo, hi)| lo <= rating && rating <= hi)
    };
    admits(a, b.rating) && admits(b, a.rating)
}

/// The seat `seek` takes: its account, under the name it had when it sought.
fn seat_of(
    seek: &SeekRecord,
) -> Result<(PlayerName, Option<BotKind>, Option<String>), ServiceError> {
    let name = PlayerName::choose(&seek.display_name)?;
    Ok((name, None, Some(seek.account.clone())))
}

/// Puts each seated seek's `seek_matched` first among the account events of `game`.
fn matched_notices(game: &mut SeatedGame, seated: &[(&SeekRecord, i32)], at: Timestamp) {
    let matched = seated.iter().map(|(seek, seat)| {
        let matched = AccountEvent::SeekMatched {
            seek_id: seek.id,
            seat: *seat,
        };
        matched.for_account(&seek.account, at)
    });
    let mut events: Vec<NewAccountEvent> = matched.collect();
    events.append(&mut game.update.account_events);
    game.update.account_events = events;
}

/// The pool of a seek: what must be equal for two seeks to match.
fn pool_of(seats: i32, holes: i32, rules: &Rules, rated: bool) -> String {
    let rules = crate::store::codec::to_json(rules);
    format!("{seats}/{holes}/{rated}/{rules}")
}

/// A rating range as given: two finite numbers, the first at most the second, that admit the
/// seeker's own `rating` (a range that admits nobody like the seeker would only hold a place in
/// the pool).
fn check_range(range: Option<[f64; 2]>, rating: f64) -> Result<Option<(f64, f64)>, ServiceError> {
    match range {
        None => Ok(None),
        Some([lo, hi]) if !(lo.is_finite() && hi.is_finite() && lo <= hi) => Err(
            ServiceError::InvalidSeek("rating_range is [lo, hi], two numbers with lo at most hi."),
        ),
        Some([lo, hi]) if !(lo <= rating && rating <= hi) => Err(ServiceError::InvalidSeek(
            "rating_range must admit your own rating: opponents are matched only when each \
             admits the other.",
        )),
        Some([lo, hi]) => Ok(Some((lo, hi))),
    }
}

/// A wait before bots as given: null, or 5 to 600 seconds.
fn check_bots_after(bots_after_s: Option<i64>) -> Result<Option<i32>, ServiceError> {
    match bots_after_s {
        None => Ok(None),
        Some(s) if BOTS_AFTER_S.contains(&s) => Ok(Some(s as i32)),
        Some(_) => Err(ServiceError::InvalidSeek(
            "bots_after_s is null or 5 to 600 seconds.",
        )),
    }
}
