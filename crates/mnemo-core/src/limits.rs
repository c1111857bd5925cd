//! Documented input limits, checked once at the edge of every write.

/// Longest memory text accepted, in bytes of UTF-8.
pub const MAX_CONTENT_BYTES: usize = 8 * 1024;
/// Longest tenant, user, agent, scope id, subject or attribute, in bytes.
pub const MAX_KEY_BYTES: usize = 256;
/// Longest source reference, in bytes.
pub const MAX_REF_BYTES: usize = 1024;
