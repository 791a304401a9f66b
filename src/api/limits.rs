//! What one client may ask of an instance: who the client is (its address, or the one a trusted
//! proxy forwards in the one header the operator names; an IPv6 client is its /64), its budgets
//! of game creations and joins and of expensive reads, and the streams it holds open. The counts themselves, and their
//! bounds, are in [`counters`].
//!
//! Every count lives in this instance's memory: behind a load balancer, each instance counts on
//! its own.

use std::future::{Ready, ready};
use std::net::{IpAddr, Ipv6Addr};
use std::pin::Pin;
use std::time::{Duration, Instant};

use actix_web::body::MessageBody;
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::error::PayloadError;
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::middleware::Next;
use actix_web::web::Bytes;
use actix_web::web::Data;
use actix_web::{FromRequest, HttpMessage, HttpRequest, HttpResponse, ResponseError};
use futures_util::{Stream, StreamExt};

use crate::api::problem::ApiError;
use crate::config::{ClientIpHeader, HttpSettings, Network};

mod counters;

pub use counters::StreamSlot;
use counters::{BUCKETS_KEPT, RateLimiter, STREAMING_CLIENTS_KEPT, SlotRefused, StreamSlots};

/// When a client over its stream cap may try again: streams end when games do, or when their
/// clients leave, which a few seconds may see.
const STREAM_RETRY_AFTER: Duration = Duration::from_secs(5);

/// The limits of this instance, shared by its workers.
pub struct Limits {
    client_timeout: Duration,
    trusted_proxies: Vec<Network>,
    client_ip_header: ClientIpHeader,
    writes: Option<RateLimiter>,
    expensive_reads: Option<RateLimiter>,
    expert_seats: Option<RateLimiter>,
    streams: StreamSlots,
}

impl Limits {
    /// The limits that `settings` set.
    pub fn new(settings: &HttpSettings) -> Self {
        Limits {
            client_timeout: settings.client_timeout,
            trusted_proxies: settings.trusted_proxies.clone(),
            client_ip_header: settings.client_ip_header,
            writes: settings.writes_per_min.map(budget),
            expensive_reads: settings.expensive_reads_per_min.map(budget),
            expert_seats: settings.expert_seats_per_min.map(budget),
            streams: StreamSlots::new(settings.max_streams_per_client, STREAMING_CLIENTS_KEPT),
        }
    }

    /// The client's address: the peer's, unless the peer is a trusted proxy, in which case the
    /// nearest address that is not a trusted proxy of the chain in the header the proxies set
    /// (`GOLF_CLIENT_IP_HEADER`). A chain that names no address it can read there leaves the
    /// peer's: a proxy that does not say whom it forwards for is then counted as one client.
    pub fn client_of(&self, request: &HttpRequest) -> Option<IpAddr> {
        let peer = request.peer_addr()?.ip().to_canonical();
        if !self.is_trusted(peer) {
            return Some(peer);
        }
        let mut client = peer;
        for hop in forwarded_chain(request, self.client_ip_header)
            .into_iter()
            .rev()
        {
            match hop {
                Some(hop) if self.is_trusted(hop) => client = hop,
                Some(hop) => return Some(hop),
                None => return Some(client),
            }
        }
        Some(client)
    }

    /// What the client's limits are counted by: see [`ClientKey`].
    fn key_of(&self, request: &HttpRequest) -> Option<ClientKey> {
        self.client_of(request).map(ClientKey::from)
    }

    fn is_trusted(&self, ip: IpAddr) -> bool {
        self.trusted_proxies.iter().any(|net| net.contains(ip))
    }

    /// Takes one of the client's stream slots, held until the returned slot is dropped; a
    /// 429 `too_many_streams` when the client holds all of its slots, or when the instance
    /// counts as many streaming clients as it may.
    pub fn open_stream(&self, request: &HttpRequest) -> Result<Option<StreamSlot>, TooMany> {
        let Some(client) = self.key_of(request) else {
            return Ok(None);
        };
        let detail = match self.streams.take(client) {
            Ok(slot) => return Ok(Some(slot)),
            Err(SlotRefused::ClientFull) => format!(
                "This client holds {} open streams, the most it may: close one first.",
                self.streams.max
            ),
            Err(SlotRefused::InstanceFull) => {
                "This instance serves as many streaming clients as it may: try again later."
                    .to_owned()
            }
        };
        Err(TooMany {
            problem: ApiError::new("too_many_streams", detail),
            retry_after: STREAM_RETRY_AFTER,
        })
    }
}

