//! The library's error type.

use mnemo_core::error::InvalidInput;
use mnemo_core::ports::PortError;
use mnemo_core::{ErrorKind, MemoryId};

/// Why a library operation failed. Policy refusals are not errors: they are outcomes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The caller's input is malformed or out of range.
    #[error("invalid {0}")]
    InvalidInput(#[from] InvalidInput),
    /// No such record for this tenant and user.
    #[error("memory {0} not found")]
    NotFound(MemoryId),
    /// No such run for this tenant and user.
    #[error("run {0} not found")]
    RunNotFound(String),
    /// No live key of this id in the tenant (never created, or already revoked).
    #[error("no live key {id} in tenant {tenant}")]
    KeyNotFound {
        /// The key's id.
        id: String,
        /// The tenant.
        tenant: String,
    },
    /// The run has no step of this number.
    #[error("run {run} has no step {number} (it has {count})")]
    StepNotFound {
        /// The run.
        run: String,
        /// The step asked for.
        number: u32,
        /// How many steps the run has.
        count: usize,
    },
    /// No session of this tenant and user holds turns under this id.
    #[error("session {0} not found")]
    SessionNotFound(String),
    /// No space of this id that the caller may see (a space they are not a member of answers
    /// the same).
    #[error("space {0} not found")]
    SpaceNotFound(String),
    /// The user is not a member of the space in this role.
    #[error("user {user} is not a member of space {space}")]
    MemberNotFound {
        /// The space.
        space: String,
        /// The user.
        user: String,
    },
    /// The user's role in a space does not allow the operation.
    #[error("a {role} of space {space} may not {action}")]
    SpaceRole {
        /// The space.
        space: String,
        /// The user's role there.
        role: mnemo_core::space::Role,
        /// What was asked, e.g. `write to it`.
        action: &'static str,
    },
    /// The policy gate refused a new version of a record (an edit): nothing was changed.
    #[error("edit of memory {id} refused ({reason}): {}", reason.explanation())]
    EditRefused {
        /// The record.
        id: MemoryId,
        /// Why.
        reason: mnemo_core::policy::ReasonCode,
    },
    /// Memory is switched off for the user, so an operation that would write was not run.
    #[error("memory is switched off for this user: nothing was {0} (switch it on first)")]
    MemoryOff(&'static str),
    /// A store or embedder failed.
    #[error(transparent)]
    Port(#[from] PortError),
}

impl Error {
    /// Whose fault it is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::InvalidInput(_) => ErrorKind::InvalidInput,
            Error::NotFound(_)
            | Error::RunNotFound(_)
            | Error::StepNotFound { .. }
            | Error::KeyNotFound { .. }
            | Error::SessionNotFound(_)
            | Error::SpaceNotFound(_)
            | Error::MemberNotFound { .. } => ErrorKind::NotFound,
            Error::SpaceRole { .. } => ErrorKind::Forbidden,
            Error::EditRefused { .. } | Error::MemoryOff(_) => ErrorKind::Conflict,
            Error::Port(e) => e.kind,
        }
    }
}
