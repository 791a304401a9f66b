//! The PostgreSQL backend: how it connects, starts a write, and its [`Statements`].
//!
//! An append is one statement ([`APPEND`]) that moves the game rows, in id order
//! (`UPDATE ... WHERE version = $expected`): appends to one game queue behind its row
//! lock and the loser of a race finds the version moved (`Conflict`); appends to different games
//! never wait for each other.
//! Every statement on game data names its `game_id`, so the schema distributes by it over a Citus
//! cluster (`golf-server distribute`); there each append is written on its own
//! ([`APPEND_DISTRIBUTED`], then its accounts' events), so that its game's rows are one shard's
//! work, and notifications leave from the coordinator (docs/SCALING.md).

use std::str::FromStr;

use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions, PgQueryResult, PgRow};
use sqlx::query::QueryAs;
use sqlx::{Database, FromRow, Postgres, Transaction};
use uuid::Uuid;

use super::accounts::ACCOUNT_EVENTS_TTL;
use super::notify::Changes;
use super::sql::{
    AccountStatements, Backend, Batch, Distributed, RatingStatements, SqlStore, Statements,
    WebhookStatements, due_deliveries, hooks_behind,
};
use super::{IDEMPOTENCY_TTL, PoolOptions, StoreError};

/// A pool of PostgreSQL connections.
pub type PgStore = SqlStore<Postgres>;

impl PgStore {
    /// Connects (failing within `acquire_timeout` if the server does not answer) and migrates.
    ///
    /// Every connection of the pool carries `statement_timeout` and `lock_timeout` (see
    /// [`PoolOptions::statement_timeout`]), so no call waits unbounded for a lock or a slow server.
    pub async fn connect(url: &str, options: &PoolOptions) -> Result<Self, StoreError> {
        let server = PgConnectOptions::from_str(url)?;
        // A pool bounds opening its first connection by acquire_timeout, as every acquire.
        let pool_options = || PgPoolOptions::new().acquire_timeout(options.acquire_timeout);
        // A migration may rightly run longer than a request's statement, or wait for another
        // instance's migration lock: it runs on a connection of its own, without the timeouts.
        let migrating = pool_options()
            .max_connections(1)
            .connect_with(server.clone())
            .await?;
        let migrated = sqlx::migrate!("migrations/postgres").run(&migrating).await;
        let distributed = match migrated {
            Ok(()) => distributed(&migrating).await,
            Err(error) => Err(error.into()),
        };
        migrating.close().await;
        let distributed = distributed?;
        let changes = if options.listen {
            Changes::listening(&server)
        } else {
            Changes::in_process()
        };
        let statement_ms = options.statement_timeout.as_millis().max(1);
        let lock_ms = statement_ms.div_ceil(2);
        let mut settings = server.options([
            ("statement_timeout", statement_ms),
            ("lock_timeout", lock_ms),
        ]);
        let distributed = distributed.then(|| {
            settings = settings
                .clone()
                .options([("citus.propagate_set_commands", "local")]);
            Distributed {
                begin_append: format!("BEGIN; SET LOCAL lock_timeout = {lock_ms}"),
            }
        });
        let pool = pool_options()
            .max_connections(options.max_connections)
            .connect_with(settings)
            .await?;
        Ok(SqlStore {
            pool,
            changes,
            distributed,
        })
    }
}

/// Whether the game tables are distributed over a Citus cluster (`golf-server distribute`).
async fn distributed(pool: &PgPool) -> Result<bool, StoreError> {
    let citus: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')")
            .fetch_one(pool)
            .await?;
    if !citus {
        return Ok(false);
    }
    Ok(sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM citus_tables \
                        WHERE table_name = 'games'::regclass AND citus_table_type = 'distributed')",
    )
    .fetch_one(pool)
    .await?)
}

