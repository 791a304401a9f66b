//! The counts kept per client, each bounded in memory: the token buckets of the rate limits and
//! the stream slots.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use hashlink::LruCache;

use super::ClientKey;

/// The clients whose buckets are kept: past it, the bucket of the one seen least recently is
/// forgotten. A forgotten bucket comes back full, which only helps a client that stayed quiet
/// while this many others came by, or one with this many addresses, which has as many buckets
/// anyway.
pub(super) const BUCKETS_KEPT: usize = 10_000;

/// The clients that may hold streams at once. A client's count cannot be forgotten while it
/// holds a stream, as a bucket can: forgotten, it would let its client open its whole cap again,
/// and again. So past this many clients a new one is refused until another closes its last
/// stream. Each client counted holds a connection open, so an instance runs out of file
/// descriptors long before it refuses anyone this way.
pub(super) const STREAMING_CLIENTS_KEPT: usize = 50_000;

/// One token bucket per client: `per_min` tokens, refilled at `per_min` a minute; the buckets of
/// the `kept` clients seen most recently.
pub(super) struct RateLimiter {
    pub(super) per_min: u32,
    buckets: Mutex<LruCache<ClientKey, Bucket>>,
}

struct Bucket {
    tokens: f64,
    updated: Instant,
}

impl RateLimiter {
    pub(super) fn new(per_min: u32, kept: usize) -> Self {
        RateLimiter {
            per_min,
            buckets: Mutex::new(LruCache::new(kept)),
        }
    }

    /// Takes a token of `client`'s bucket, or says how long until one is there.
    pub(super) fn admit(&self, client: ClientKey, now: Instant) -> Result<(), Duration> {
        let capacity = f64::from(self.per_min);
        let per_second = capacity / 60.0;
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        // Taken out and put back: the client becomes the one seen last, and putting a new one
        // in forgets the one seen least recently.
        let mut bucket = buckets.remove(&client).unwrap_or(Bucket {
            tokens: capacity,
            updated: now,
        });
        let refilled = now.duration_since(bucket.updated).as_secs_f64() * per_second;
        bucket.tokens = (bucket.tokens + refilled).min(capacity);
        bucket.updated = now;
        let admitted = if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - bucket.tokens) / per_second))
        };
        buckets.insert(client, bucket);
        admitted
    }
}

/// The streams each client holds open: at most `max` each, and at most `clients` clients
/// holding any (see [`STREAMING_CLIENTS_KEPT`]). A client is counted only while it holds one.
pub(super) struct StreamSlots {
    pub(super) max: u32,
    clients: usize,
    open: Arc<Mutex<HashMap<ClientKey, u32>>>,
}

/// Why a client gets no stream slot.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum SlotRefused {
    /// It holds `max`.
    ClientFull,
    /// It holds none, and `clients` others hold some.
    InstanceFull,
}

impl StreamSlots {
    pub(super) fn new(max: u32, clients: usize) -> Self {
        StreamSlots {
            max,
            clients,
            open: Arc::default(),
        }
    }

    pub(super) fn take(&self, client: ClientKey) -> Result<StreamSlot, SlotRefused> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if !open.contains_key(&client) && open.len() >= self.clients {
            return Err(SlotRefused::InstanceFull);
        }
        let held = open.entry(client).or_default();
        if *held >= self.max {
            return Err(SlotRefused::ClientFull);
        }
        *held += 1;
        Ok(StreamSlot {
            client,
            open: Arc::clone(&self.open),
        })
    }
}

/// One open stream of a client: dropping it (the stream's end) frees the slot.
pub struct StreamSlot {
    client: ClientKey,
    open: Arc<Mutex<HashMap<ClientKey, u32>>>,
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(held) = open.get_mut(&self.client) {
            *held -= 1;
            if *held == 0 {
                open.remove(&self.client);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(text: &str) -> ClientKey {
        text.parse::<std::net::IpAddr>().unwrap().into()
    }

    #[test]
    fn a_bucket_allows_its_burst_then_one_token_per_refill_period() {
        let limiter = RateLimiter::new(6, BUCKETS_KEPT);
        let start = Instant::now();
        let client = key("192.0.2.1");
        for _ in 0..6 {
            assert!(limiter.admit(client, start).is_ok());
        }
        let wait = limiter.admit(client, start).unwrap_err();
        assert_eq!(wait, Duration::from_secs(10), "6 a minute: one every 10 s");
        assert!(limiter.admit(key("192.0.2.2"), start).is_ok(), "per client");
        assert!(
            limiter
                .admit(client, start + Duration::from_secs(9))
                .is_err()
        );
        assert!(
            limiter
                .admit(client, start + Duration::from_secs(10))
                .is_ok()
        );
        assert!(
            limiter
                .admit(client, start + Duration::from_secs(10))
                .is_err()
        );
    }

    #[test]
    fn the_buckets_of_the_clients_seen_least_recently_are_forgotten() {
        let limiter = RateLimiter::new(1, 2);
        let now = Instant::now();
        let (first, second, third) = (key("192.0.2.1"), key("192.0.2.2"), key("192.0.2.3"));
        for client in [first, second] {
            assert!(limiter.admit(client, now).is_ok());
        }
        assert!(
            limiter.admit(first, now).is_err(),
            "seen again: now the latest"
        );
        assert!(limiter.admit(third, now).is_ok(), "forgets the second");
        assert_eq!(limiter.buckets.lock().unwrap().len(), 2, "the bound");
        assert!(limiter.admit(first, now).is_err(), "kept, still empty");
        assert!(limiter.admit(second, now).is_ok(), "forgotten: full again");
    }

    #[test]
    fn a_stream_slot_is_freed_when_its_stream_ends() {
        let slots = StreamSlots::new(2, STREAMING_CLIENTS_KEPT);
        let client = key("192.0.2.1");
        let first = slots.take(client).expect("one");
        let _second = slots.take(client).expect("two");
        assert_eq!(slots.take(client).err(), Some(SlotRefused::ClientFull));
        assert!(slots.take(key("192.0.2.2")).is_ok(), "per client");
        drop(first);
        assert!(slots.take(client).is_ok());
    }

    #[test]
    fn past_its_bound_of_clients_a_new_one_gets_no_slot_until_one_leaves() {
        // Forgetting a client that holds streams would let it open its cap again: it is refused
        // instead, and those who hold slots keep them.
        let slots = StreamSlots::new(2, 2);
        let first = slots.take(key("192.0.2.1")).expect("first client");
        let _second = slots.take(key("192.0.2.2")).expect("second client");
        let third = key("192.0.2.3");
        assert_eq!(slots.take(third).err(), Some(SlotRefused::InstanceFull));
        assert!(
            slots.take(key("192.0.2.1")).is_ok(),
            "a counted client may go on"
        );
        assert_eq!(slots.open.lock().unwrap().len(), 2, "the bound");
        drop(first);
        assert!(
            slots.take(third).is_ok(),
            "the first closed its last stream"
        );
    }
}
