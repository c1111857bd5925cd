//! The LLM extractor's proposals keep their message's sensitive category: a model that
//! rewrites "I'm trans and I feel much better since last year" into a clause that does not name the
//! category still gets it held for consent, as the rule-based extractor's clauses are.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use mnemo::core::ports::{ChatModel, ListFilter, PortError};
use mnemo::core::transcript::{Message, Role};
use mnemo::core::{FixedClock, Kind, Status, Timestamp, UserRef};
use mnemo::{IngestOptions, Mnemo};

/// A chat model that proposes one fixed statement for any message.
struct Proposes(&'static str);

impl ChatModel for Proposes {
    fn id(&self) -> &str {
        "fake/proposes"
    }

    fn complete_json(
        &self,
        _system: &str,
        _user: &str,
        _schema_name: &str,
        _schema: &serde_json::Value,
    ) -> Result<serde_json::Value, PortError> {
        Ok(serde_json::json!({"decisions": [{
            "action": "ADD", "target_id": null, "content": self.0, "kind": "semantic",
            "attribute": null, "expires_at": null
        }]}))
    }
}

fn ingest_with(model: &'static str, said: &str) -> Vec<mnemo::core::Memory> {
    let dir = tempfile::tempdir().unwrap();
    let now = Timestamp::parse("2026-03-04T10:00:00Z", "now").unwrap();
    let mnemo = Mnemo::open_sqlite(
        &dir.path().join("m.db"),
        Some(mnemo::builtin_embedder().unwrap()),
        Arc::new(FixedClock(now)),
        "test",
    )
    .unwrap()
    .with_chat_model(Arc::new(Proposes(model)));
    let who = UserRef::new("t", "u").unwrap();
    let message = Message {
        role: Role::User,
        content: said.into(),
        id: Some("m1".into()),
        ts: Some(now),
        source: None,
    };
    mnemo.ingest(&who, &[message], &IngestOptions::new("s")).unwrap();
    mnemo
        .list(&who, &ListFilter { include_expired: true, ..Default::default() })
        .unwrap()
        .into_iter()
        .filter(|m| m.kind != Kind::Episodic)
        .collect()
}

#[test]
fn a_proposal_from_a_sensitive_message_is_held_for_consent() {
    // The proposal itself names nothing sensitive; its message does.
    assert!(
        mnemo::core::screen::sensitive_category("User feels much better since last year").is_none()
    );
    let stored = ingest_with(
        "User feels much better since last year",
        "I'm trans and I feel much better since last year",
    );
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(stored[0].status, Status::Pending, "{stored:?}");
    // The same proposal from a message with no sensitive category is stored as it is.
    let plain = ingest_with("User started climbing last year", "I started climbing last year");
    assert_eq!(plain.len(), 1, "{plain:?}");
    assert_eq!(plain[0].status, Status::Active, "{plain:?}");
}
