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

/// The one refusal of a URL for where it points (its scheme, port, address, or what its name
/// resolves to, or that it does not): saying which would tell a client what a name resolves to
/// on the service's network, or which ports answer there.
const UNREACHABLE: &str = "Deliveries cannot be made to this URL: it must be https, on an allowed \
    port (443 unless the operator allows more), at a name or address that is public.";

fn unreachable() -> Refused {
    Refused(UNREACHABLE.to_owned())
}

/// Where deliveries may go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddressGuard {
    /// Lifts the guard: any address, any port, `http` too (development and tests on one
    /// machine).
    pub allow_private: bool,
    /// The ports a URL may name (its scheme's default when it names none).
    pub ports: Vec<u16>,
}

impl Default for AddressGuard {
    /// Public addresses, port 443.
    fn default() -> Self {
        AddressGuard {
            allow_private: false,
            ports: vec![443],
        }
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// Whether a delivery may not reach `ip`: anything but a public unicast address. Every block
/// of IANA's special-purpose registries that is not globally reachable is refused (loopback,
/// private, link-local, CGNAT, multicast, unspecified, broadcast, documentation, benchmarking,
/// unique-local, the translation and discard-only prefixes, ...); IPv4 addresses written as
/// IPv6 are judged as the IPv4 address they carry.
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
        || (a == 192 && b == 88 && c == 99) // the deprecated 6to4 relay anycast
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
        // 6to4 2002::/16, which IANA does not call globally reachable: whether it reaches the
        // IPv4 address it carries depends on relays.
        [0x2002, ..] => true,
        // The IPv4-translated ::ffff:0:a.b.c.d, the local-use translation prefix 64:ff9b:1::/48,
        // the other addresses under 64:ff9b::/32, and the discard-only and dummy prefixes
        // 100::/64 and 100:0:0:1::/64.
        [0, 0, 0, 0, 0xffff, 0, _, _] | [0x64, 0xff9b, ..] | [0x100, 0, 0, 0 | 1, ..] => true,
        // IETF protocol assignments 2001::/23 (Teredo, benchmarking, ORCHID, ...) and the
        // documentation prefixes 2001:db8::/32 and 3fff::/20.
        [0x2001, second, ..] if second < 0x200 || second == 0xdb8 => true,
        [0x3fff, second, ..] if second < 0x1000 => true,
        // Only 2000::/3 is global unicast: the rest is unique-local, link-local, multicast,
        // SRv6 SIDs (5f00::/16) or not assigned.
        [first, ..] => !(0x2000..0x4000).contains(&first),
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

/// The addresses of `host`, if it resolves and (unless `allow_private`) only to allowed ones;
/// else the one refusal that says neither which nor why.
async fn allowed_addresses(
    resolver: &dyn HostResolver,
    host: &str,
    allow_private: bool,
) -> Result<Vec<IpAddr>, Refused> {
    let addresses = resolver
        .lookup(host.to_owned())
        .await
        .map_err(|_| unreachable())?;
    let refused = addresses.iter().any(|ip| !allow_private && is_refused(*ip));
    if addresses.is_empty() || refused {
        return Err(unreachable());
    }
    Ok(addresses)
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
    guard: AddressGuard,
}

/// How long an attempt may take to connect, within [`DELIVERY_TIMEOUT`]: a receiver that does
/// not even accept the connection gives its place back to the others soon.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

impl WebhookClient {
    /// A client resolving through `resolver`, reaching only what `guard` allows.
    pub fn new(resolver: SharedResolver, guard: AddressGuard) -> Self {
        let guarded = GuardedResolver {
            resolver: Arc::clone(&resolver),
            allow_private: guard.allow_private,
        };
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(DELIVERY_TIMEOUT)
            .user_agent(concat!("golf-server-webhooks/", env!("CARGO_PKG_VERSION")))
            .dns_resolver(Arc::new(guarded))
            .build()
            .expect("the webhook client's settings are valid");
        WebhookClient {
            http,
            resolver,
            guard,
        }
    }

    /// Checks a URL to register: its form, and the addresses it resolves to now.
    pub async fn check_url(&self, url: &str) -> Result<Url, Refused> {
        let parsed = self.check_form(url)?;
        match parsed.host() {
            Some(url::Host::Domain(name)) => {
                let allow_private = self.guard.allow_private;
                allowed_addresses(self.resolver.as_ref(), name, allow_private).await?;
            }
            Some(url::Host::Ipv4(_) | url::Host::Ipv6(_)) | None => {}
        }
        Ok(parsed)
    }

    /// The URL parsed, if it is `https` (or `http` where private addresses are allowed) on an
    /// allowed port, has a host and, when the host is an address, an allowed one.
    fn check_form(&self, url: &str) -> Result<Url, Refused> {
        if url.len() > MAX_URL_LEN {
            return Err(Refused(format!("A URL is at most {MAX_URL_LEN} bytes.")));
        }
        let parsed = Url::parse(url).map_err(|e| Refused(format!("Not a URL: {e}.")))?;
        if self.guard.allow_private {
            return match (parsed.scheme(), parsed.has_host()) {
                ("https" | "http", true) => Ok(parsed),
                _ => Err(unreachable()),
            };
        }
        let port_allowed = parsed
            .port_or_known_default()
            .is_some_and(|port| self.guard.ports.contains(&port));
        let literal = match parsed.host() {
            None | Some(url::Host::Domain(_)) => None,
            Some(url::Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
        };
        let refused = parsed.scheme() != "https"
            || !parsed.has_host()
            || !port_allowed
            || literal.is_some_and(is_refused);
        match refused {
            true => Err(unreachable()),
            false => Ok(parsed),
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
            "::ffff:0:127.0.0.1",
            "64:ff9b:1::7f00:1",
            "100::1",
            "2001:2::1",
            "3fff::1",
            "5f00::1",
            "4000::1",
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

    /// The address blocks of one of IANA's registries (`tests/fixtures/iana`) that it does not
    /// call globally reachable ("False", "N/A", or blank for a deprecated block).
    fn not_globally_reachable(csv: &str) -> Vec<(IpAddr, u8)> {
        let mut records: Vec<Vec<String>> = vec![vec![String::new()]];
        let mut quoted = false;
        for c in csv.chars() {
            let record = records.last_mut().unwrap();
            match c {
                '"' => quoted = !quoted,
                ',' if !quoted => record.push(String::new()),
                '\n' if !quoted => records.push(vec![String::new()]),
                c => record.last_mut().unwrap().push(c),
            }
        }
        let mut blocks = Vec::new();
        for record in records.iter().skip(1).filter(|record| record.len() == 10) {
            if record[8].starts_with("True") {
                continue;
            }
            for block in record[0].split(", ") {
                let block = block.split(' ').next().unwrap();
                let (address, length) = block.split_once('/').unwrap();
                blocks.push((address.parse().unwrap(), length.parse().unwrap()));
            }
        }
        blocks
    }

    /// The first, a middle and the last address of a block.
    fn samples((address, length): (IpAddr, u8)) -> [IpAddr; 3] {
        match address {
            IpAddr::V4(v4) => {
                let (first, host_bits) = (u32::from(v4), 32 - u32::from(length));
                let last = first | u32::MAX.checked_shr(32 - host_bits).unwrap_or(0);
                let middle = first | ((last - first) / 2);
                [first, middle, last].map(|a| IpAddr::V4(Ipv4Addr::from(a)))
            }
            IpAddr::V6(v6) => {
                let (first, host_bits) = (u128::from(v6), 128 - u32::from(length));
                let last = first | u128::MAX.checked_shr(128 - host_bits).unwrap_or(0);
                let middle = first | ((last - first) / 2);
                [first, middle, last].map(|a| IpAddr::V6(Ipv6Addr::from(a)))
            }
        }
    }

    #[test]
    fn every_block_iana_does_not_call_globally_reachable_is_refused() {
        let registries = [
            include_str!("../../../tests/fixtures/iana/ipv4-special-registry.csv"),
            include_str!("../../../tests/fixtures/iana/ipv6-special-registry.csv"),
        ];
        let blocks: Vec<(IpAddr, u8)> = registries
            .iter()
            .flat_map(|csv| not_globally_reachable(csv))
            .collect();

        for block in blocks {
            // IPv4 written as IPv6 is judged as the IPv4 address it carries.
            if block == ("::ffff:0:0".parse().unwrap(), 96) {
                assert!(is_refused("::ffff:127.0.0.1".parse().unwrap()));
                continue;
            }
            for address in samples(block) {
                assert!(
                    is_refused(address),
                    "{address} of {block:?} must be refused"
                );
            }
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
        let guarded = WebhookClient::new(Arc::new(SystemResolver), AddressGuard::default());
        for url in [
            "http://example.com/hook",
            "ftp://example.com/",
            "https://127.0.0.1/",
            "https://[::ffff:127.0.0.1]/",
            "https://[::ffff:0:127.0.0.1]/",
            "https://[64:ff9b:1::7f00:1]/",
            "https://[100::1]/",
            "https://10.0.0.1:8443/",
            "https://169.254.169.254/latest",
            "https://[fe80::1]/",
            "https://1.1.1.1:22/",
            "https://example.com:8443/",
        ] {
            assert_eq!(guarded.check_form(url), Err(unreachable()), "{url}");
        }
        assert!(guarded.check_form("not a url").is_err());
        assert!(guarded.check_form("https://1.1.1.1/hook").is_ok());
        assert!(guarded.check_form("https://1.1.1.1:443/hook").is_ok());
        let more_ports = AddressGuard {
            ports: vec![443, 8443],
            ..AddressGuard::default()
        };
        let guarded = WebhookClient::new(Arc::new(SystemResolver), more_ports);
        assert!(guarded.check_form("https://example.com:8443/").is_ok());
        let open = AddressGuard {
            allow_private: true,
            ports: vec![],
        };
        let open = WebhookClient::new(Arc::new(SystemResolver), open);
        assert!(open.check_form("http://127.0.0.1:9000/hook").is_ok());
    }
}
