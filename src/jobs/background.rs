//! The store as the background threads (audits, analyses) reach it: through the instance's own
//! pool, so that an instance holds its pool's connections and one listening connection, no more;
//! and each call run on the runtime that built the service, never on the calling thread's.
//!
//! Why the detour: a connection is driven by the runtime whose task opened it, wherever it is
//! used later. A background thread's runtime stops driving anything while the thread replays a
//! log or judges a decision (seconds, for an analysis), so a connection it opened, back in the
//! pool, would stall the next request that took it. The service's runtime never computes for
//! long: the connections opened for the background threads stay as lively as the others.

use std::sync::Arc;

use tokio::runtime::Handle;

use crate::store::{EventStore, StoreError};

/// The instance's store, for threads that are not its request workers.
#[derive(Clone)]
pub struct BackgroundStore {
    store: Arc<dyn EventStore>,
    runtime: Handle,
}

impl BackgroundStore {
    /// `store`, whose calls will run on the current runtime.
    ///
    /// # Panics
    /// Outside a Tokio runtime.
    pub fn new(store: Arc<dyn EventStore>) -> Self {
        BackgroundStore {
            store,
            runtime: Handle::current(),
        }
    }

    /// Runs `call` on the store, on the service's runtime, from any thread. Once that runtime
    /// is shutting down (the server or a command is exiting), the call is dropped unrun:
    /// `Unavailable`, which the threads log as work left for later.
    pub async fn run<T, Call>(
        &self,
        call: impl FnOnce(Arc<dyn EventStore>) -> Call,
    ) -> Result<T, StoreError>
    where
        Call: Future<Output = Result<T, StoreError>> + Send + 'static,
        T: Send + 'static,
    {
        self.runtime
            .spawn(call(Arc::clone(&self.store)))
            .await
            .map_err(|error| {
                if error.is_cancelled() {
                    StoreError::Unavailable("the instance is stopping".to_owned())
                } else {
                    StoreError::Internal(format!("a background store call failed: {error}"))
                }
            })?
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store;

    #[test]
    fn a_call_after_the_service_runtime_stopped_is_unavailable() {
        let directory = tempfile::tempdir().expect("a temporary directory");
        let url = format!("sqlite://{}", directory.path().join("golf.db").display());
        let service = tokio::runtime::Runtime::new().expect("the service's runtime");
        let background = service.block_on(async {
            let store = store::connect(&url, &store::PoolOptions::default())
                .await
                .expect("a fresh SQLite database");
            BackgroundStore::new(store)
        });
        let thread = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a background thread's runtime");
        let pinged = |background: &BackgroundStore| {
            thread.block_on(background.run(|store| async move { store.ping().await }))
        };
        assert!(pinged(&background).is_ok(), "a call while the service runs");

        service.shutdown_background();
        match pinged(&background) {
            Err(StoreError::Unavailable(reason)) => assert_eq!(reason, "the instance is stopping"),
            other => panic!("expected Unavailable, got {other:?}"),
        }
    }
}
