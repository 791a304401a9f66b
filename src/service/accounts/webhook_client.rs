//! The HTTP side of webhooks: the guard that keeps deliveries off loopback and private networks
//! (SSRF), the Standard Webhooks signature, and one attempt's `POST`.
//!
//! The guard checks the addresses a name resolves to at registration and again at every
//! delivery, inside the HTTP client's own resolver ([`GuardedResolver`]): the client connects
//! only to addresses the guard passed, so a name that resolved to a public address at
//! registration and to 127.0.0.1 later is refused then. Literal addresses never reach a resolver,
//! so they are checked before the request. Redirects are not followed and proxies are not used:
//! the address checked is the address connected to.

use std::fmt;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use hmac::{Hmac, Mac};
use reqwest::Url;
use reqwest::dns::{Name, Resolve, Resolving};
use sha2::Sha256;

use crate::service::games::credentials::random_bytes;

/// How long an attempt may take, its answer's body included.
pub const DELIVERY_TIMEOUT: Duration = Duration::from_secs(5);

/// The most of an answer's body read (and dropped): a receiver cannot make an attempt read more.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// The longest URL taken.
const MAX_URL_LEN: usize = 2048;

/// The prefix of a Standard Webhooks secret.
const SECRET_PREFIX: &str = "whsec_";

/// The addresses of a host name, looked up somewhere: the system's resolver in service, a map
/// in tests (no outside network).
pub trait HostResolver: Send + Sync {
    /// Every address `host` resolves to.
    fn lookup(
        &self,
        host: String,
    ) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send>>;
}

/// A resolver shared by the service and its HTTP client.
pub type SharedResolver = Arc<dyn HostResolver>;

/// The operating system's resolver.
pub struct SystemResolver;

impl HostResolver for SystemResolver {
    fn lookup(
        &self,
        host: String,
    ) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send>> {
        Box::pin(async move {
            let found = tokio::net::lookup_host((host.as_str(), 0)).await?;
            Ok(found.map(|address| address.ip()).collect())
        })
    }
}

/// Why a URL or an address is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// Whether a delivery may not reach `ip`: anything but a public unicast address (loopback,
/// private, link-local, CGNAT, multicast, unspecified, broadcast, documentation and benchmark
/// ranges, unique-local), IPv4 addresses written as IPv6 judged as the IPv4 address they carry.
pub fn is_refused(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_refused_v4(v4),
        IpAddr::V6(v6) => is_refused_v6(v6),
    }
}

fn is_refused_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    a == 0 // "this network", unspecified
        || a == 10
        || a == 127
        || (a == 100 && (64..128).contains(&b)) // CGNAT 100.64/10
        || (a == 169 && b == 254)
        || (a == 172 && (16..32).contains(&b))
        || (a == 192 && b == 0 && c == 0) // protocol assignments 192.0.0/24
        || (a == 192 && b == 0 && c == 2)
        || (a == 192 && b == 168)
        || (a == 198 && (18..20).contains(&b)) // benchmarking 198.18/15
        || (a == 198 && b == 51 && c == 100)
        || (a == 203 && b == 0 && c == 113)
        || a >= 224 // multicast, reserved, broadcast
}

fn is_refused_v6(ip: Ipv6Addr) -> bool {
    let segments = ip.segments();
    let embedded_v4 = || {
        let [.., a, b, c, d] = ip.octets();
        Ipv4Addr::new(a, b, c, d)
    };
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_refused_v4(v4);
    }
    match segments {
        // ::, ::1 and the IPv4-compatible ::a.b.c.d.
        [0, 0, 0, 0, 0, 0, _, _] => {
            ip.is_unspecified() || ip.is_loopback() || { is_refused_v4(embedded_v4()) }
        }
        // NAT64 64:ff9b::a.b.c.d reaches the IPv4 address it carries.
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => is_refused_v4(embedded_v4()),
        // 6to4 2002:aabb:ccdd:: reaches aa.bb.cc.dd.
        [0x2002, high, low, ..] => {
            let [a, b] = high.to_be_bytes();
            let [c, d] = low.to_be_bytes();
            is_refused_v4(Ipv4Addr::new(a, b, c, d))
        }
        // Teredo, whose server and client addresses are obfuscated, and documentation.
        [0x2001, 0, ..] | [0x2001, 0xdb8, ..] => true,
        [first, ..] => {
            (first & 0xfe00) == 0xfc00 // unique-local fc00::/7
                || (first & 0xffc0) == 0xfe80 // link-local fe80::/10
                || (first & 0xffc0) == 0xfec0 // site-local fec0::/10
                || (first & 0xff00) == 0xff00 // multicast
        }
    }
}