/// Gives a request's body as long to arrive as its head had (actix closes a connection whose
/// head is late): a body still incomplete then fails with a timed-out [`PayloadError::Io`], which
/// the handler answers with 408 `request_timeout`, so a client that trickles its body cannot
/// hold a connection for long.
pub async fn body_deadline(
    mut request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    if let Some(limits) = request.app_data::<Data<Limits>>() {
        let deadline = tokio::time::Instant::now() + limits.client_timeout;
        let body = request.take_payload();
        let timed = futures_util::stream::unfold(Some(body), move |body| async move {
            let mut body = body?;
            match tokio::time::timeout_at(deadline, body.next()).await {
                Ok(Some(chunk)) => Some((chunk, Some(body))),
                Ok(None) => None,
                Err(_) => Some((Err(body_timed_out()), None)),
            }
        });
        let timed: Pin<Box<dyn Stream<Item = Result<Bytes, PayloadError>>>> = Box::pin(timed);
        request.set_payload(Payload::from(timed));
    }
    next.call(request).await
}

fn body_timed_out() -> PayloadError {
    PayloadError::Io(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        "the body did not arrive in time",
    ))
}

/// The addresses of the chain in `source` (`Forwarded`'s `for=` of RFC 7239, or
/// `X-Forwarded-For`), from the client's end to the nearest proxy; `None` for an entry that is no
/// address (`unknown`, an obfuscated name, garbage). The other header is never read: proxies pass
/// it through as the client wrote it.
fn forwarded_chain(request: &HttpRequest, source: ClientIpHeader) -> Vec<Option<IpAddr>> {
    let headers = request.headers();
    match source {
        ClientIpHeader::Forwarded => headers
            .get_all(header::FORWARDED)
            .flat_map(|value| value.to_str().unwrap_or("for=unknown").split(','))
            .map(|element| {
                element
                    .split(';')
                    .filter_map(|pair| pair.split_once('='))
                    .find(|(name, _)| name.trim().eq_ignore_ascii_case("for"))
                    .and_then(|(_, value)| node_address(value))
            })
            .collect(),
        ClientIpHeader::XForwardedFor => headers
            .get_all("x-forwarded-for")
            .flat_map(|value| value.to_str().unwrap_or("unknown").split(','))
            .map(node_address)
            .collect(),
    }
}

/// The address of a node: `192.0.2.1`, `192.0.2.1:4711`, `"[2001:db8::1]:4711"`, `2001:db8::1`.
fn node_address(text: &str) -> Option<IpAddr> {
    let text = text.trim().trim_matches('"');
    if let Some(bracketed) = text.strip_prefix('[') {
        return bracketed.split(']').next()?.parse().ok();
    }
    text.parse()
        .ok()
        .or_else(|| {
            text.rsplit_once(':')?
                .0
                .parse::<std::net::Ipv4Addr>()
                .ok()
                .map(IpAddr::V4)
        })
        .map(|ip| ip.to_canonical())
}

/// Who the limits count: an IPv4 address, or the /64 of an IPv6 one (an IPv4 address mapped
/// into IPv6 counts as the IPv4 one). A host or a subscriber line gets a whole /64 and may use
/// any address of it, so counting single IPv6 addresses would give it 2^64 budgets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClientKey(IpAddr);

impl From<IpAddr> for ClientKey {
    fn from(ip: IpAddr) -> Self {
        match ip.to_canonical() {
            IpAddr::V6(v6) => {
                let network = u128::from(v6) & (u128::MAX << 64);
                ClientKey(IpAddr::V6(Ipv6Addr::from(network)))
            }
            v4 => ClientKey(v4),
        }
    }
}

/// A budget of `per_min` requests a minute per client.
fn budget(per_min: u32) -> RateLimiter {
    RateLimiter::new(per_min, BUCKETS_KEPT)
}

/// The kinds of request that spend a budget of their own. The others spend none: moves, leaves
/// and cancels need a seat or host token, which a client gets only by creating or joining (which
/// spends its writes), and views and the lobby are cheap.
#[derive(Debug, Clone, Copy)]
enum Budget {
    /// Game creations and joins, and the creations of accounts, challenges, seeks and
    /// webhooks: each adds to the database, or to what others see.
    Writes,
    /// Exports, audits, replays and log pages: each reads or replays a whole log.
    ExpensiveReads,
    /// Expert bots seated: each plays on the blocking pool that every client shares.
    ExpertSeats,
}

impl Budget {
    /// The detail of the 429 of a client that spent its `per_min`.
    fn refusal(self, per_min: u32) -> String {
        match self {
            Budget::Writes => {
                format!(
                    "This client may make {per_min} creations a minute (games, joins, accounts, \
                     challenges, seeks, webhooks): try again later."
                )
            }
            Budget::ExpensiveReads => format!(
                "This client may ask for {per_min} exports, audits, replays and log pages a \
                 minute: try again later."
            ),
            Budget::ExpertSeats => format!(
                "This client may seat {per_min} expert bots a minute: try again later, or seat \
                 the greedy or random bot."
            ),
        }
    }
}

