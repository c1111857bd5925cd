//! Whose fault an error is: the one classification every crate's error maps onto, and that the
//! front ends turn into HTTP statuses, MCP errors and CLI exit codes.

use std::time::Duration;

/// The class of an error, independent of which crate raised it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The caller sent something malformed or out of range.
    InvalidInput,
    /// The addressed object does not exist (or is not visible to the caller).
    NotFound,
    /// The request conflicts with the current state.
    Conflict,
    /// The caller could not be identified (no or bad credentials).
    Unauthorized,
    /// The caller is identified but may not do this.
    Forbidden,
    /// The caller sent too many requests; retry after the given time.
    RateLimited {
        /// When a retry may succeed.
        retry_after: Duration,
    },
    /// A dependency is temporarily unavailable; retrying later may succeed.
    Unavailable {
        /// A hint for when to retry, if known.
        retry_after: Option<Duration>,
    },
    /// The store has no room for the change (disk full, or the database's size limit): the
    /// change was not made; freeing space (or forgetting memories) and retrying succeeds.
    StorageFull,
    /// A bug or an unexpected failure inside mnemo.
    Internal,
}

/// A validation failure found in caller input: which field, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct InvalidInput {
    /// The offending field or argument, as the caller named it.
    pub field: String,
    /// What is wrong, in a short phrase.
    pub problem: String,
}

impl InvalidInput {
    /// Creates a validation failure for `field`.
    pub fn new(field: impl Into<String>, problem: impl Into<String>) -> Self {
        Self { field: field.into(), problem: problem.into() }
    }
}
