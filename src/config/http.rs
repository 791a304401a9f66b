//! The settings of the HTTP edge: budgets per client, trusted proxies and the header they set,
//! CORS origins, and the client and keep-alive timeouts, each from its own variable.

use std::net::IpAddr;
use std::time::Duration;

use super::{ConfigError, list, parse_number};

/// The settings of the HTTP edge, each from its own variable. Every limit here is per instance:
/// behind a load balancer, a client may get as much from each instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpSettings {
    /// `GOLF_RATE_LIMIT_PER_MIN`: the anonymous writes (game creations and joins) a client may
    /// make per minute (and at once); [`DEFAULT_WRITES_PER_MIN`] unless set, `None` (set to 0)
    /// for no limit.
    pub writes_per_min: Option<u32>,
    /// `GOLF_READ_RATE_LIMIT_PER_MIN`: the expensive reads (exports, audits, replays, log pages)
    /// a client may make per minute (and at once); [`DEFAULT_EXPENSIVE_READS_PER_MIN`] unless
    /// set, `None` (set to 0) for no limit.
    pub expensive_reads_per_min: Option<u32>,
    /// `GOLF_MAX_EXPERT_SEATS_PER_MIN`: the expert bots a client may seat per minute (and at
    /// once), each of which plays with the most CPU; [`DEFAULT_EXPERT_SEATS_PER_MIN`] unless set,
    /// `None` (set to 0) for no limit.
    pub expert_seats_per_min: Option<u32>,
    /// `GOLF_MAX_STREAMS_PER_CLIENT`: live streams one client address may hold open at once.
    pub max_streams_per_client: u32,
    /// `GOLF_TRUSTED_PROXIES`: the proxies whose forwarding header names the client.
    pub trusted_proxies: Vec<Network>,
    /// `GOLF_CLIENT_IP_HEADER`: the header the trusted proxies set; the other one is ignored.
    pub client_ip_header: ClientIpHeader,
    /// `GOLF_CORS_ORIGINS`: the origins browsers may call the API from; none by default.
    pub cors_origins: Vec<String>,
    /// `GOLF_CLIENT_TIMEOUT_MS`: how long a client has to send a request's head, and then its
    /// body, before its connection is closed.
    pub client_timeout: Duration,
    /// `GOLF_KEEP_ALIVE_MS`: how long an idle connection stays open between requests.
    pub keep_alive: Duration,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            writes_per_min: Some(DEFAULT_WRITES_PER_MIN),
            expensive_reads_per_min: Some(DEFAULT_EXPENSIVE_READS_PER_MIN),
            expert_seats_per_min: Some(DEFAULT_EXPERT_SEATS_PER_MIN),
            max_streams_per_client: DEFAULT_MAX_STREAMS_PER_CLIENT,
            trusted_proxies: Vec::new(),
            client_ip_header: ClientIpHeader::XForwardedFor,
            cors_origins: Vec::new(),
            client_timeout: Duration::from_millis(DEFAULT_CLIENT_TIMEOUT_MS.into()),
            keep_alive: Duration::from_millis(DEFAULT_KEEP_ALIVE_MS.into()),
        }
    }
}

/// Game creations and joins a client may make a minute by default: a player makes one every few
/// minutes, and a class or an office joining at once from one address fits in the burst; a
/// script creating games in a loop is held to one a second.
pub const DEFAULT_WRITES_PER_MIN: u32 = 60;

/// Exports, audits, replays and log pages a client may ask for a minute by default: opening a
/// replay takes an export, an audit and a replay, and dragging its slider one replay per step
/// passed (a few dozen a second while it moves), which a burst of 600 covers many times over; a
/// script pulling them in a loop is held to ten a second.
pub const DEFAULT_EXPENSIVE_READS_PER_MIN: u32 = 600;

/// Expert bots a client may seat a minute by default: a player filling a table with them takes
/// three; a script seating them in a loop would keep the blocking pool, shared by every client,
/// busy with its games alone.
pub const DEFAULT_EXPERT_SEATS_PER_MIN: u32 = 6;

/// Open streams a client address may hold by default: a household or an office behind one
/// address watches a few dozen games at most.
pub const DEFAULT_MAX_STREAMS_PER_CLIENT: u32 = 100;
const DEFAULT_CLIENT_TIMEOUT_MS: u32 = 5000;
const DEFAULT_KEEP_ALIVE_MS: u32 = 5000;

/// The header in which the trusted proxies name the client. Only that one is read: a proxy
/// passes the other through as the client sent it, so reading it would let a client pick its
/// own address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientIpHeader {
    /// `X-Forwarded-For`, the default: what nginx, HAProxy, Caddy, Traefik and cloud load
    /// balancers append.
    XForwardedFor,
    /// `Forwarded` (RFC 7239), its `for=` parameters.
    Forwarded,
}

/// An address or a block of addresses (`10.0.0.0/8`, `fd00::/8`, `192.0.2.7`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    address: IpAddr,
    prefix: u8,
}

impl Network {
    /// Whether `ip` is in the block. An IPv4 address mapped into IPv6 (`::ffff:a.b.c.d`, as a
    /// dual-stack listener reports it) counts as the IPv4 one.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        let (net, ip, bits) = match (self.address, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => (u32::from(net).into(), u32::from(ip).into(), 32),
            (IpAddr::V6(net), IpAddr::V6(ip)) => (u128::from(net), u128::from(ip), 128),
            _ => return false,
        };
        let mask = match u32::from(self.prefix) {
            0 => 0,
            prefix => u128::MAX << (bits - prefix) & (u128::MAX >> (128 - bits)),
        };
        net & mask == ip & mask
    }
}