impl Limits {
    /// Spends one of the client's requests of `budget`, or a 429 `rate_limited` saying how
    /// long until one is back.
    fn spend(&self, budget: Budget, request: &HttpRequest) -> Result<(), TooMany> {
        let limiter = match budget {
            Budget::Writes => &self.writes,
            Budget::ExpensiveReads => &self.expensive_reads,
            Budget::ExpertSeats => &self.expert_seats,
        };
        let (Some(limiter), Some(client)) = (limiter, self.key_of(request)) else {
            return Ok(());
        };
        limiter
            .admit(client, Instant::now())
            .map_err(|wait| TooMany {
                problem: ApiError::new("rate_limited", budget.refusal(limiter.per_min)),
                retry_after: wait,
            })
    }
}

/// Spends one request of `budget` for `request`; without [`Limits`] in the app data, nothing.
fn spend(request: &HttpRequest, budget: Budget) -> Result<(), TooMany> {
    match request.app_data::<Data<Limits>>() {
        Some(limits) => limits.spend(budget, request),
        None => Ok(()),
    }
}

/// An extractor that admits a game creation or a join under the client's budget of writes
/// (`GOLF_RATE_LIMIT_PER_MIN`), or answers 429 `rate_limited`.
pub struct WriteAdmitted;

impl FromRequest for WriteAdmitted {
    type Error = TooMany;
    type Future = Ready<Result<Self, TooMany>>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(spend(request, Budget::Writes).map(|()| WriteAdmitted))
    }
}

/// An extractor that admits an export, an audit, a replay or a log page under the client's
/// budget of expensive reads (`GOLF_READ_RATE_LIMIT_PER_MIN`), or answers 429 `rate_limited`.
pub struct ReadAdmitted;

impl FromRequest for ReadAdmitted {
    type Error = TooMany;
    type Future = Ready<Result<Self, TooMany>>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(spend(request, Budget::ExpensiveReads).map(|()| ReadAdmitted))
    }
}

/// Spends `seats` of the client's expert seats (`GOLF_MAX_EXPERT_SEATS_PER_MIN`), or answers
/// 429 `rate_limited`: called by a join whose body names the expert bot, and by a rematch that
/// seats the finished game's experts again.
pub fn admit_expert_seats(request: &HttpRequest, seats: usize) -> Result<(), TooMany> {
    (0..seats).try_for_each(|_| spend(request, Budget::ExpertSeats))
}

/// 429: a limit of this client is reached; `Retry-After` says in how many seconds to try again.
#[derive(Debug)]
pub struct TooMany {
    problem: ApiError,
    retry_after: Duration,
}

impl TooMany {
    /// The whole seconds of `Retry-After`: at least 1, rounded up.
    fn retry_after_seconds(&self) -> u64 {
        self.retry_after.as_secs_f64().ceil().max(1.0) as u64
    }
}

impl std::fmt::Display for TooMany {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.problem.fmt(f)
    }
}

