//! The one way a lost write race is tried again, and the one back-off schedule of work that keeps
//! failing (a game whose takeover fails, a job whose pass fails, a dropped listening connection).
//!
//! A race is settled by the database (a conditional write that finds the row moved fails with
//! [`StoreError::Conflict`]); the loser reads again and decides again. The pauses between tries
//! grow and carry jitter, so that writers that collided do not collide again in step.

use std::time::Duration;

use crate::service::ServiceError;
use crate::service::games::credentials::random_bytes;
use crate::store::StoreError;

/// Tries of one write before a lost race is reported (409 `write_conflict`).
pub const MAX_ATTEMPTS: usize = 12;

/// The pause after lost race number `round` (from 0): 2 ms a round before, and up to 7 ms of
/// jitter.
pub async fn pause(round: usize) {
    let jitter = u64::from(random_bytes::<1>()[0] % 8);
    tokio::time::sleep(Duration::from_millis(2 * round as u64 + jitter)).await;
}

/// Runs `attempt` until it does not lose a race, at most [`MAX_ATTEMPTS`] times, pausing between
/// tries; a race lost every time is reported as the conflict it is.
pub async fn on_conflict<T, Attempted>(
    mut attempt: impl FnMut() -> Attempted,
) -> Result<T, ServiceError>
where
    Attempted: Future<Output = Result<T, ServiceError>>,
{
    for round in 0..MAX_ATTEMPTS {
        match attempt().await {
            Err(ServiceError::Store(StoreError::Conflict)) => pause(round).await,
            decided => return decided,
        }
    }
    Err(StoreError::Conflict.into())
}

/// A back-off schedule: the first wait, doubled after each failure in a row, at most `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub first: Duration,
    pub max: Duration,
}

impl Backoff {
    /// The wait after `failures` failures in a row (1 for the first).
    pub fn after(&self, failures: u32) -> Duration {
        self.first
            .saturating_mul(1 << failures.saturating_sub(1).min(16))
            .min(self.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn waits_double_from_the_first_up_to_the_longest() {
        let backoff = Backoff {
            first: Duration::from_secs(10),
            max: Duration::from_secs(3600),
        };
        assert_eq!(backoff.after(1), Duration::from_secs(10));
        assert_eq!(backoff.after(2), Duration::from_secs(20));
        assert_eq!(backoff.after(9), Duration::from_secs(2560));
        assert_eq!(backoff.after(10), Duration::from_secs(3600));
        assert_eq!(backoff.after(u32::MAX), Duration::from_secs(3600));
    }

    #[tokio::test]
    async fn a_lost_race_is_tried_again_and_one_lost_every_time_is_a_conflict() {
        let tries = &Cell::new(0);
        let won = on_conflict(|| async move {
            tries.set(tries.get() + 1);
            match tries.get() {
                1 | 2 => Err(StoreError::Conflict.into()),
                _ => Ok(tries.get()),
            }
        })
        .await;
        assert_eq!(won.ok(), Some(3));
        tries.set(0);
        let lost: Result<(), _> = on_conflict(|| async move {
            tries.set(tries.get() + 1);
            Err(StoreError::Conflict.into())
        })
        .await;
        assert!(matches!(
            lost,
            Err(ServiceError::Store(StoreError::Conflict))
        ));
        assert_eq!(tries.get(), MAX_ATTEMPTS);
    }
}