impl std::str::FromStr for Network {
    type Err = ();

    fn from_str(text: &str) -> Result<Self, ()> {
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let address: IpAddr = address.trim().parse().map_err(|_| ())?;
        let address = address.to_canonical();
        let bits = if address.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(prefix) => prefix.trim().parse::<u8>().map_err(|_| ())?,
            None => bits,
        };
        if prefix > bits {
            return Err(());
        }
        Ok(Network { address, prefix })
    }
}

pub(super) fn http_settings(
    lookup: &impl Fn(&str) -> Option<String>,
) -> Result<HttpSettings, ConfigError> {
    let writes_per_min = per_minute(lookup, "GOLF_RATE_LIMIT_PER_MIN", DEFAULT_WRITES_PER_MIN)?;
    let expensive_reads_per_min = per_minute(
        lookup,
        "GOLF_READ_RATE_LIMIT_PER_MIN",
        DEFAULT_EXPENSIVE_READS_PER_MIN,
    )?;
    let expert_seats_per_min = per_minute(
        lookup,
        "GOLF_MAX_EXPERT_SEATS_PER_MIN",
        DEFAULT_EXPERT_SEATS_PER_MIN,
    )?;
    let max_streams_per_client = parse_number(
        lookup,
        "GOLF_MAX_STREAMS_PER_CLIENT",
        DEFAULT_MAX_STREAMS_PER_CLIENT,
    )?;
    let trusted_proxies = list(lookup, "GOLF_TRUSTED_PROXIES")
        .into_iter()
        .map(|item| {
            item.parse().map_err(|_| ConfigError {
                var: "GOLF_TRUSTED_PROXIES",
                value: item,
                expected: "comma-separated addresses or blocks such as 10.0.0.1, 10.1.0.0/16, fd00::/8",
            })
        })
        .collect::<Result<_, _>>()?;
    let client_ip_header = client_ip_header(lookup)?;
    let cors_origins = list(lookup, "GOLF_CORS_ORIGINS");
    if let Some(bad) = cors_origins.iter().find(|origin| !is_origin(origin)) {
        return Err(ConfigError {
            var: "GOLF_CORS_ORIGINS",
            value: bad.clone(),
            expected: "comma-separated origins such as https://golf.example.org (scheme, host and \
                       port only, no path, no *)",
        });
    }
    let client_ms = parse_number(lookup, "GOLF_CLIENT_TIMEOUT_MS", DEFAULT_CLIENT_TIMEOUT_MS)?;
    let keep_alive_ms = parse_number(lookup, "GOLF_KEEP_ALIVE_MS", DEFAULT_KEEP_ALIVE_MS)?;
    Ok(HttpSettings {
        writes_per_min,
        expensive_reads_per_min,
        expert_seats_per_min,
        max_streams_per_client,
        trusted_proxies,
        client_ip_header,
        cors_origins,
        client_timeout: Duration::from_millis(client_ms.into()),
        keep_alive: Duration::from_millis(keep_alive_ms.into()),
    })
}

fn client_ip_header(
    lookup: &impl Fn(&str) -> Option<String>,
) -> Result<ClientIpHeader, ConfigError> {
    let Some(value) = lookup("GOLF_CLIENT_IP_HEADER") else {
        return Ok(ClientIpHeader::XForwardedFor);
    };
    match value.trim().to_ascii_lowercase().as_str() {
        "x-forwarded-for" => Ok(ClientIpHeader::XForwardedFor),
        "forwarded" => Ok(ClientIpHeader::Forwarded),
        _ => Err(ConfigError {
            var: "GOLF_CLIENT_IP_HEADER",
            value,
            expected: "x-forwarded-for or forwarded",
        }),
    }
}

/// A rate limit: `default` unless set; 0 turns it off (`None`).
fn per_minute(
    lookup: &impl Fn(&str) -> Option<String>,
    var: &'static str,
    default: u32,
) -> Result<Option<u32>, ConfigError> {
    let Some(value) = lookup(var) else {
        return Ok(Some(default));
    };
    match value.parse::<u32>() {
        Ok(0) => Ok(None),
        Ok(per_min) => Ok(Some(per_min)),
        Err(_) => Err(ConfigError {
            var,
            value,
            expected: "a whole number of requests per minute, or 0 for no limit",
        }),
    }
}

/// An origin as browsers send it in `Origin`: `scheme://host[:port]`, nothing after.
fn is_origin(text: &str) -> bool {
    match text.split_once("://") {
        Some((scheme, host)) => {
            matches!(scheme, "http" | "https")
                && !host.is_empty()
                && !host.contains(['/', '*', ' ', '?', '#'])
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_network_contains_its_addresses_and_no_other() {
        let block: Network = "10.1.0.0/16".parse().unwrap();
        assert!(block.contains("10.1.200.3".parse().unwrap()));
        assert!(!block.contains("10.2.0.1".parse().unwrap()));
        assert!(block.contains("::ffff:10.1.0.9".parse().unwrap()));
        let one: Network = "192.0.2.7".parse().unwrap();
        assert!(one.contains("192.0.2.7".parse().unwrap()));
        assert!(!one.contains("192.0.2.8".parse().unwrap()));
        let v6: Network = "fd00::/8".parse().unwrap();
        assert!(v6.contains("fd12::1".parse().unwrap()));
        assert!(!v6.contains("fe80::1".parse().unwrap()));
        assert!(!v6.contains("10.1.0.1".parse().unwrap()));
        let all: Network = "0.0.0.0/0".parse().unwrap();
        assert!(all.contains("203.0.113.9".parse().unwrap()));
    }
}
