//! [`ChallengeStore`] on both backends: its statements read the same in both dialects.
//! Account events that belong to no game are numbered here, one statement per event, from the
//! account's `last_event_id` (whose row the numbering locks until the commit, as an append does).

use async_trait::async_trait;
use serde_json::Value;
use sqlx::types::Json;
use sqlx::{Executor, FromRow};
use uuid::Uuid;

use super::{Backend, Bind, SqlStore};
use crate::engine::{Rules, Timestamp};
use crate::store::accounts::{NewAccountEvent, wake_key};
use crate::store::challenges::{
    ChallengeAnswer, ChallengeCaps, ChallengeRecord, ChallengeStore, SeatedGame,
};
use crate::store::{RawJson, StoreError};

/// The columns of a challenge, as [`ChallengeRow`] reads them.
const CHALLENGE_COLUMNS: &str = "id, author, holes, rules, rated, bots, status, version, game_id, \
    created_at, expires_at";

#[derive(FromRow)]
pub struct ChallengeRow {
    id: Uuid,
    author: String,
    holes: i32,
    rules: Json<Rules>,
    rated: bool,
    bots: Json<Vec<String>>,
    status: String,
    version: i32,
    game_id: Option<Uuid>,
    created_at: String,
    expires_at: String,
}

impl ChallengeRow {
    fn record(self, invitees: Vec<(String, Option<String>)>) -> ChallengeRecord {
        ChallengeRecord {
            id: self.id,
            author: self.author,
            invitees,
            holes: self.holes,
            rules: self.rules.0,
            rated: self.rated,
            bots: self.bots.0,
            status: self.status,
            version: self.version,
            game_id: self.game_id,
            created_at: self.created_at,
            expires_at: self.expires_at,
        }
    }
}

