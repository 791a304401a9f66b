//! Players mode's delivery lag: from a move's acknowledgment to the arrival of its entry on the
//! stream of each other seat of the game. Every seat's follower reports the entries it sees; the
//! seat that moved reports its acknowledgment; whichever comes second makes the measure (an entry
//! that reached a stream before the mover had its answer counts as no lag).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The acknowledged moves of one game and the streams that saw them first.
#[derive(Default)]
pub struct Deliveries {
    entries: Mutex<HashMap<i64, Delivery>>,
}

#[derive(Default)]
struct Delivery {
    /// The seat whose move ended at this entry, and when it had its answer.
    acked: Option<(usize, Instant)>,
    /// The seats whose stream carried the entry before that answer.
    seen_before: u32,
}

impl Deliveries {
    /// Seat `seat` had the answer to its move, which ended at entry `seq`: the lags of the other
    /// streams that carried the entry already (none).
    pub fn acked(&self, seq: i64, seat: usize) -> Vec<Duration> {
        let mut entries = self.entries.lock().expect("deliveries lock");
        let delivery = entries.entry(seq).or_default();
        delivery.acked = Some((seat, Instant::now()));
        let others = delivery.seen_before & !(1 << seat);
        vec![Duration::ZERO; others.count_ones() as usize]
    }

    /// Seat `seat`'s stream carried the entries after `from` up to `to`: the lags of those that
    /// another seat's acknowledged move ended at.
    pub fn arrived(&self, seat: usize, from: i64, to: i64) -> Vec<Duration> {
        let now = Instant::now();
        let mut entries = self.entries.lock().expect("deliveries lock");
        let mut lags = Vec::new();
        for seq in from + 1..=to {
            let delivery = entries.entry(seq).or_default();
            match delivery.acked {
                Some((mover, at)) if mover != seat => lags.push(now.saturating_duration_since(at)),
                Some(_) => {}
                None => delivery.seen_before |= 1 << seat,
            }
        }
        lags
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lag_is_measured_once_per_other_seat_whichever_comes_first() {
        let deliveries = Deliveries::default();
        // Seat 1's stream sees entry 3 before seat 0 has its answer: no lag.
        assert!(deliveries.arrived(1, 2, 3).is_empty());
        assert_eq!(deliveries.acked(3, 0), [Duration::ZERO]);
        // Seat 0's own stream is no delivery of its move.
        assert!(deliveries.arrived(0, 2, 3).is_empty());
        // Entry 5 acknowledged first, then seen by seat 1 (entry 4, a bot's, by no one).
        assert!(deliveries.acked(5, 0).is_empty());
        assert_eq!(deliveries.arrived(1, 3, 5).len(), 1);
    }
}