/// The parts of [`APPEND`] that write the games' rows and those beside them; `$moved` and
/// `$expired` narrow the rows that the update of `games` and the deletion of expired responses
/// read (on a distributed database, to the one game's shard).
macro_rules! append_games {
    ($moved:literal, $expired:literal) => {
        concat!("\
    WITH head AS ( \
        UPDATE games SET version = g.version, head_hash = decode(g.head_hash, 'hex'), \
            status = g.status, projection = ($7::text[])[g.projection]::json, \
            players = players + g.joined, deadline_at = g.deadline_at, \
            last_entry_seq = g.last_entry_seq, last_entry_at = g.last_entry_at \
        FROM unnest(ARRAY(SELECT json_array_elements($1::json))) AS input (row), \
            json_to_record(input.row) AS g (id uuid, expected bigint, version bigint, \
                head_hash text, status text, projection integer, joined integer, \
                deadline_at timestamptz, last_entry_seq bigint, last_entry_at text) \
        WHERE games.id = g.id AND games.version = g.expected AND games.status <> 'cancelled' ",
        $moved, " \
        RETURNING games.id, games.version), \
    appended AS ( \
        INSERT INTO events (game_id, seq, type, data, at, salt, hash) \
        SELECT e.game_id, e.seq, e.type, e.data, e.at, decode(e.salt, 'hex'), \
            decode(e.hash, 'hex') \
        FROM json_to_recordset($2::json) AS e (game_id uuid, seq bigint, type text, data jsonb, \
            at text, salt text, hash text) \
        WHERE e.game_id IN (SELECT id FROM head)), \
    seated AS ( \
        INSERT INTO seats (game_id, seat, name, bot, client_seed, token_hash, account) \
        SELECT s.game_id, s.seat, s.name, s.bot, s.client_seed, decode(s.token_hash, 'hex'), \
            s.account \
        FROM json_to_recordset($3::json) AS s (game_id uuid, seat integer, name text, bot text, \
            client_seed text, token_hash text, account text) \
        WHERE s.game_id IN (SELECT id FROM head)), \
    expired AS ( \
        DELETE FROM move_idempotency m \
        USING unnest(ARRAY(SELECT json_array_elements($4::json))) AS input (row), \
            json_to_record(input.row) AS r (game_id uuid, seat integer, key text) \
        WHERE m.game_id = r.game_id AND m.seat = r.seat AND m.key = r.key \
            AND m.created_at <= now() - make_interval(secs => $6) \
            AND r.game_id IN (SELECT id FROM head) ", $expired, " \
        RETURNING 1), \
    answered AS ( \
        INSERT INTO move_idempotency (game_id, seat, key, fingerprint, status, body) \
        SELECT r.game_id, r.seat, r.key, r.fingerprint, r.status, r.body \
        FROM json_to_recordset($4::json) AS r (game_id uuid, seat integer, key text, \
            fingerprint text, status integer, body jsonb) \
        WHERE r.game_id IN (SELECT id FROM head) AND (SELECT count(*) FROM expired) >= 0), \
    kept AS ( \
        INSERT INTO snapshots (game_id, seq, state) \
        SELECT s.game_id, s.seq, ($7::text[])[s.state]::json \
        FROM json_to_recordset($5::json) AS s (game_id uuid, seq bigint, state integer) \
        WHERE s.game_id IN (SELECT id FROM head)) ")
    };
}

/// The part of [`APPEND`] that writes where the games stand for their accounts (`$8`).
macro_rules! list_account_games {
    () => {
        ", \
    listed AS ( \
        INSERT INTO account_games (game_id, account, seat, status, updated_at, won) \
        SELECT a.game_id, a.account, a.seat, a.status, a.updated_at, a.won \
        FROM json_to_recordset($8::json) AS a (game_id uuid, account text, seat integer, \
            status text, updated_at text, won boolean) \
        WHERE a.game_id IN (SELECT id FROM head) \
        ON CONFLICT (game_id, account) DO UPDATE SET status = excluded.status, \
            updated_at = excluded.updated_at, won = excluded.won) "
    };
}

/// The notifications of the games written, and the statement's result: their ids.
macro_rules! notify_games {
    () => {
        "\
    SELECT id FROM head, \
        LATERAL (SELECT pg_notify('golf_events', id::text || ' ' || version)) AS notified "
    };
}

