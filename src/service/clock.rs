//! [`Clock`]: the service's time, which stamps log entries and decides when turn timeouts and
//! waiting games expire. The system clock, which tests (and only they) may move forward so that
//! a timeout passes without waiting for it.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use crate::engine::Timestamp;

/// The system clock, possibly set ahead. Clones share the setting, so a test that keeps a
/// clone of the clock it gave the server moves the server's time.
#[derive(Clone, Debug, Default)]
pub struct Clock {
    ahead_micros: Arc<AtomicI64>,
}

impl Clock {
    /// The system clock.
    pub fn system() -> Clock {
        Clock::default()
    }

    /// Now, as the service stamps a log entry.
    pub fn now(&self) -> Timestamp {
        let system = chrono::Utc::now().timestamp_micros();
        Timestamp(system.saturating_add(self.ahead_micros.load(Ordering::Relaxed)))
    }

    /// Sets this clock (and its clones) `by` further ahead of the system clock.
    pub fn advance(&self, by: Duration) {
        let micros = i64::try_from(by.as_micros()).unwrap_or(i64::MAX);
        self.ahead_micros.fetch_add(micros, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_advanced_clock_moves_its_clones() {
        let clock = Clock::system();
        let clone = clock.clone();
        let before = clone.now();
        clock.advance(Duration::from_secs(3600));
        let after = clone.now();
        assert!(after.0 - before.0 >= 3_600_000_000, "{before} -> {after}");
        assert!(after.0 - before.0 < 3_660_000_000, "{before} -> {after}");
    }
}
