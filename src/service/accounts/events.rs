//! The events of an account, typed: [`AccountEvent`] is what the code that causes an event
//! writes ([`AccountEvent::for_account`]), what a webhook's filter names ([`AccountEventType`]),
//! and, stored as its `type` and its fields, what the account's page, stream and webhook bodies
//! carry, read back into the same type ([`shown`]: `{id, at, game_id, type, ...fields}`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::engine::{Seat, Timestamp};
use crate::ratings::Rating;
use crate::store::{AccountEventRecord, NewAccountEvent};

/// What happened that an account hears of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AccountEvent {
    /// The game of one of its seats dealt its first hole.
    GameStarted { seat: Seat },
    /// Its seat may move (again).
    YourTurn {
        seat: Seat,
        /// When a bot may take the seat (null without a turn timeout).
        turn_deadline: Option<String>,
    },
    /// The game of one of its seats ended.
    GameEnded {
        seat: Seat,
        totals: Vec<i32>,
        winners: Vec<Seat>,
    },
    /// Another account challenged it.
    ChallengeReceived { challenge_id: Uuid, from: String },
    /// An account it challenged answered.
    ChallengeAnswered {
        challenge_id: Uuid,
        username: String,
        /// `accepted` or `declined`.
        answer: String,
    },
    /// Its seek was matched: the game is the event's `game_id`.
    SeekMatched { seek_id: Uuid, seat: i32 },
    /// The end of a rated game (the event's `game_id`) moved its rating: applied by the ratings
    /// job just after the game ended, not by the move that ended it.
    RatingChanged { before: Rating, after: Rating },
    /// Its webhook was disabled: deliveries stop until it is registered again.
    WebhookDisabled {
        /// `gone` (the receiver answered 410) or `failing` (every attempt failed for a day).
        reason: String,
        /// Since when every attempt had failed.
        failing_since: Option<String>,
    },
}

/// The types of account events, as a webhook's filter names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AccountEventType {
    GameStarted,
    YourTurn,
    GameEnded,
    ChallengeReceived,
    ChallengeAnswered,
    SeekMatched,
    RatingChanged,
    WebhookDisabled,
}

impl AccountEventType {
    /// The `type` of the events of this kind.
    pub fn name(self) -> &'static str {
        match self {
            AccountEventType::GameStarted => "game_started",
            AccountEventType::YourTurn => "your_turn",
            AccountEventType::GameEnded => "game_ended",
            AccountEventType::ChallengeReceived => "challenge_received",
            AccountEventType::ChallengeAnswered => "challenge_answered",
            AccountEventType::SeekMatched => "seek_matched",
            AccountEventType::RatingChanged => "rating_changed",
            AccountEventType::WebhookDisabled => "webhook_disabled",
        }
    }
}

/// An account event as the API shows it.
#[derive(Serialize)]
struct Shown<'a> {
    id: i64,
    at: &'a str,
    /// Null for an event of no game (a challenge's).
    game_id: Option<Uuid>,
    #[serde(flatten)]
    event: AccountEvent,
}

/// A stored account event as the page, the stream and a webhook's body show it: its `id`, `at`
/// and `game_id`, its `type` and its fields. A row that is no event of this release (it cannot
/// be written so) is shown as stored.
pub fn shown(stored: &AccountEventRecord) -> Value {
    let mut fields = match &stored.data {
        Value::Object(fields) => fields.clone(),
        _ => Map::new(),
    };
    fields.insert("type".to_owned(), Value::from(stored.kind.as_str()));
    let typed = serde_json::from_value::<AccountEvent>(Value::Object(fields.clone()));
    match typed {
        Ok(event) => serde_json::to_value(Shown {
            id: stored.id,
            at: &stored.at,
            game_id: stored.game_id,
            event,
        })
        .unwrap_or(Value::Null),
        Err(error) => {
            tracing::warn!(id = stored.id, %error, "an account event of no known shape");
            fields.insert("id".to_owned(), Value::from(stored.id));
            fields.insert("at".to_owned(), Value::from(stored.at.as_str()));
            let game_id = serde_json::to_value(stored.game_id).unwrap_or(Value::Null);
            fields.insert("game_id".to_owned(), game_id);
            Value::Object(fields)
        }
    }
}

impl AccountEvent {
    /// Its type.
    pub fn kind(&self) -> AccountEventType {
        match self {
            AccountEvent::GameStarted { .. } => AccountEventType::GameStarted,
            AccountEvent::YourTurn { .. } => AccountEventType::YourTurn,
            AccountEvent::GameEnded { .. } => AccountEventType::GameEnded,
            AccountEvent::ChallengeReceived { .. } => AccountEventType::ChallengeReceived,
            AccountEvent::ChallengeAnswered { .. } => AccountEventType::ChallengeAnswered,
            AccountEvent::SeekMatched { .. } => AccountEventType::SeekMatched,
            AccountEvent::RatingChanged { .. } => AccountEventType::RatingChanged,
            AccountEvent::WebhookDisabled { .. } => AccountEventType::WebhookDisabled,
        }
    }

    /// The row that stores it for `account`, written at `at`: its type, and its fields as the
    /// row's data.
    pub fn for_account(&self, account: &str, at: Timestamp) -> NewAccountEvent {
        let mut data = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(fields) = &mut data {
            fields.remove("type");
        }
        NewAccountEvent {
            account: account.to_owned(),
            kind: self.kind().name(),
            at,
            data,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_stored_event_keeps_its_fields_apart_from_its_type() {
        let event = AccountEvent::ChallengeAnswered {
            challenge_id: Uuid::nil(),
            username: "bob".to_owned(),
            answer: "accepted".to_owned(),
        };
        let row = event.for_account("ada", Timestamp(0));
        assert_eq!(row.account, "ada");
        assert_eq!(row.kind, "challenge_answered");
        assert_eq!(
            row.data,
            json!({"challenge_id": Uuid::nil(), "username": "bob", "answer": "accepted"})
        );
        let turn = AccountEvent::YourTurn {
            seat: 1,
            turn_deadline: None,
        };
        assert_eq!(
            turn.for_account("ada", Timestamp(0)).data,
            json!({"seat": 1, "turn_deadline": null})
        );
    }
}