/// Appends to distinct games in one statement, reading the named parts of a [`Batch`] (`$1`
/// games, `$2` events, `$3` seats, `$4` responses, `$5` snapshots; `$6` the idempotency ttl in
/// seconds; `$7` the documents, the projections and states that the parts name by their place;
/// `$8` the accounts' games, `$9` their events).
/// The accounts' events are numbered from each account's `last_event_id` (`numbered`: the row
/// lock its update takes holds a concurrent batch's numbers back until this one commits), and
/// wake the account's streams (`woken`, with the account's wake-up key). Each game's head moves
/// only if it is at its expected version and not cancelled
/// (`head`); the other parts insert only for the games whose head moved. It returns the ids of
/// the games written; the others were moved on or cancelled by another writer. A taken seat or a
/// recorded key fails the whole statement with a unique violation (`Conflict`); an expired record
/// with the same key is deleted first (`expired`, evaluated before `answered` reads its count).
/// Projections and states are read as `json`: their text is stored as written, never rebuilt.
///
/// The rows to update or delete are read through `unnest`, whose estimate (a few rows) makes the
/// planner look each game up by its key; with `json_to_recordset`'s (a hundred) it scanned the
/// whole `games` table, dead row versions included, for every batch (measured: a move cost
/// PostgreSQL half as much again).
///
/// The row locks make a concurrent append to one of these games wait for this statement's
/// commit, then find the version moved: it writes nothing. The `UPDATE` takes them in the order
/// of its plan, a nested loop over the input (the estimate of `unnest` keeps it one), and the
/// input is in game id order ([`Batch::of`]): two batches of the same games (only two instances
/// make them) lock them in the same order and never deadlock. A first pass that locked the rows
/// (`SELECT ... ORDER BY id FOR NO KEY UPDATE`) wrote and logged each game row once more and cost
/// a move more than a tenth (docs/SCALING.md). Were a plan ever to take them out of order, the
/// deadlock fails one batch (`Conflict`), which is then written one append at a time. The
/// accounts' rows are updated the same way, without a locking pass first (which cost a move with
/// accounts about a twentieth): in username order when the plan is a nested loop over `c`, in
/// the table's order when it hashes `c` (a small table); two batches that met two accounts in
/// opposite orders would deadlock, and one of them would be written again the same way.
/// `pg_notify` in the same statement costs no round trip; the notifications leave on commit,
/// each game's with the version its head reached.
const APPEND: &str = concat!(
    append_games!("", ""),
    list_account_games!(),
    ", \
    noticed AS MATERIALIZED ( \
        SELECT n.game_id, n.account, n.wake, n.ord, n.at, n.type, n.data \
        FROM json_to_recordset($9::json) AS n (game_id uuid, account text, wake text, \
            ord integer, at text, type text, data jsonb) \
        WHERE n.game_id IN (SELECT id FROM head)), \
    numbered AS ( \
        UPDATE accounts SET last_event_id = last_event_id + c.count \
        FROM (SELECT account, count(*) AS count FROM noticed GROUP BY account \
              ORDER BY account) AS c \
        WHERE accounts.username = c.account \
        RETURNING accounts.username, accounts.last_event_id - c.count AS base), \
    announced AS ( \
        INSERT INTO account_events (account, id, at, type, game_id, data) \
        SELECT n.account, b.base + row_number() OVER (PARTITION BY n.account ORDER BY n.ord), \
            n.at, n.type, n.game_id, n.data \
        FROM noticed AS n JOIN numbered AS b ON b.username = n.account), \
    woken AS MATERIALIZED ( \
        SELECT pg_notify('golf_events', wake) FROM (SELECT DISTINCT wake FROM noticed) AS w) \
",
    notify_games!(),
    " WHERE (SELECT count(*) FROM woken) >= 0"
);

/// [`APPEND`] for a batch that touches no account: its executor would still set up each
/// account part, only to find it empty (measured: a move cost PostgreSQL about a tenth more).
const APPEND_WITHOUT_ACCOUNTS: &str = concat!(append_games!("", ""), notify_games!());

