//! Test support shared by mnemo's crates: a fake embedder for logic tests, small builders,
//! and the store conformance suite that every backend runs with the same assertions.
//!
//! A dev-dependency only: its checks panic on failure, as tests do.
#![allow(clippy::unwrap_used)]

pub mod conformance;
pub mod fake_http;
pub mod fakes;
pub mod labelled;
#[cfg(feature = "postgres")]
pub mod pg;

use mnemo_core::lifecycle::{self, Candidate, CandidateFields};
use std::sync::atomic::{AtomicU64, Ordering};

use mnemo_core::ports::{DeletionRequest, NewRecord, Store, WriteReceipt};
use mnemo_core::{MemoryId, Source, SourceType, Timestamp, UserRef};

use crate::fakes::FakeEmbedder;
use mnemo_core::ports::{Embedded, Embedder};

/// A fixed instant tests start from: 2026-01-15T12:00:00Z.
pub const T0: Timestamp = Timestamp::from_millis(1_768_478_400_000);

/// `T0` plus `days`.
pub fn day(days: i64) -> Timestamp {
    Timestamp::from_millis(T0.as_millis() + days * 86_400_000)
}

/// A deletion at `at` by `test`, with a receipt id of its own.
pub fn deletion(at: Timestamp) -> DeletionRequest<'static> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    DeletionRequest {
        now: at,
        actor: "test",
        receipt_id: format!("del-{}", NEXT.fetch_add(1, Ordering::Relaxed)),
        backup_retention: None,
        remains: Vec::new(),
    }
}

/// A user reference; panics on invalid input (test data only).
pub fn who(tenant: &str, user: &str) -> UserRef {
    UserRef::new(tenant, user).expect("valid test user")
}

/// Fields for a plain user statement.
pub fn stated(content: &str) -> CandidateFields {
    CandidateFields { content: content.to_owned(), ..Default::default() }
}

/// Fields for a keyed user statement.
pub fn keyed(content: &str, subject: &str, attribute: &str) -> CandidateFields {
    CandidateFields {
        content: content.to_owned(),
        subject: Some(subject.to_owned()),
        attribute: Some(attribute.to_owned()),
        ..Default::default()
    }
}

/// Fields with a given source channel.
pub fn from_source(
    mut fields: CandidateFields,
    source: SourceType,
    now: Timestamp,
) -> CandidateFields {
    fields.source =
        Some(Source { source_type: source, source_ref: None, captured_at: now, extractor: None });
    fields
}

/// Validates `fields` and writes them through the real decision rules, with a vector from the
/// fake embedder. The id is derived from `id`.
pub fn write(
    store: &dyn Store,
    who: &UserRef,
    id: &str,
    fields: CandidateFields,
    now: Timestamp,
) -> WriteReceipt {
    let candidate = Candidate::validate(fields, now).expect("valid test candidate");
    let embedder = FakeEmbedder::new(64);
    let vector = embedder.embed(&[&candidate.content]).expect("fake embedding").remove(0);
    let record = NewRecord {
        id: MemoryId(id.to_owned()),
        candidate,
        embedding: Some(Embedded {
            model: embedder.id().to_owned(),
            vector,
            calibration: embedder.calibration().cloned().map(std::sync::Arc::new),
        }),
    };
    store
        .write(who, record, now, "test", &|c, ctx| lifecycle::decide(c, ctx, now))
        .expect("write succeeds")
}
