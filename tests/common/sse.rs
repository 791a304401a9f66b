//! A follower of a game's live log (Server-Sent Events), as a client that resumes with
//! `Last-Event-ID` whenever its stream ends, checking every frame it reads.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// How long a stream may stay silent: keep-alive comments come every 15 s.
const SILENCE: Duration = Duration::from_secs(20);

/// What one follower of a game's stream saw, across its connections.
#[derive(Debug, Default)]
pub struct Followed {
    /// Every message, in order: its seq and its entry.
    pub entries: Vec<(i64, Value)>,
    /// Keep-alive comments.
    pub comments: usize,
    /// Times the server ended the stream (the follower then resumed with `Last-Event-ID`).
    pub ends: usize,
    /// Answers other than 200 to a reopening, by status.
    pub refused: Vec<u16>,
}

impl Followed {
    /// The seq of the last entry received (0: none yet).
    pub fn last(&self) -> i64 {
        self.entries.last().map_or(0, |entry| entry.0)
    }
}

/// Reads one block of a stream: a comment, or a message with one `id:` and one `data:` that is
/// the log entry of that seq (anything else fails the test).
fn read_block(block: &str, followed: &mut Followed) {
    let (mut id, mut data) = (None, None);
    for line in block.lines() {
        if line.is_empty() || line.starts_with(':') {
            continue;
        }
        match line.split_once(": ") {
            Some(("id", value)) => id = Some(value.parse::<i64>().expect("a numeric id")),
            Some(("data", value)) => {
                data = Some(serde_json::from_str::<Value>(value).expect("JSON data"))
            }
            _ => panic!("a line that is neither a comment, an id nor data: {block:?}"),
        }
    }
    let (id, data) = match (id, data) {
        (None, None) => {
            followed.comments += 1;
            return;
        }
        (Some(id), Some(data)) => (id, data),
        _ => panic!("a message that is not a log entry: {block:?}"),
    };
    assert_eq!(
        id,
        followed.last() + 1,
        "entries in order, none twice, none skipped"
    );
    assert_eq!(data["seq"], id, "{data}");
    assert!(
        data["type"].is_string() && data["hash"].is_string(),
        "{data}"
    );
    followed.entries.push((id, data));
}

/// Follows the stream of game `id` as seat `token` until `stop`, resuming after the last entry
/// received whenever the stream ends or cannot be opened, as an SSE client does.
pub async fn follow(
    address: String,
    id: String,
    token: String,
    followed: Arc<Mutex<Followed>>,
    stop: CancellationToken,
) {
    // No overall timeout: a stream lasts as long as the test; each read is bounded instead.
    let client = reqwest::Client::new();
    let url = format!("{address}/v1/games/{id}/stream");
    while !stop.is_cancelled() {
        let last = followed.lock().unwrap().last();
        let opened = client
            .get(&url)
            .bearer_auth(&token)
            .header("Last-Event-ID", last.to_string())
            .send();
        let mut response = match tokio::time::timeout(SILENCE, opened).await {
            Ok(Ok(response)) if response.status() == 200 => response,
            Ok(Ok(response)) => {
                followed
                    .lock()
                    .unwrap()
                    .refused
                    .push(response.status().as_u16());
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
            other => panic!("opening the stream of {id}: {other:?}"),
        };
        let mut buffer = String::new();
        loop {
            let chunk = tokio::select! {
                _ = stop.cancelled() => return,
                // Keep-alives come every 15 s: a stream silent for longer is stuck.
                chunk = tokio::time::timeout(SILENCE, response.chunk()) => chunk,
            };
            match chunk.expect("a stream silent for 20 s") {
                Ok(Some(bytes)) => buffer.push_str(std::str::from_utf8(&bytes).unwrap()),
                Ok(None) | Err(_) => {
                    followed.lock().unwrap().ends += 1;
                    break;
                }
            }
            while let Some(end) = buffer.find("\n\n") {
                let block: String = buffer.drain(..end + 2).collect();
                read_block(&block, &mut followed.lock().unwrap());
            }
        }
    }
}