/// [`APPEND`]'s game parts for the one game `$9` on a distributed database, with its accounts'
/// games (`$8`), which are distributed by game: the update and the deletion name the game, so
/// Citus runs every part on the game's shard (docs/SCALING.md has the plan). It returns the
/// game's id and version if it moved, and notifies nobody: Citus may run a statement on one
/// game wholly on its worker, whose notifications no instance hears.
const APPEND_DISTRIBUTED: &str = concat!(
    append_games!("AND games.id = $9", "AND m.game_id = $9"),
    list_account_games!(),
    " SELECT id, version FROM head"
);

/// Notifies `golf_events` of each of `$1`: it reads no table, so it runs on the coordinator,
/// whose notifications every instance's listener hears.
const NOTIFY_ON_COORDINATOR: &str =
    "SELECT pg_notify('golf_events', payload) FROM unnest($1::text[]) AS payload";

/// Takes the numbers of the `$2` events that a distributed append announces to account `$1`, on
/// the account's shard: [`APPEND`]'s `numbered` for one account. Returns the number before them.
const NUMBER_EVENTS: &str = "\
    UPDATE accounts SET last_event_id = last_event_id + $2 WHERE username = $1 \
    RETURNING last_event_id - $2";

/// Stores the events of account `$1` among a batch's account events `$2`, numbered after `$3`:
/// [`APPEND`]'s `announced` for one account (Citus sends each row to the account's shard; in
/// one statement with [`NUMBER_EVENTS`], it could not always plan it).
const STORE_EVENTS: &str = "\
    INSERT INTO account_events (account, id, at, type, game_id, data) \
    SELECT $1, $3 + row_number() OVER (ORDER BY n.ord), n.at, n.type, n.game_id, n.data \
    FROM json_to_recordset($2::json) AS n (account text, ord integer, at text, type text, \
        game_id uuid, data jsonb) \
    WHERE n.account = $1";

/// `statement` (an append) with the game parts of `batch` bound as `$1` to `$7`, as
/// [`APPEND`] and [`APPEND_DISTRIBUTED`] read them.
fn with_game_parts<'q, O>(
    statement: &'static str,
    batch: &'q Batch<'_>,
) -> QueryAs<'q, Postgres, O, <Postgres as Database>::Arguments>
where
    O: for<'r> FromRow<'r, PgRow>,
{
    sqlx::query_as(statement)
        .bind(&batch.games)
        .bind(&batch.events)
        .bind(&batch.seats)
        .bind(&batch.responses)
        .bind(&batch.snapshots)
        .bind(IDEMPOTENCY_TTL.as_secs_f64())
        .bind(&batch.documents)
}

impl Backend for Postgres {
    /// Seconds, as `make_interval(secs => $1)` takes them.
    type Ttl = f64;

    const IDEMPOTENCY_TTL: f64 = IDEMPOTENCY_TTL.as_secs_f64();

