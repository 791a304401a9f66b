//! The four ways golf-loadgen plays (`--mode`), and `--resume`: each is a worker that one task
//! runs per concurrent game.

use std::collections::VecDeque;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use reqwest::StatusCode;
use serde_json::Value;
use tokio::sync::{Barrier, watch};
use tokio::task::JoinHandle;

use crate::client::{Answer, Client, Game};
use crate::deliveries::Deliveries;
use crate::picker::{Action, choose, next_action};

/// A game given up after this many refusals in a row (answers that are neither a success nor a
/// conflict reloaded): the server and golf-loadgen disagree about it.
const MAX_REFUSALS: u32 = 20;

/// How long a seat in players mode waits for the stream before it reads its view anyway.
const POLL_EVERY: Duration = Duration::from_secs(1);

/// The games a run creates: their shape, and how many are left to start (`--total-games`).
pub struct Plan {
    pub seats: u8,
    pub holes: u8,
    /// Views mode reads views of games in this hole.
    pub view_hole: u8,
    pub left: Option<AtomicU64>,
    /// Players mode: milliseconds a seat thinks before each move, from and to.
    pub think_ms: Option<(u64, u64)>,
}

impl Plan {
    /// Whether another game may be started (and if counted, counts it).
    fn take(&self) -> bool {
        self.left.as_ref().is_none_or(|left| {
            left.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
        })
    }
}

/// How a driven game ended.
enum Outcome {
    Finished,
    /// The view reached what was asked for.
    Reached,
    /// The run stopped, or the server refused too often.
    Stopped,
}

/// Moves mode: creates games one after another and plays each to its end, all seats by this task.
pub async fn moves(client: Arc<Client>, plan: Arc<Plan>, accounts: Arc<[String]>) {
    while !client.stopped() && plan.take() {
        let Some(game) = client.set_up(plan.seats, plan.holes, &accounts).await else {
            pause(&client).await;
            continue;
        };
        if let Some(view) = first_view(&client, &game).await {
            drive(&client, &game, view, |_| false).await;
        }
    }
}

/// Resume: plays the games of a `--games-file` to their ends.
pub async fn resume(client: Arc<Client>, games: Arc<Mutex<VecDeque<Game>>>) {
    loop {
        let next = games.lock().expect("games lock").pop_front();
        let Some(game) = next else { return };
        if let Some(view) = first_view(&client, &game).await {
            drive(&client, &game, view, |_| false).await;
        }
        if client.stopped() {
            return;
        }
    }
}

/// Views mode: sets a game up, plays it into hole `--view-hole` past its initial reveal, waits
/// for every worker to be there, then reads its seats' views in turn until the run stops.
pub async fn views(
    client: Arc<Client>,
    plan: Arc<Plan>,
    accounts: Arc<[String]>,
    ready: Arc<Barrier>,
) {
    let mut game = None;
    if let Some(set_up) = client.set_up(plan.seats, plan.holes, &accounts).await
        && let Some(view) = first_view(&client, &set_up).await
    {
        let hole = u64::from(plan.view_hole);
        let in_hole = |view: &Value| {
            view["stage"] != "reveal" && view["hole"].as_u64().is_some_and(|at| at >= hole)
        };
        if let Outcome::Reached = drive(&client, &set_up, view, in_hole).await {
            game = Some(set_up);
        }
    }
    if ready.wait().await.is_leader() {
        client.stats.start_measuring();
    }
    let Some(game) = game else { return };
    while !client.stopped() {
        for seat in 0..game.tokens.len() {
            if client.view(&game, seat, None).await.is_none() {
                return;
            }
        }
    }
}

/// Players mode: creates games one after another; each seat of a game is a client of its own
/// that learns its turn from the game's stream and plays from its `legal_moves`.
pub async fn players(client: Arc<Client>, plan: Arc<Plan>, accounts: Arc<[String]>) {
    // A player with an account follows its events (a phone's notifications) for the whole run,
    // whatever game it is in.
    let followers: Vec<_> = accounts
        .iter()
        .map(|token| tokio::spawn(follow_account(client.clone(), token.clone())))
        .collect();
    play_games(&client, &plan, &accounts).await;
    followers.iter().for_each(JoinHandle::abort);
}

