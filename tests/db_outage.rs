//! A database outage under load: a throwaway PostgreSQL cluster is stopped at once while games
//! are played and followed live, then started again. Meanwhile every request is answered 503
//! problem+json within the configured acquire timeout (none hangs), `/readyz` says not ready,
//! and open streams send keep-alive comments and nothing that is not a log entry; once the
//! database is back the service recovers by itself, with no restart, and every game is played
//! to its end.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::cluster::Cluster;
use common::load::{self, Outcome, SharedRecord};
use common::process::ServerProcess;
use common::sse::{Followed, follow};
use common::{Backend, TestApp, TestDatabase};
use golf_server::service::games::live::KEEP_ALIVE;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Games played at once.
const GAMES: usize = 6;

/// How long a request waits for a database connection (`GOLF_DB_ACQUIRE_TIMEOUT_MS`).
const ACQUIRE_TIMEOUT: Duration = Duration::from_millis(1000);

/// What a request may take beyond the acquire timeout on a busy machine before it counts as
/// hung.
const MARGIN: Duration = Duration::from_secs(3);

/// How long the test waits for something that should come within seconds.
const PROMPT: Duration = Duration::from_secs(20);

/// Polls `path` until it answers `status`; returns how long that took. Every answer must come
/// within the acquire timeout and the margin.
async fn wait_for_status(app: &TestApp, path: &str, status: u16) -> Duration {
    let started = Instant::now();
    loop {
        let sent = Instant::now();
        let response = app.get(path).await;
        assert!(
            sent.elapsed() <= ACQUIRE_TIMEOUT + MARGIN,
            "{path} took {:?}",
            sent.elapsed()
        );
        if response.status() == status {
            if status == 503 {
                common::contract::problem(response, 503, "unavailable").await;
            }
            return started.elapsed();
        }
        assert!(
            started.elapsed() < PROMPT,
            "{path} did not answer {status} within {PROMPT:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until `condition` holds, checking every 50 ms, for at most [`PROMPT`].
async fn wait_until(what: &str, within: Duration, condition: impl Fn() -> bool) -> Duration {
    let started = Instant::now();
    while !condition() {
        assert!(started.elapsed() < within, "{what} within {within:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    started.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_outage_is_503_at_once_and_the_service_recovers_by_itself() {
    let Some(cluster) = tokio::task::spawn_blocking(Cluster::start).await.unwrap() else {
        return;
    };
    let cluster = Arc::new(cluster);
    let database = TestDatabase::external(Backend::Postgres, cluster.url());
    let acquire_ms = ACQUIRE_TIMEOUT.as_millis().to_string();
    let server = ServerProcess::start(
        &database.url,
        &[
            ("GOLF_DB_ACQUIRE_TIMEOUT_MS", &acquire_ms),
            ("GOLF_DB_STATEMENT_TIMEOUT_MS", "2000"),
        ],
    );
    let app = server.app(&database);
    let games = load::start_games(&app, GAMES, 3).await;

    // The first two games followed live by their seat 0, from their first entry.
    let stop_following = CancellationToken::new();
    let mut followers = Vec::new();
    for game in &games[..2] {
        let followed = Arc::new(Mutex::new(Followed::default()));
        let task = tokio::spawn(follow(
            app.address.clone(),
            game.id.clone(),
            game.seats[0].token.clone(),
            Arc::clone(&followed),
            stop_following.clone(),
        ));
        followers.push((game.id.clone(), followed, task));
    }
    let record = SharedRecord::default();
    let mut players = load::play_all(&app, &games, &record, &CancellationToken::new());
    load::wait_for_acks(&record, 40, PROMPT).await;

    let stopping = Instant::now();
    let stopper = Arc::clone(&cluster);
    tokio::task::spawn_blocking(move || stopper.stop_immediately())
        .await
        .unwrap();
    let down = Instant::now();
    let acked_before = record.lock().unwrap().acked.len();
    let not_ready_after = wait_for_status(&app, "/readyz", 503).await;
    // A stream opened now cannot read its game: it is refused at once, not left hanging.
    let game = &games[GAMES - 1];
    let path = format!("/v1/games/{}/stream", game.id);
    let sent = Instant::now();
    let refused = app
        .send(
            reqwest::Method::GET,
            &path,
            None,
            Some(&game.seats[0].token),
        )
        .await;
    let stream_refused_in = sent.elapsed();
    assert!(
        stream_refused_in <= ACQUIRE_TIMEOUT + MARGIN,
        "{stream_refused_in:?}"
    );
    common::contract::problem(refused, 503, "unavailable").await;
    // The outage lasts until every stream has sent two keep-alive comments during it (they come
    // every 15 s): after the first, a stream reads its game again, and that read fails, so the
    // second shows that a stream whose reads fail is not left silent.
    let comments_before: Vec<usize> = followers
        .iter()
        .map(|(_, followed, _)| followed.lock().unwrap().comments)
        .collect();
    wait_until(
        "two keep-alives on every stream during the outage",
        2 * KEEP_ALIVE + PROMPT,
        || {
            followers
                .iter()
                .zip(&comments_before)
                .all(|((_, followed, _), before)| followed.lock().unwrap().comments >= before + 2)
        },
    )
    .await;
    // A move whose commit came before the stop may be answered after it, on a loaded machine;
    // no request sent once the database was away is answered with a success.
    let succeeded_while_away: Vec<_> = record
        .lock()
        .unwrap()
        .answers
        .iter()
        .filter(|answer| answer.sent >= down && answer.status.is_some_and(|status| status < 300))
        .cloned()
        .collect();
    assert!(
        succeeded_while_away.is_empty(),
        "no request succeeds while the database is away: {succeeded_while_away:?}"
    );

    let acked_at_restart = record.lock().unwrap().acked.len();
    let starting = Instant::now();
    let starter = Arc::clone(&cluster);
    tokio::task::spawn_blocking(move || starter.start_again())
        .await
        .unwrap();
    let back = Instant::now();
    let ready_after = wait_for_status(&app, "/readyz", 200).await;
    let first_move_after = wait_until(
        "a move acknowledged once the database is back",
        PROMPT,
        || record.lock().unwrap().acked.len() > acked_at_restart,
    )
    .await;
    let finishing = async {
        while let Some(ended) = players.join_next().await {
            let (id, outcome) = ended.expect("a player task");
            assert_eq!(outcome, Outcome::Finished, "{id}");
        }
    };
    tokio::time::timeout(Duration::from_secs(40), finishing)
        .await
        .unwrap_or_else(|_| panic!("the games did not finish:\n{}", server.output()));

    // Every stream catches up with its game's complete log, entry for entry.
    let mut streamed = 0;
    for (id, followed, _) in &followers {
        let log = app.events(id, None, 0).await;
        let last = log.len() as i64;
        let caught_up = wait_until("the stream catching up", PROMPT, || {
            followed.lock().unwrap().last() == last
        });
        caught_up.await;
        // What the stream showed while the game ran was redacted; the hashes are those of the
        // complete entries all the same.
        let key = |entry: &Value| {
            (
                entry["seq"].clone(),
                entry["type"].clone(),
                entry["hash"].clone(),
            )
        };
        let streamed_keys: Vec<_> = followed
            .lock()
            .unwrap()
            .entries
            .iter()
            .map(|(_, entry)| key(entry))
            .collect();
        assert_eq!(
            streamed_keys,
            log.iter().map(key).collect::<Vec<_>>(),
            "{id}"
        );
        streamed += last;
    }
    stop_following.cancel();
    let mut comments = 0;
    let mut ends = 0;
    for (id, followed, task) in followers {
        task.await.expect("a follower");
        let followed = followed.lock().unwrap();
        assert!(
            followed.refused.iter().all(|status| *status == 503),
            "{id}: {:?}",
            followed.refused
        );
        comments += followed.comments;
        ends += followed.ends;
    }

    let record = std::mem::take(&mut *record.lock().unwrap());
    let hung: Vec<_> = record
        .answers
        .iter()
        .filter(|answer| answer.status.is_none() || answer.took > ACQUIRE_TIMEOUT + MARGIN)
        .collect();
    assert!(hung.is_empty(), "requests that hung: {hung:?}");
    for answer in &record.answers {
        let status = answer.status.unwrap();
        assert!(
            status < 500 || status == 503,
            "a {status} is not an outage's answer: {answer:?}"
        );
        if status == 503 {
            assert_eq!(
                answer.content_type.as_deref(),
                Some("application/problem+json"),
                "{answer:?}"
            );
            assert_eq!(answer.code.as_deref(), Some("unavailable"), "{answer:?}");
        }
    }
    let during: Vec<_> = record
        .answers
        .iter()
        .filter(|answer| answer.sent >= down && answer.sent + answer.took <= starting)
        .collect();
    assert!(
        !during.is_empty(),
        "the players kept sending during the outage"
    );
    assert!(
        during.iter().all(|answer| answer.status == Some(503)),
        "only 503 while the database is away"
    );
    let slowest = during.iter().map(|answer| answer.took).max().unwrap();
    for game in &games {
        let log = app.events(&game.id, None, 0).await;
        for mv in record.acked.iter().filter(|mv| mv.game == game.id) {
            assert_eq!(load::times_logged(&log, mv), 1, "{mv:?}");
        }
    }
    println!(
        "database stopped (pg_ctl stop -m immediate, {:?}) after {acked_before} moves \
         acknowledged; /readyz 503 {not_ready_after:?} after; {} requests during the {:?} \
         outage, all 503 unavailable, the slowest in {slowest:?} (acquire timeout \
         {ACQUIRE_TIMEOUT:?}), a new stream refused 503 in {stream_refused_in:?}; 0 hung of {} requests in all; streams: {comments} keep-alive \
         comments, {ends} ends, nothing else but {streamed} entries in order; database started \
         again in {:?}, then /readyz 200 after {ready_after:?} and the first move after \
         {first_move_after:?}, with no restart; all {GAMES} games finished, {} moves \
         acknowledged, each logged once",
        down - stopping,
        during.len(),
        starting - down,
        record.answers.len(),
        back - starting,
        record.acked.len(),
    );
}