    const STATEMENTS: Statements = Statements {
        insert_game: "\
            INSERT INTO games (id, created_at, status, version, seats, holes, rules, commitment, \
                server_seed, host_token_hash, private, stacked, decks, projection, head_hash, \
                host_account, rated) \
            VALUES ($1, $2::timestamptz, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, \
                $16, $17)",
        load_game: "\
            SELECT id, \
                to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') \
                    AS created_at, \
                status, version, seats, holes, players, rules, commitment, server_seed, \
                host_token_hash, private, stacked, decks, projection, head_hash, audit_verified, \
                audit_first_bad_seq, host_account, \
                (SELECT COALESCE(json_agg(json_build_array(seat, encode(token_hash, 'hex'), \
                                                           account) ORDER BY seat), '[]'::json) \
                 FROM seats WHERE seats.game_id = games.id AND seats.game_id = $1) AS seat_tokens \
            FROM games WHERE id = $1 AND status <> 'cancelled'",
        insert_create_response: "\
            INSERT INTO create_idempotency (key, fingerprint, status, body) \
            VALUES ($2, $3, $4, $5) \
            ON CONFLICT (key) DO UPDATE \
            SET fingerprint = excluded.fingerprint, status = excluded.status, \
                body = excluded.body, created_at = excluded.created_at \
            WHERE extract(epoch FROM excluded.created_at - create_idempotency.created_at) >= $1",
        find_game_response: "\
            SELECT fingerprint, status, body FROM move_idempotency \
            WHERE game_id = $2 AND seat = $3 AND key = $4 \
                AND created_at > now() - make_interval(secs => $1)",
        find_create_response: "\
            SELECT fingerprint, status, body FROM create_idempotency \
            WHERE key = $2 AND created_at > now() - make_interval(secs => $1)",
        purge_game_responses: "\
            DELETE FROM move_idempotency WHERE (game_id, seat, key) IN \
                (SELECT game_id, seat, key FROM move_idempotency \
                 WHERE created_at <= now() - make_interval(secs => $1) LIMIT $2)",
        purge_create_responses: "\
            DELETE FROM create_idempotency WHERE key IN \
                (SELECT key FROM create_idempotency \
                 WHERE created_at <= now() - make_interval(secs => $1) LIMIT $2)",
        // ORDER BY names the table's columns: the bare `created_at` would be the text alias,
        // which no index serves (every waiting game was read and sorted for each page).
        list_waiting: "\
            SELECT id, \
                to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') \
                    AS created_at, \
                version, seats, players, projection \
            FROM games \
            WHERE status = 'waiting' AND NOT private AND NOT stacked AND players < seats \
            ORDER BY games.created_at DESC, games.id DESC LIMIT $1",
        list_waiting_after: "\
            SELECT id, \
                to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') \
                    AS created_at, \
                version, seats, players, projection \
            FROM games \
            WHERE status = 'waiting' AND NOT private AND NOT stacked AND players < seats \
                AND (created_at, id) < ($2::timestamptz, $3) \
            ORDER BY games.created_at DESC, games.id DESC LIMIT $1",
        overdue_games: "\
            SELECT id FROM games WHERE deadline_at IS NOT NULL AND deadline_at <= $1::timestamptz \
            ORDER BY deadline_at LIMIT $2",
        postpone_deadline: "\
            UPDATE games SET deadline_at = $2::timestamptz \
            WHERE id = $1 AND deadline_at <= $3::timestamptz",
        expired_waiting_games: "\
            SELECT id FROM games WHERE status = 'waiting' AND created_at <= $1::timestamptz \
            ORDER BY created_at LIMIT $2",
        cancel_game: "\
            WITH cancelled AS ( \
                UPDATE games SET status = 'cancelled' WHERE id = $1 AND status = 'waiting' \
                RETURNING id) \
            SELECT pg_notify('golf_events', id::text) FROM cancelled",
        unanalysed_games: "\
            SELECT id FROM ( \
                SELECT id, ended, row_number() OVER ( \
                    PARTITION BY host_account ORDER BY ended DESC, id) AS turn \
                FROM (SELECT id, host_account, COALESCE(last_entry_at, '') AS ended FROM games \
                      WHERE status = 'finished' AND NOT analysed ORDER BY id LIMIT 1000) AS backlog \
            ) AS unanalysed \
            ORDER BY turn, ended DESC, id LIMIT $1",
        mark_analysed: "UPDATE games SET analysed = true WHERE id = $1",
        unaudited_games: "\
            SELECT id FROM games WHERE status = 'finished' AND audit_verified IS NULL \
            ORDER BY id LIMIT $1",
    };

    const ACCOUNT_EVENTS_TTL: f64 = ACCOUNT_EVENTS_TTL.as_secs_f64();

    /// Rows another instance is enqueuing or claiming are skipped, not waited for.
    const WEBHOOK_STATEMENTS: WebhookStatements = WebhookStatements {
        hooks_behind: concat!(hooks_behind!(), " FOR UPDATE OF w SKIP LOCKED"),
        due_deliveries: concat!(due_deliveries!(), " FOR UPDATE OF d SKIP LOCKED"),
        hooks_behind_unlocked: hooks_behind!(),
        due_deliveries_unlocked: due_deliveries!(),
    };