/// Players mode's games, one after another.
async fn play_games(client: &Arc<Client>, plan: &Plan, accounts: &[String]) {
    while !client.stopped() && plan.take() {
        let Some(game) = client.set_up(plan.seats, plan.holes, accounts).await else {
            pause(client).await;
            continue;
        };
        let game = Arc::new(game);
        let deliveries = Arc::new(Deliveries::default());
        let seats: Vec<_> = (0..game.tokens.len())
            .map(|seat| {
                let seat = Seat {
                    client: client.clone(),
                    game: game.clone(),
                    deliveries: deliveries.clone(),
                    think_ms: plan.think_ms,
                    seat,
                };
                tokio::spawn(seat.play())
            })
            .collect();
        let mut finished = true;
        for seat in seats {
            finished &= seat.await.unwrap_or(false);
        }
        if finished {
            client.stats.game_finished(&game.game);
        }
    }
}

/// Seat 0's view of a game just set up or resumed.
async fn first_view(client: &Client, game: &Game) -> Option<Value> {
    for _ in 0..MAX_REFUSALS {
        match client.view(game, 0, None).await? {
            Answer::Ok(view) => return Some(view),
            Answer::NotModified | Answer::Refused(_) => pause(client).await,
        }
    }
    client.stats.game_abandoned();
    None
}

/// Plays every seat of `game` from `view` until it is finished or `until` holds for a view: one
/// request per move, each chosen from the answer to the one before.
async fn drive(
    client: &Client,
    game: &Game,
    mut view: Value,
    until: impl Fn(&Value) -> bool,
) -> Outcome {
    let mut turn = 0u64;
    let mut refusals = 0;
    loop {
        if until(&view) {
            return Outcome::Reached;
        }
        let seat = match act(client, game, &view, turn).await {
            Step::Moved(answer) => {
                view = answer;
                turn += 1;
                refusals = 0;
                continue;
            }
            Step::Reread { seat, refused } => {
                refusals += u32::from(refused);
                seat
            }
            Step::Over(outcome) => return outcome,
        };
        match client.view(game, seat, None).await {
            Some(Answer::Ok(answer)) => view = answer,
            Some(Answer::NotModified | Answer::Refused(_)) => refusals += 1,
            None => return Outcome::Stopped,
        }
        if refusals > MAX_REFUSALS {
            give_up(client, game, seat);
            return Outcome::Stopped;
        }
    }
}

/// What one action taken from a view came to.
enum Step {
    /// A move was acknowledged: its answer is the new view.
    Moved(Value),
    /// The seat's view is to be read again; `refused` when the action counts toward giving the
    /// game up.
    Reread { seat: usize, refused: bool },
    /// Playing ends here.
    Over(Outcome),
}

/// Takes the next action of a driven game: the move `view` calls for, the view of a seat it
/// lacks, or a wait for the game to move on.
async fn act(client: &Client, game: &Game, view: &Value, turn: u64) -> Step {
    match next_action(view, turn) {
        Action::Finished => {
            client.stats.game_finished(&game.game);
            Step::Over(Outcome::Finished)
        }
        Action::Move { seat, body } => {
            let version = view["version"].as_i64();
            let hole = view["hole"].as_u64();
            match client.play(game, seat, &body, version, hole).await {
                Some(Answer::Ok(answer)) => Step::Moved(answer),
                Some(Answer::Refused(status)) => {
                    if is_conflict(status) {
                        client.stats.conflict();
                    }
                    Step::Reread {
                        seat,
                        refused: true,
                    }
                }
                Some(Answer::NotModified) | None => Step::Over(Outcome::Stopped),
            }
        }
        Action::NeedView(seat) => Step::Reread {
            seat,
            refused: false,
        },
        Action::Wait => {
            pause(client).await;
            Step::Reread {
                seat: 0,
                refused: true,
            }
        }
    }
}

