//! The order in which a request's faults are reported (docs/API.md, "Conventions"): 404 game,
//! 401 token, 400 body, idempotent replay, 412, 409, 422. The HTTP layer parses a request before
//! the game is loaded, but may not report a body that does not parse until the game is found and
//! the token checked, so it hands the use case a [`ParsedLater`] that the use case opens at that
//! point.

use crate::service::ServiceError;

/// A request as the HTTP layer parsed it, whose fault (400 `malformed_request`) is reported only
/// when the use case opens it, after the game and the token.
#[derive(Debug, Clone)]
pub struct ParsedLater<T>(Result<T, String>);

impl<T: Clone> ParsedLater<T> {
    /// A request that parsed.
    pub fn parsed(request: T) -> Self {
        ParsedLater(Ok(request))
    }

    /// A request that did not parse, for the reason `detail` (shown to the client).
    pub fn malformed(detail: impl Into<String>) -> Self {
        ParsedLater(Err(detail.into()))
    }

    /// The request, or the 400 its fault gets: called once the game is found and the token
    /// checked. A write may open it once per attempt.
    pub fn open(&self) -> Result<T, ServiceError> {
        self.0.clone().map_err(ServiceError::Malformed)
    }
}
