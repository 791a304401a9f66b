//! Webhook test support: a receiver on 127.0.0.1 that records every request and answers as the
//! test scripts it, a resolver that maps names as the test says, and an independent check of
//! the Standard Webhooks signature.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::http::StatusCode;
use actix_web::web::{Bytes, Data};
use actix_web::{App, HttpRequest, HttpResponse, HttpServer};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use golf_server::service::accounts::webhook_client::HostResolver;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// How long a test waits for a delivery: retries and restarts included, on a loaded machine.
pub const DELIVERY_BOUND: Duration = Duration::from_secs(60);

/// How the receiver answers one request.
#[derive(Debug, Clone)]
pub enum Reply {
    Status(u16),
    /// Answers 200 only after this long: longer than a delivery may wait.
    Hang(Duration),
    /// 302 to this location.
    Redirect(String),
}

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub headers: HashMap<String, String>,
    pub body: String,
}

impl Received {
    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).map_or("", String::as_str)
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).expect("a JSON body")
    }
}

#[derive(Default)]
struct Recorded {
    script: Mutex<VecDeque<Reply>>,
    received: Mutex<Vec<Received>>,
}

/// A receiver of webhooks on 127.0.0.1; it answers 200 once its script is played.
pub struct Receiver {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    recorded: Arc<Recorded>,
}

impl Receiver {
    pub fn start(script: Vec<Reply>) -> Receiver {
        let recorded = Arc::new(Recorded::default());
        *recorded.script.lock().unwrap() = script.into();
        let data = Data::from(Arc::clone(&recorded));
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .default_service(actix_web::web::to(answer))
        })
        .workers(1)
        .disable_signals()
        .bind(("127.0.0.1", 0))
        .expect("the receiver binds");
        let base = format!("http://{}", server.addrs()[0]);
        tokio::spawn(server.run());
        Receiver { base, recorded }
    }

    /// Every request so far.
    pub fn received(&self) -> Vec<Received> {
        self.recorded.received.lock().unwrap().clone()
    }

    /// Waits until `count` requests came, within [`DELIVERY_BOUND`]; answers them all.
    pub async fn wait_for(&self, count: usize) -> Vec<Received> {
        let deadline = Instant::now() + DELIVERY_BOUND;
        loop {
            let received = self.received();
            if received.len() >= count {
                return received;
            }
            assert!(
                Instant::now() < deadline,
                "{count} deliveries expected, {} came: {received:?}",
                received.len()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

async fn answer(recorded: Data<Recorded>, request: HttpRequest, body: Bytes) -> HttpResponse {
    let headers = request
        .headers()
        .iter()
        .map(|(name, value)| {
            let value = value.to_str().unwrap_or_default().to_owned();
            (name.as_str().to_owned(), value)
        })
        .collect();
    recorded.received.lock().unwrap().push(Received {
        path: request.path().to_owned(),
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    });
    let reply = recorded.script.lock().unwrap().pop_front();
    match reply.unwrap_or(Reply::Status(200)) {
        Reply::Status(status) => {
            HttpResponse::build(StatusCode::from_u16(status).unwrap()).finish()
        }
        Reply::Hang(how_long) => {
            tokio::time::sleep(how_long).await;
            HttpResponse::Ok().finish()
        }
        Reply::Redirect(location) => HttpResponse::Found()
            .insert_header(("location", location))
            .finish(),
    }
}

/// Polls `check` until it answers `Some`, within [`DELIVERY_BOUND`].
pub async fn eventually<T, F: Future<Output = Option<T>>>(what: &str, check: impl Fn() -> F) -> T {
    let deadline = Instant::now() + DELIVERY_BOUND;
    loop {
        if let Some(found) = check().await {
            return found;
        }
        assert!(Instant::now() < deadline, "never happened: {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Whether `received` carries the Standard Webhooks signature of its id, timestamp and body
/// under `secret`, computed here from the specification, not by the server's code.
pub fn signed_by(received: &Received, secret: &str) -> bool {
    let key = BASE64
        .decode(secret.strip_prefix("whsec_").expect("a whsec_ secret"))
        .expect("base64");
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    let content = format!(
        "{}.{}.{}",
        received.header("webhook-id"),
        received.header("webhook-timestamp"),
        received.body
    );
    mac.update(content.as_bytes());
    let expected = format!("v1,{}", BASE64.encode(mac.finalize().into_bytes()));
    received
        .header("webhook-signature")
        .split(' ')
        .any(|signature| signature == expected)
}

/// A resolver that knows only the names the test maps, and may remap them at any time.
#[derive(Default)]
pub struct MapResolver {
    names: Mutex<HashMap<String, Vec<IpAddr>>>,
}

impl MapResolver {
    pub fn map(&self, name: &str, addresses: &[&str]) {
        let addresses = addresses.iter().map(|ip| ip.parse().unwrap()).collect();
        self.names
            .lock()
            .unwrap()
            .insert(name.to_owned(), addresses);
    }
}

impl HostResolver for MapResolver {
    fn lookup(
        &self,
        host: String,
    ) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send>> {
        let found = self.names.lock().unwrap().get(&host).cloned();
        Box::pin(async move {
            found.ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, host))
        })
    }
}