/// One seat of players mode, a client of its own.
struct Seat {
    client: Arc<Client>,
    game: Arc<Game>,
    deliveries: Arc<Deliveries>,
    think_ms: Option<(u64, u64)>,
    seat: usize,
}

impl Seat {
    /// Plays from its own view whenever it lists legal moves, else waits for the stream to show
    /// a newer entry (or [`POLL_EVERY`]) and reads its view again with `If-None-Match`. True when
    /// it saw the game finished.
    async fn play(self) -> bool {
        let this = Arc::new(self);
        let (newest, mut seen) = watch::channel(0i64);
        let follower = tokio::spawn(this.clone().follow(newest));
        let finished = this.run(&mut seen).await;
        follower.abort();
        finished
    }

    async fn run(&self, seen: &mut watch::Receiver<i64>) -> bool {
        let (client, game, seat) = (&*self.client, &*self.game, self.seat);
        let Some(mut view) = first_view_of(client, game, seat).await else {
            return false;
        };
        let mut turn = seat as u64;
        let mut refusals = 0;
        loop {
            if view["status"] == "finished" {
                return true;
            }
            let version = view["version"].as_i64().unwrap_or(0);
            match self.play_or_wait(&view, turn, seen).await {
                Step::Moved(answer) => {
                    view = answer;
                    turn += 1;
                    refusals = 0;
                    continue;
                }
                Step::Reread { refused, .. } => refusals += u32::from(refused),
                Step::Over(_) => return false,
            }
            match client.view(game, seat, Some(version)).await {
                Some(Answer::Ok(answer)) => view = answer,
                Some(Answer::NotModified) => {}
                Some(Answer::Refused(_)) => refusals += 1,
                None => return false,
            }
            if refusals > MAX_REFUSALS {
                give_up(client, game, seat);
                return false;
            }
        }
    }

    /// The seat's action: one of the legal moves its view lists, after its think time, else a
    /// wait for the stream to show an entry newer than the view (or [`POLL_EVERY`]). A conflict
    /// is no refusal: the seat's view was merely behind.
    async fn play_or_wait(&self, view: &Value, turn: u64, seen: &mut watch::Receiver<i64>) -> Step {
        let (client, game, seat) = (&*self.client, &*self.game, self.seat);
        let version = view["version"].as_i64().unwrap_or(0);
        let Some(legal) = view["legal_moves"]
            .as_array()
            .filter(|legal| !legal.is_empty())
        else {
            tokio::select! {
                _ = tokio::time::timeout(POLL_EVERY, seen.wait_for(|&seq| seq > version)) => {}
                () = client.stop.cancelled() => return Step::Over(Outcome::Stopped),
            }
            return Step::Reread {
                seat,
                refused: false,
            };
        };
        if let Some(think) = self.think_time(turn) {
            tokio::select! {
                () = tokio::time::sleep(think) => {}
                () = client.stop.cancelled() => return Step::Over(Outcome::Stopped),
            }
        }
        let body = choose(view, seat, legal, turn);
        let hole = view["hole"].as_u64();
        // Every seat reveals at once: the others' reveals move the version under this seat's
        // view without changing what it may reveal, so its reveal expects no version (with one,
        // the slower seat got 412 and sent it again).
        let expected = (view["stage"] != "reveal").then_some(version);
        match client.play(game, seat, &body, expected, hole).await {
            Some(Answer::Ok(answer)) => {
                let seq = answer["version"].as_i64().unwrap_or(0);
                for lag in self.deliveries.acked(seq, seat) {
                    client.stats.delivered(lag);
                }
                Step::Moved(answer)
            }
            Some(Answer::Refused(status)) => {
                let conflict = is_conflict(status);
                if conflict {
                    client.stats.conflict();
                }
                Step::Reread {
                    seat,
                    refused: !conflict,
                }
            }
            Some(Answer::NotModified) | None => Step::Over(Outcome::Stopped),
        }
    }