/// A new secret: `whsec_` and the base64 of 32 random bytes.
pub fn new_secret() -> String {
    format!("{SECRET_PREFIX}{}", BASE64.encode(random_bytes::<32>()))
}

/// The `webhook-signature` of a delivery: `v1,` and the base64 of the HMAC-SHA256, keyed by the
/// secret's bytes, of `{id}.{timestamp}.{body}`. `None` for a secret that is not `whsec_` and
/// base64 (the store only keeps those [`new_secret`] makes).
pub fn signature(secret: &str, id: &str, timestamp: i64, body: &str) -> Option<String> {
    let key = BASE64.decode(secret.strip_prefix(SECRET_PREFIX)?).ok()?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).ok()?;
    mac.update(format!("{id}.{timestamp}.{body}").as_bytes());
    Some(format!("v1,{}", BASE64.encode(mac.finalize().into_bytes())))
}

/// The resolver the HTTP client connects through: it hands out a name's addresses only when
/// every one of them is allowed.
struct GuardedResolver {
    resolver: SharedResolver,
    allow_private: bool,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let (resolver, allow_private) = (Arc::clone(&self.resolver), self.allow_private);
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addresses = allowed_addresses(resolver.as_ref(), &host, allow_private).await?;
            let addresses: Vec<SocketAddr> = addresses
                .into_iter()
                .map(|ip| SocketAddr::new(ip, 0))
                .collect();
            Ok(Box::new(addresses.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// The addresses of `host`, if it resolves and (unless `allow_private`) only to allowed ones.
async fn allowed_addresses(
    resolver: &dyn HostResolver,
    host: &str,
    allow_private: bool,
) -> Result<Vec<IpAddr>, Refused> {
    let addresses = resolver
        .lookup(host.to_owned())
        .await
        .map_err(|_| Refused(format!("{host} does not resolve")))?;
    if addresses.is_empty() {
        return Err(Refused(format!("{host} does not resolve")));
    }
    match addresses
        .iter()
        .find(|ip| !allow_private && is_refused(**ip))
    {
        Some(ip) => Err(Refused(format!(
            "{host} resolves to {ip}, which is not a public address"
        ))),
        None => Ok(addresses),
    }
}

/// What one attempt got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The status answered, if an answer came.
    pub status: Option<u16>,
    /// Why it failed, if it did.
    pub error: Option<String>,
    pub duration: Duration,
}

impl Outcome {
    /// A 2xx came back.
    pub fn acknowledged(&self) -> bool {
        self.error.is_none()
    }
}

/// A delivery to make: where, signed with what, and what.
pub struct Delivery<'a> {
    pub url: &'a str,
    pub secret: &'a str,
    /// `webhook-id`: the same on every attempt of one event.
    pub id: &'a str,
    /// `webhook-timestamp`: Unix seconds of this attempt.
    pub timestamp: i64,
    pub body: &'a str,
}

/// The HTTP client of deliveries, behind the address guard.
pub struct WebhookClient {
    http: reqwest::Client,
    resolver: SharedResolver,
    allow_private: bool,
}

impl WebhookClient {
    /// A client resolving through `resolver`; `allow_private` lifts the address guard and takes
    /// `http` URLs too.
    pub fn new(resolver: SharedResolver, allow_private: bool) -> Self {
        let guarded = GuardedResolver {
            resolver: Arc::clone(&resolver),
            allow_private,
        };
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(DELIVERY_TIMEOUT)
            .user_agent(concat!("golf-server-webhooks/", env!("CARGO_PKG_VERSION")))
            .dns_resolver(Arc::new(guarded))
            .build()
            .expect("the webhook client's settings are valid");
        WebhookClient {
            http,
            resolver,
            allow_private,
        }
    }

    /// Checks a URL to register: its form, and the addresses it resolves to now.
    pub async fn check_url(&self, url: &str) -> Result<Url, Refused> {
        let parsed = self.check_form(url)?;
        match parsed.host() {
            Some(url::Host::Domain(name)) => {
                allowed_addresses(self.resolver.as_ref(), name, self.allow_private).await?;
            }
            Some(url::Host::Ipv4(_) | url::Host::Ipv6(_)) | None => {}
        }
        Ok(parsed)
    }