impl ResponseError for TooMany {
    fn status_code(&self) -> StatusCode {
        self.problem.status_code()
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = self.problem.error_response();
        response.headers_mut().insert(
            header::RETRY_AFTER,
            HeaderValue::from(self.retry_after_seconds()),
        );
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;

    fn limits(trusted: &[&str]) -> Limits {
        limits_reading(trusted, ClientIpHeader::XForwardedFor)
    }

    fn limits_reading(trusted: &[&str], client_ip_header: ClientIpHeader) -> Limits {
        Limits::new(&HttpSettings {
            trusted_proxies: trusted.iter().map(|net| net.parse().unwrap()).collect(),
            client_ip_header,
            max_streams_per_client: 2,
            ..HttpSettings::default()
        })
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn key(text: &str) -> ClientKey {
        ip(text).into()
    }

    fn request(peer: &str, headers: &[(&str, &str)]) -> HttpRequest {
        let mut request = TestRequest::default().peer_addr(peer.parse().unwrap());
        for (name, value) in headers {
            request = request.insert_header((*name, *value));
        }
        request.to_http_request()
    }

    #[test]
    fn forwarded_addresses_count_only_from_a_trusted_proxy() {
        let untrusted = limits(&[]);
        let spoofed = request("203.0.113.5:40000", &[("x-forwarded-for", "198.51.100.1")]);
        assert_eq!(untrusted.client_of(&spoofed), Some(ip("203.0.113.5")));

        let behind = limits(&["10.0.0.0/8"]);
        // The client may prepend lies; the nearest untrusted hop is the one the proxy saw.
        let chain = request(
            "10.0.0.2:40000",
            &[("x-forwarded-for", "1.2.3.4, 198.51.100.1, 10.0.0.9")],
        );
        assert_eq!(behind.client_of(&chain), Some(ip("198.51.100.1")));
        let unknown = request("10.0.0.2:40000", &[("x-forwarded-for", "unknown")]);
        assert_eq!(behind.client_of(&unknown), Some(ip("10.0.0.2")));
        let bare = request("10.0.0.2:40000", &[]);
        assert_eq!(behind.client_of(&bare), Some(ip("10.0.0.2")));
    }

    #[test]
    fn a_forwarded_header_the_proxy_does_not_set_changes_nothing() {
        // The proxy appends X-Forwarded-For and passes the client's own Forwarded through.
        let behind = limits(&["10.0.0.0/8"]);
        let spoofed = request(
            "10.0.0.2:40000",
            &[
                ("forwarded", "for=192.0.2.60"),
                ("x-forwarded-for", "198.51.100.1"),
            ],
        );
        assert_eq!(behind.client_of(&spoofed), Some(ip("198.51.100.1")));
        let only_forwarded = request("10.0.0.2:40000", &[("forwarded", "for=192.0.2.60")]);
        assert_eq!(behind.client_of(&only_forwarded), Some(ip("10.0.0.2")));
    }

    #[test]
    fn behind_a_proxy_that_sets_forwarded_only_forwarded_is_read() {
        let behind = limits_reading(&["10.0.0.0/8"], ClientIpHeader::Forwarded);
        let forwarded = request(
            "10.0.0.2:40000",
            &[
                (
                    "forwarded",
                    "for=192.0.2.60;proto=http, for=\"[2001:db8::17]:4711\"",
                ),
                ("x-forwarded-for", "198.51.100.1"),
            ],
        );
        assert_eq!(behind.client_of(&forwarded), Some(ip("2001:db8::17")));
        let ported = request("10.0.0.2:40000", &[("forwarded", "for=192.0.2.60:8000")]);
        assert_eq!(behind.client_of(&ported), Some(ip("192.0.2.60")));
        let unknown = request("10.0.0.2:40000", &[("forwarded", "for=unknown")]);
        assert_eq!(behind.client_of(&unknown), Some(ip("10.0.0.2")));
        let spoofed = request("10.0.0.2:40000", &[("x-forwarded-for", "198.51.100.1")]);
        assert_eq!(behind.client_of(&spoofed), Some(ip("10.0.0.2")));
    }

    #[test]
    fn an_ipv6_client_is_its_64_and_a_mapped_ipv4_one_its_address() {
        assert_eq!(
            key("2001:db8:1:2::1"),
            key("2001:db8:1:2:ffff:ffff:ffff:ffff")
        );
        assert_eq!(key("2001:db8:1:2::1"), key("2001:db8:1:2::"));
        assert_ne!(key("2001:db8:1:2::1"), key("2001:db8:1:3::1"));
        assert_eq!(key("::ffff:192.0.2.1"), key("192.0.2.1"));
        assert_ne!(key("192.0.2.1"), key("192.0.2.2"));
    }

    #[test]
    fn the_addresses_of_one_64_share_its_budget_and_its_streams() {
        let limits = Limits::new(&HttpSettings {
            writes_per_min: Some(2),
            max_streams_per_client: 2,
            ..HttpSettings::default()
        });
        let from = |peer: &str| request(peer, &[]);
        let rate = limits.writes.as_ref().unwrap();
        let now = Instant::now();
        for peer in ["[2001:db8:1:2::1]:4000", "[2001:db8:1:2::2]:4000"] {
            let client = limits.key_of(&from(peer)).unwrap();
            assert!(rate.admit(client, now).is_ok(), "{peer}");
        }
        let third = limits.key_of(&from("[2001:db8:1:2::3]:4000")).unwrap();
        assert!(rate.admit(third, now).is_err(), "the /64's budget is spent");
        let other = limits.key_of(&from("[2001:db8:1:3::1]:4000")).unwrap();
        assert!(rate.admit(other, now).is_ok(), "another /64");

        let _first = limits.open_stream(&from("[2001:db8:1:2::1]:4000"));
        let _second = limits.open_stream(&from("[2001:db8:1:2::a]:4000"));
        assert!(limits.open_stream(&from("[2001:db8:1:2::b]:4000")).is_err());
        assert!(limits.open_stream(&from("[2001:db8:1:3::b]:4000")).is_ok());
    }

    #[test]
    fn retry_after_is_whole_seconds_rounded_up() {
        let too_many = |wait| TooMany {
            problem: ApiError::new("rate_limited", ""),
            retry_after: wait,
        };
        assert_eq!(too_many(Duration::from_millis(1)).retry_after_seconds(), 1);
        assert_eq!(
            too_many(Duration::from_millis(2001)).retry_after_seconds(),
            3
        );
        assert_eq!(too_many(Duration::ZERO).retry_after_seconds(), 1);
    }
}
