//! The in-memory search index every store keeps per user: int8-quantised vectors and a
//! BM25F index with conversational context, built from the rows a store reads and kept in
//! step by the store's writes. It performs no I/O: the database stays the source of truth,
//! and each store decides when a cached user is stale. Sharing it is what makes search rank
//! the same on every backend.

mod kernels;
mod lexical;
mod lists;
mod user;

pub use user::{IndexRow, MEANING_POOL, Near, ScanFilter, UserIndex, cosine_of, quantize};