    /// The URL parsed, if it is `https` (or `http` where private addresses are allowed), has a
    /// host and, when the host is an address, an allowed one.
    fn check_form(&self, url: &str) -> Result<Url, Refused> {
        if url.len() > MAX_URL_LEN {
            return Err(Refused(format!("A URL is at most {MAX_URL_LEN} bytes.")));
        }
        let parsed = Url::parse(url).map_err(|e| Refused(format!("Not a URL: {e}.")))?;
        let scheme_allowed = match parsed.scheme() {
            "https" => true,
            "http" => self.allow_private,
            _ => false,
        };
        if !scheme_allowed {
            return Err(Refused("The URL must be https.".to_owned()));
        }
        let literal = match parsed.host() {
            None => return Err(Refused("The URL has no host.".to_owned())),
            Some(url::Host::Domain(_)) => None,
            Some(url::Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
        };
        match literal {
            Some(ip) if !self.allow_private && is_refused(ip) => {
                Err(Refused(format!("{ip} is not a public address.")))
            }
            _ => Ok(parsed),
        }
    }

    /// Makes one attempt: never follows a redirect, reads at most [`MAX_ANSWER_BYTES`] of the
    /// answer, gives up after [`DELIVERY_TIMEOUT`].
    pub async fn deliver(&self, delivery: &Delivery<'_>) -> Outcome {
        let started = Instant::now();
        let (status, error) = match self.attempt(delivery).await {
            Ok(status) if (200..300).contains(&status) => (Some(status), None),
            Ok(status) if (300..400).contains(&status) => (
                Some(status),
                Some("a redirect, which is not followed".to_owned()),
            ),
            Ok(status) => (Some(status), Some(format!("answered {status}"))),
            Err(error) => (None, Some(error)),
        };
        Outcome {
            status,
            error,
            duration: started.elapsed(),
        }
    }

    /// The status answered, or why none was.
    async fn attempt(&self, delivery: &Delivery<'_>) -> Result<u16, String> {
        let url = self.check_form(delivery.url).map_err(|e| e.0)?;
        let signature = signature(
            delivery.secret,
            delivery.id,
            delivery.timestamp,
            delivery.body,
        )
        .ok_or("the webhook's secret is not a whsec_ key")?;
        let mut response = self
            .http
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header("webhook-id", delivery.id)
            .header("webhook-timestamp", delivery.timestamp.to_string())
            .header("webhook-signature", signature)
            .body(delivery.body.to_owned())
            .send()
            .await
            .map_err(|e| describe(&e))?;
        let status = response.status().as_u16();
        let mut read = 0;
        while read <= MAX_ANSWER_BYTES {
            match response.chunk().await {
                Ok(Some(chunk)) => read += chunk.len(),
                // The status is what counts: a body cut short or slow changes nothing.
                Ok(None) | Err(_) => break,
            }
        }
        Ok(status)
    }
}

/// Why a request failed, in a few words: the guard's refusal when it was that.
fn describe(error: &reqwest::Error) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = source {
        if let Some(refused) = cause.downcast_ref::<Refused>() {
            return format!("refused: {refused}");
        }
        source = cause.source();
    }
    if error.is_timeout() {
        format!("no answer within {DELIVERY_TIMEOUT:?}")
    } else if error.is_connect() {
        "could not connect".to_owned()
    } else {
        "the request failed".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_public_unicast_addresses_are_allowed() {
        let refused = [
            "127.0.0.1",
            "127.8.9.10",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.254",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "192.0.2.1",
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "ff02::1",
            "2001:db8::1",
        ];
        for ip in refused {
            assert!(is_refused(ip.parse().unwrap()), "{ip} must be refused");
        }
        let allowed = [
            "1.1.1.1",
            "8.8.8.8",
            "100.128.0.1",
            "172.32.0.1",
            "93.184.216.34",
            "::ffff:1.1.1.1",
            "2606:4700:4700::1111",
            "2a00:1450:4001::200e",
        ];
        for ip in allowed {
            assert!(!is_refused(ip.parse().unwrap()), "{ip} must be allowed");
        }
    }

    #[test]
    fn the_signature_is_the_standard_webhooks_one() {
        // The example of the Standard Webhooks specification.
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
        let body = r#"{"test": 2432232314}"#;
        assert_eq!(
            signature(secret, id, 1614265330, body).unwrap(),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
        assert_eq!(signature("nope", id, 1, body), None);
        let fresh = new_secret();
        assert!(fresh.starts_with("whsec_") && BASE64.decode(&fresh[6..]).unwrap().len() == 32);
    }

    #[test]
    fn urls_must_be_https_to_public_literal_addresses() {
        let guarded = WebhookClient::new(Arc::new(SystemResolver), false);
        for url in [
            "http://example.com/hook",
            "ftp://example.com/",
            "https://127.0.0.1/",
            "https://[::ffff:127.0.0.1]/",
            "https://10.0.0.1:8443/",
            "https://169.254.169.254/latest",
            "https://[fe80::1]/",
            "not a url",
        ] {
            assert!(guarded.check_form(url).is_err(), "{url}");
        }
        assert!(guarded.check_form("https://1.1.1.1/hook").is_ok());
        let open = WebhookClient::new(Arc::new(SystemResolver), true);
        assert!(open.check_form("http://127.0.0.1:9000/hook").is_ok());
    }
}