    /// How long the seat thinks before its move `turn`: within `--think-ms`, the same for the
    /// same game, seat and move in every run.
    fn think_time(&self, turn: u64) -> Option<Duration> {
        let (min, max) = self.think_ms?;
        let mut hasher = DefaultHasher::new();
        (&self.game.game, self.seat, turn).hash(&mut hasher);
        Some(Duration::from_millis(
            min + hasher.finish() % (max - min + 1),
        ))
    }

    /// Follows the seat's stream, publishing the seq of each entry it carries and measuring the
    /// delivery of the other seats' moves; reconnects after the entry it saw last when the
    /// stream ends or breaks.
    async fn follow(self: Arc<Self>, newest: watch::Sender<i64>) {
        let (client, game, seat) = (&*self.client, &*self.game, self.seat);
        let mut after = 0i64;
        let mut backoff = Duration::from_millis(50);
        while !client.stopped() {
            match client.stream(game, seat, after).send().await {
                Ok(mut response) if response.status().is_success() => {
                    backoff = Duration::from_millis(50);
                    let mut pending = Vec::new();
                    while let Ok(Some(chunk)) = response.chunk().await {
                        pending.extend_from_slice(&chunk);
                        if let Some(seq) = take_last_id(&mut pending) {
                            for lag in self.deliveries.arrived(seat, after, seq) {
                                client.stats.delivered(lag);
                            }
                            after = seq;
                            newest.send_replace(seq);
                        }
                    }
                }
                Ok(response) => client.stats.error(response.status().as_str()),
                Err(_) => client.stats.error("connect"),
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(2));
        }
    }
}

/// Streams mode: sets a game up, then holds every seat's stream open without a move, reading
/// what comes (keep-alives), as players who keep a page open and walk away. Measuring begins
/// once every worker has opened its streams.
pub async fn streams(
    client: Arc<Client>,
    plan: Arc<Plan>,
    accounts: Arc<[String]>,
    ready: Arc<Barrier>,
) {
    let mut held = Vec::new();
    if let Some(game) = client.set_up(plan.seats, plan.holes, &accounts).await {
        for seat in 0..game.tokens.len() {
            match client.stream(&game, seat, 0).send().await {
                Ok(response) if response.status().is_success() => {
                    client.stats.stream_opened();
                    held.push(tokio::spawn(hold(client.clone(), response)));
                }
                Ok(response) => client.stats.error(response.status().as_str()),
                Err(_) => client.stats.error("connect"),
            }
        }
    }
    if ready.wait().await.is_leader() {
        client.stats.start_measuring();
    }
    for stream in held {
        let _ = stream.await;
    }
}

/// Reads a held stream until the run stops; a stream the server ends counts as an error.
async fn hold(client: Arc<Client>, mut response: reqwest::Response) {
    loop {
        tokio::select! {
            chunk = response.chunk() => match chunk {
                Ok(Some(bytes)) => client.stats.stream_read(bytes.len()),
                Ok(None) => return client.stats.error("stream_ended"),
                Err(_) => return client.stats.error("stream_broken"),
            },
            () = client.stop.cancelled() => return,
        }
    }
}

/// Follows the stream of the account of `token` until the run stops, measuring each event's
/// delivery: from its `at` (the time of the write that stored it, on the server's clock, which
/// is this machine's) to its arrival; reconnects after the last event it saw.
async fn follow_account(client: Arc<Client>, token: String) {
    let mut after = 0i64;
    let mut backoff = Duration::from_millis(50);
    while !client.stopped() {
        match client.account_stream(&token, after).send().await {
            Ok(mut response) if response.status().is_success() => {
                backoff = Duration::from_millis(50);
                let mut pending = Vec::new();
                while let Ok(Some(chunk)) = response.chunk().await {
                    pending.extend_from_slice(&chunk);
                    for (id, event) in take_events(&mut pending) {
                        after = after.max(id);
                        let at = event["at"]
                            .as_str()
                            .and_then(|at| at.parse::<DateTime<Utc>>().ok());
                        if let Some(at) = at {
                            let lag = Utc::now().signed_duration_since(at);
                            client.stats.account_event(lag.to_std().unwrap_or_default());
                        }
                    }
                }
            }
            Ok(response) => client.stats.error(response.status().as_str()),
            Err(_) => client.stats.error("connect"),
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(2));
    }
}