impl<DB> SqlStore<DB>
where
    DB: Backend,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'a> &'a str: Bind<DB>,
    String: Bind<DB>,
    Uuid: Bind<DB>,
    i64: Bind<DB>,
    for<'a> Json<&'a Value>: Bind<DB>,
    for<'r> (i64,): FromRow<'r, DB::Row>,
    for<'r> (String, Option<String>): FromRow<'r, DB::Row>,
{
    /// The invitees of challenge `id` and their answers, in seat order.
    async fn invitees(
        conn: &mut DB::Connection,
        id: Uuid,
    ) -> Result<Vec<(String, Option<String>)>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT account, answer FROM challenge_invitees WHERE challenge_id = $1 \
             ORDER BY position",
        )
        .bind(id)
        .fetch_all(conn)
        .await?)
    }

    /// Whether `challenge`'s author, once it is stored, holds no more open challenges than
    /// `caps` allows, counted under the lock of the author's challenges (expired ones that no
    /// sweep has marked yet do not count).
    async fn under_caps(
        conn: &mut DB::Connection,
        challenge: &ChallengeRecord,
        caps: ChallengeCaps,
    ) -> Result<bool, StoreError> {
        let author = challenge.author.as_str();
        if let Some(lock) = DB::KEY_LOCK {
            let key = format!("challenges of {author}");
            sqlx::query(lock).bind(key).execute(&mut *conn).await?;
        }
        let (open,): (i64,) = sqlx::query_as(
            "SELECT count(*) FROM challenges \
             WHERE author = $1 AND status = 'open' AND expires_at > $2",
        )
        .bind(author)
        .bind(challenge.created_at.as_str())
        .fetch_one(&mut *conn)
        .await?;
        if open >= caps.open {
            return Ok(false);
        }
        for (invitee, _) in &challenge.invitees {
            let (to_one,): (i64,) = sqlx::query_as(
                "SELECT count(*) FROM challenges AS c \
                 JOIN challenge_invitees AS i ON i.challenge_id = c.id \
                 WHERE c.author = $1 AND c.status = 'open' AND c.expires_at > $2 \
                     AND i.account = $3",
            )
            .bind(author)
            .bind(challenge.created_at.as_str())
            .bind(invitee.as_str())
            .fetch_one(&mut *conn)
            .await?;
            if to_one >= caps.open_to_one {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// After a commit: wakes this instance's streams of the accounts of `notices` and of the
    /// game created, unless the database announced them itself.
    pub(super) fn announce_all(&self, notices: &[NewAccountEvent], game: Option<&SeatedGame>) {
        let game_notices = game.map(|game| game.update.account_events.as_slice());
        for notice in notices.iter().chain(game_notices.unwrap_or_default()) {
            self.announce(wake_key(&notice.account));
        }
        if let Some(game) = game {
            self.announce(game.game.id);
        }
    }
}

#[async_trait]
impl<DB> ChallengeStore for SqlStore<DB>
where
    DB: Backend,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'a> &'a str: Bind<DB>,
    String: Bind<DB>,
    Uuid: Bind<DB>,
    Option<Uuid>: Bind<DB>,
    i64: Bind<DB>,
    i32: Bind<DB>,
    bool: Bind<DB>,
    Vec<u8>: Bind<DB>,
    Option<String>: Bind<DB>,
    Option<Json<Value>>: Bind<DB>,
    for<'a> Json<&'a Value>: Bind<DB>,
    for<'a> Json<&'a RawJson>: Bind<DB>,
    for<'a> Json<&'a Rules>: Bind<DB>,
    for<'a> Json<&'a Vec<String>>: Bind<DB>,
    for<'r> (i64,): FromRow<'r, DB::Row>,
    for<'r> (String, Option<String>): FromRow<'r, DB::Row>,
    for<'r> ChallengeRow: FromRow<'r, DB::Row>,
{
    async fn create_challenge(
        &self,
        challenge: ChallengeRecord,
        notices: Vec<NewAccountEvent>,
        game: Option<SeatedGame>,
        caps: ChallengeCaps,
    ) -> Result<bool, StoreError> {
        let mut tx = DB::begin_write(&self.pool).await?;
        if challenge.status == "open" && !Self::under_caps(&mut tx, &challenge, caps).await? {
            return Ok(false);
        }
        if let Some(seated) = &game {
            let events = seated.events.clone();
            self.write_new_game(&mut tx, &seated.game, events, &seated.update)
                .await?;
        }
        sqlx::query(
            "INSERT INTO challenges (id, author, holes, rules, rated, bots, status, version, \
                game_id, created_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        )
        .bind(challenge.id)
        .bind(challenge.author.as_str())
        .bind(challenge.holes)
        .bind(Json(&challenge.rules))
        .bind(challenge.rated)
        .bind(Json(&challenge.bots))
        .bind(challenge.status.as_str())
        .bind(challenge.version)
        .bind(challenge.game_id)
        .bind(challenge.created_at.as_str())
        .bind(challenge.expires_at.as_str())
        .execute(&mut *tx)
        .await?;
        for (position, (account, answer)) in challenge.invitees.iter().enumerate() {
            sqlx::query(
                "INSERT INTO challenge_invitees (challenge_id, position, account, answer) \
                 VALUES ($1, $2, $3, $4)",
            )
            .bind(challenge.id)
            .bind(position as i32)
            .bind(account.as_str())
            .bind(answer.clone())
            .execute(&mut *tx)
            .await?;
        }
        Self::insert_notices(&mut tx, &notices, None).await?;
        tx.commit().await?;
        self.announce_all(&notices, game.as_ref());
        Ok(true)
    }

    async fn load_challenge(&self, id: Uuid) -> Result<Option<ChallengeRecord>, StoreError> {
        let mut conn = self.pool.acquire().await?;
        let statement = format!("SELECT {CHALLENGE_COLUMNS} FROM challenges WHERE id = $1");
        let row: Option<ChallengeRow> = sqlx::query_as(sqlx::AssertSqlSafe(statement))
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?;
        match row {
            Some(row) => {
                let invitees = Self::invitees(&mut conn, id).await?;
                Ok(Some(row.record(invitees)))
            }
            None => Ok(None),
        }
    }

    async fn answer_challenge(
        &self,
        answer: ChallengeAnswer,
        notices: Vec<NewAccountEvent>,
    ) -> Result<(), StoreError> {
        let mut tx = DB::begin_write(&self.pool).await?;
        let moved = sqlx::query(
            "UPDATE challenges SET version = version + 1, status = $3 \
             WHERE id = $1 AND version = $2 AND status = 'open'",
        )
        .bind(answer.id)
        .bind(answer.expected_version)
        .bind(answer.status)
        .execute(&mut *tx)
        .await?;
        if DB::rows_affected(&moved) != 1 {
            return Err(StoreError::Conflict);
        }
        sqlx::query(
            "UPDATE challenge_invitees SET answer = $3 WHERE challenge_id = $1 AND position = $2",
        )
        .bind(answer.id)
        .bind(answer.position)
        .bind(answer.answer)
        .execute(&mut *tx)
        .await?;
        if let Some(seated) = &answer.game {
            let events = seated.events.clone();
            self.write_new_game(&mut tx, &seated.game, events, &seated.update)
                .await?;
            sqlx::query("UPDATE challenges SET game_id = $2 WHERE id = $1")
                .bind(answer.id)
                .bind(seated.game.id)
                .execute(&mut *tx)
                .await?;
        }
        Self::insert_notices(&mut tx, &notices, None).await?;
        tx.commit().await?;
        self.announce_all(&notices, answer.game.as_ref());
        Ok(())
    }

    async fn close_challenge(
        &self,
        id: Uuid,
        expected_version: i32,
        status: &'static str,
    ) -> Result<(), StoreError> {
        let closed = sqlx::query(
            "UPDATE challenges SET version = version + 1, status = $3 \
             WHERE id = $1 AND version = $2 AND status = 'open'",
        )
        .bind(id)
        .bind(expected_version)
        .bind(status)
        .execute(&self.pool)
        .await?;
        match DB::rows_affected(&closed) {
            1 => Ok(()),
            _ => Err(StoreError::Conflict),
        }
    }

    async fn open_challenges(
        &self,
        account: &str,
        limit: i64,
    ) -> Result<Vec<ChallengeRecord>, StoreError> {
        let mut conn = self.pool.acquire().await?;
        let statement = format!(
            "SELECT {CHALLENGE_COLUMNS} FROM challenges \
             WHERE status = 'open' AND (author = $1 OR id IN \
                 (SELECT challenge_id FROM challenge_invitees WHERE account = $1)) \
             ORDER BY created_at DESC, id LIMIT $2"
        );
        let rows: Vec<ChallengeRow> = sqlx::query_as(sqlx::AssertSqlSafe(statement))
            .bind(account)
            .bind(limit)
            .fetch_all(&mut *conn)
            .await?;
        let mut challenges = Vec::with_capacity(rows.len());
        for row in rows {
            let invitees = Self::invitees(&mut conn, row.id).await?;
            challenges.push(row.record(invitees));
        }
        Ok(challenges)
    }

    async fn expire_challenges(&self, now: Timestamp, limit: i64) -> Result<u64, StoreError> {
        let expired = sqlx::query(
            "UPDATE challenges SET status = 'expired', version = version + 1 \
             WHERE id IN (SELECT id FROM challenges WHERE status = 'open' AND expires_at <= $1 \
                 LIMIT $2)",
        )
        .bind(now.to_string())
        .bind(limit)
        .execute(&self.pool)
        .await?;
        Ok(DB::rows_affected(&expired))
    }
}