    const ACCOUNT_STATEMENTS: AccountStatements = AccountStatements {
        list_games: "\
            SELECT game_id, seat, updated_at, version, projection FROM ( \
                SELECT * FROM ( \
                    SELECT ag.game_id, ag.seat, \
                        CASE WHEN g.last_entry_seq = g.version THEN g.last_entry_at \
                            ELSE (SELECT e.at FROM events AS e \
                                  WHERE e.game_id = g.id AND e.seq = g.version) \
                        END COLLATE \"C\" AS updated_at, g.version, g.projection \
                    FROM account_games AS ag JOIN games AS g ON g.id = ag.game_id \
                    WHERE ag.account = $1 AND ag.status <> 'finished' \
                        AND g.status <> 'cancelled' AND ($5 = '' OR ag.status = $5)) AS unfinished \
                WHERE (updated_at, game_id) < ($2, $3) \
                UNION ALL \
                SELECT * FROM ( \
                    SELECT ag.game_id, ag.seat, ag.updated_at, g.version, g.projection \
                    FROM account_games AS ag JOIN games AS g ON g.id = ag.game_id \
                    WHERE ag.account = $1 AND ag.status = 'finished' AND $5 IN ('', 'finished') \
                        AND (ag.updated_at, ag.game_id) < ($2, $3) \
                    ORDER BY ag.updated_at DESC, ag.game_id DESC LIMIT $4) AS finished) AS listed \
            ORDER BY updated_at DESC, game_id DESC LIMIT $4",
        purge_events: "\
            DELETE FROM account_events WHERE (account, id) IN \
                (SELECT account, id FROM account_events \
                 WHERE created_at <= now() - make_interval(secs => $1) LIMIT $2)",
        insert: "\
            INSERT INTO accounts (username, display_name, token_hash, created_at) \
            VALUES ($1, $2, $3, $4::timestamptz)",
        by_token: "\
            SELECT username, display_name, token_hash, \
                to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') \
                    AS created_at, \
                rating_value, rating_deviation, rated_games \
            FROM accounts WHERE token_hash = $1",
        by_name: "\
            SELECT username, display_name, token_hash, \
                to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') \
                    AS created_at, \
                rating_value, rating_deviation, rated_games \
            FROM accounts WHERE username = $1",
    };

    const RATING_STATEMENTS: RatingStatements = RatingStatements {
        // The key is arbitrary, and used by no other lock of this service.
        lock: Some("SELECT pg_advisory_xact_lock(7061729)"),
        due_game: "\
            SELECT g.id, g.projection, e.at FROM games AS g \
            JOIN events AS e ON e.game_id = g.id AND e.seq = g.version \
            WHERE g.rated AND g.status = 'finished' AND NOT g.ratings_applied \
            ORDER BY e.at COLLATE \"C\", g.id LIMIT 1",
        rating_of: "\
            SELECT rating_value, rating_deviation, rated_games FROM accounts \
            WHERE username = $1 FOR NO KEY UPDATE",
        leaderboard: "\
            SELECT username, display_name, rating_value, rating_deviation, rated_games \
            FROM accounts WHERE NOT rating_provisional \
            ORDER BY rating_value DESC, username LIMIT $1",
        leaderboard_after: "\
            SELECT username, display_name, rating_value, rating_deviation, rated_games \
            FROM accounts WHERE NOT rating_provisional AND rating_value <= $2 \
                AND (rating_value < $2 OR username > $3) \
            ORDER BY rating_value DESC, username LIMIT $1",
    };

    /// Appends and cancellations `NOTIFY golf_events` (see [`Changes::listening`]).
    // The class "golf" (0x676f6c66) keeps these locks apart from any other advisory lock.
    const KEY_LOCK: Option<&'static str> =
        Some("SELECT pg_advisory_xact_lock(1735355494, hashtext($1))");

    const NOTIFIES_ON_COMMIT: bool = true;