/// Consumes the complete events of an SSE stream's bytes (a chunk may end in the middle of one)
/// and returns each as its `id:` and its `data:` read as JSON.
fn take_events(pending: &mut Vec<u8>) -> Vec<(i64, Value)> {
    let Some(end) = pending.windows(2).rposition(|pair| pair == b"\n\n") else {
        return Vec::new();
    };
    let events: Vec<u8> = pending.drain(..end + 2).collect();
    String::from_utf8_lossy(&events)
        .split("\n\n")
        .filter_map(|event| {
            let field = |name: &str| {
                event
                    .lines()
                    .find_map(|line| line.strip_prefix(name).map(str::trim))
            };
            let id = field("id:")?.parse().ok()?;
            let data = serde_json::from_str(field("data:")?).ok()?;
            Some((id, data))
        })
        .collect()
}

/// A refusal because the game moved on from the version the move was chosen in.
fn is_conflict(status: StatusCode) -> bool {
    status == 409 || status == 412
}

/// Gives a game up after more than [`MAX_REFUSALS`] refusals in a row.
fn give_up(client: &Client, game: &Game, seat: usize) {
    eprintln!("golf-loadgen: game {} seat {seat} given up", game.game);
    client.stats.game_abandoned();
}

async fn first_view_of(client: &Client, game: &Game, seat: usize) -> Option<Value> {
    for _ in 0..MAX_REFUSALS {
        match client.view(game, seat, None).await? {
            Answer::Ok(view) => return Some(view),
            Answer::NotModified | Answer::Refused(_) => pause(client).await,
        }
    }
    None
}

/// Consumes the complete lines of an SSE stream's bytes (a chunk may end in the middle of one)
/// and returns the last `id:` among them.
fn take_last_id(pending: &mut Vec<u8>) -> Option<i64> {
    let end = pending.iter().rposition(|&byte| byte == b'\n')?;
    let lines: Vec<u8> = pending.drain(..=end).collect();
    String::from_utf8_lossy(&lines)
        .lines()
        .filter_map(|line| line.strip_prefix("id:")?.trim().parse().ok())
        .next_back()
}

/// A short wait before trying again, cut short when the run stops.
async fn pause(client: &Client) {
    tokio::select! {
        () = tokio::time::sleep(Duration::from_millis(100)) => {}
        () = client.stop.cancelled() => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn account_events_are_read_from_complete_events_only() {
        let mut pending =
            b": keep-alive\n\nid: 3\ndata: {\"type\": \"your_turn\"}\n\nid: 4\nda".to_vec();
        assert_eq!(
            take_events(&mut pending),
            [(3, json!({"type": "your_turn"}))]
        );
        pending.extend_from_slice(b"ta: {}\n\n");
        assert_eq!(take_events(&mut pending), [(4, json!({}))]);
        assert!(pending.is_empty());
    }

    #[test]
    fn stream_ids_are_read_from_complete_lines_only() {
        let mut pending = b"id: 7\ndata: {\"seq\": 7}\n\nid: 8\ndata: {\"na".to_vec();
        // The line that "id: 8" ends is complete; the data after it is not.
        assert_eq!(take_last_id(&mut pending), Some(8));
        pending.extend_from_slice(b"me\": \"\xc3\xa9\"}\n\nid: 1");
        assert_eq!(take_last_id(&mut pending), None);
        pending.extend_from_slice(b"0\n");
        assert_eq!(take_last_id(&mut pending), Some(10));
        assert!(pending.is_empty());
    }
}