    /// Two: while one batch waits for its commit, the next one runs on the other core.
    const CONCURRENT_BATCHES: usize = 2;

    /// A plain transaction.
    async fn begin_write(pool: &PgPool) -> Result<Transaction<'static, Postgres>, sqlx::Error> {
        pool.begin().await
    }

    /// One statement (see [`APPEND`] and [`APPEND_WITHOUT_ACCOUNTS`]).
    async fn write_batch(
        conn: &mut PgConnection,
        batch: &Batch<'_>,
    ) -> Result<Vec<Uuid>, StoreError> {
        let touches_accounts = batch.touches_accounts();
        let statement = if touches_accounts {
            APPEND
        } else {
            APPEND_WITHOUT_ACCOUNTS
        };
        let query = with_game_parts::<(Uuid,)>(statement, batch);
        let query = if touches_accounts {
            query.bind(&batch.account_games).bind(&batch.account_events)
        } else {
            query
        };
        let moved = query.fetch_all(conn).await?;
        Ok(moved.into_iter().map(|(id,)| id).collect())
    }

    /// The game's statement ([`APPEND_DISTRIBUTED`]), then one for each account that hears of
    /// it ([`NUMBER_EVENTS`] and [`STORE_EVENTS`], in name order, as [`APPEND`] takes their
    /// rows), then the game's and the accounts' notifications ([`NOTIFY_ON_COORDINATOR`]).
    async fn write_distributed(
        conn: &mut PgConnection,
        batch: &Batch<'_>,
        game_id: Uuid,
    ) -> Result<Vec<Uuid>, StoreError> {
        let moved: Option<(Uuid, i64)> = with_game_parts(APPEND_DISTRIBUTED, batch)
            .bind(&batch.account_games)
            .bind(game_id)
            .fetch_optional(&mut *conn)
            .await?;
        let Some((id, version)) = moved else {
            return Ok(Vec::new());
        };
        for noticed in &batch.noticed {
            let base: Option<i64> = sqlx::query_scalar(NUMBER_EVENTS)
                .bind(noticed.account)
                .bind(noticed.events)
                .fetch_optional(&mut *conn)
                .await?;
            // An account that does not exist hears nothing, as in APPEND's join.
            let Some(base) = base else { continue };
            sqlx::query(STORE_EVENTS)
                .bind(noticed.account)
                .bind(&batch.account_events)
                .bind(base)
                .execute(&mut *conn)
                .await?;
        }
        let payloads: Vec<String> = std::iter::once(format!("{id} {version}"))
            .chain(batch.noticed.iter().map(|noticed| noticed.wake.to_string()))
            .collect();
        sqlx::query(NOTIFY_ON_COORDINATOR)
            .bind(payloads)
            .execute(&mut *conn)
            .await?;
        Ok(vec![id])
    }

    /// [`Backend::write_distributed`] in a transaction of its own.
    async fn append_distributed(
        pool: &PgPool,
        batch: &Batch<'_>,
        game_id: Uuid,
        begin: &str,
    ) -> Result<Vec<Uuid>, StoreError> {
        let mut transaction = pool
            .begin_with(sqlx::AssertSqlSafe(begin.to_owned()))
            .await?;
        let moved = Self::write_distributed(&mut transaction, batch, game_id).await?;
        transaction.commit().await?;
        Ok(moved)
    }

    /// The statement outside a transaction: one round trip and one commit for all of them.
    async fn append_batch(pool: &PgPool, batch: &Batch<'_>) -> Result<Vec<Uuid>, StoreError> {
        Self::write_batch(&mut *pool.acquire().await?, batch).await
    }

    /// One array parameter: one prepared statement whatever the number of games.
    async fn game_versions(pool: &PgPool, ids: &[Uuid]) -> Result<Vec<(Uuid, i64)>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT id, version FROM games WHERE id = ANY($1) AND status <> 'cancelled'",
        )
        .bind(ids)
        .fetch_all(pool)
        .await?)
    }

    fn rows_affected(result: &PgQueryResult) -> u64 {
        result.rows_affected()
    }
}
