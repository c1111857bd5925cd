//! The store conformance suite: one set of behaviours every [`Store`] backend must show, run
//! by each store crate through [`conformance_tests!`](crate::conformance_tests). A behaviour
//! that differs between backends fails here.

use std::collections::BTreeSet;
use std::sync::Arc;

use mnemo_core::ledger::Restatement;
use mnemo_core::lifecycle::{CandidateFields, Decision, Outcome, Remembered};
use mnemo_core::policy::{ReasonCode, UserSettings};
use mnemo_core::ports::{AuditAction, Edit, ListFilter, PortError, Store};
use mnemo_core::run::{Run, RunChange, StepStatus};
use mnemo_core::{Kind, MemoryId, SourceType, Status, Timestamp, UserRef};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use crate::{T0, day, deletion, from_source, keyed, stated, who, write};

/// A fresh, empty store under test, and a way to read its backing files.
pub trait Harness {
    /// The store.
    fn store(&self) -> Arc<dyn Store>;

    /// Every byte of the store's backing files (database and logs), or `None` for a backend
    /// whose files cannot be read directly.
    fn raw_bytes(&self) -> Option<Vec<u8>>;
}

/// Generates one `#[test]` per conformance check, each on a fresh harness from `$make`. With
/// `ignore = "why"`, every check is `#[ignore]`d for that reason (a backend that needs a
/// server: `cargo test -- --ignored` runs them once it is there).
#[macro_export]
macro_rules! conformance_tests {
    ($make:expr) => {
        $crate::conformance_tests!($make, #[test]);
    };
    ($make:expr, ignore = $why:literal) => {
        $crate::conformance_tests!($make, #[test] #[ignore = $why]);
    };
    ($make:expr, $(#[$attr:meta])+) => {
        $crate::conformance_tests!(@each $make; [$(#[$attr])+];
            write_get_round_trips_every_field,
            same_key_supersedes_leaving_one_active,
            duplicate_statement_is_skipped,
            expired_records_are_never_read_and_expire_deletes_them,
            other_users_ids_do_not_exist,
            forget_scrubs_every_copy_of_the_text,
            forget_all_scrubs_every_copy_of_the_text,
            expire_scrubs_every_copy_of_the_text,
            forget_scrubs_in_a_large_index,
            forgetting_a_turn_scrubs_it_from_its_neighbours,
            export_import_round_trips,
            edit_with_memory_off_changes_nothing,
            confirm_and_runs_with_memory_off_write_nothing,
            forget_each_deletes_a_selection_under_one_receipt,
            deletion_ledger_stops_recreation,
            deletion_receipts_say_what_went_and_outlive_the_account,
            edit_keeps_old_version_in_history,
            metadata_alone_changes_without_a_version,
            search_returns_the_records_get_returns,
            a_ranked_row_reads_only_as_its_owners_live_record,
            memory_off_writes_nothing,
            audit_never_copies_content,
            vectors_from_another_embedder_are_rejected,
            a_batch_mixing_embedders_is_rejected_whole,
            isolation_property,
            export_import_property,
            forgetting_a_source_forgets_what_was_derived_from_it,
            list_filters_by_session,
            marking_used_is_all_or_nothing_and_per_user,
            runs_persist_and_change_atomically,
            runs_are_isolated_by_user,
            ending_a_run_scrubs_its_state,
            spaces_and_members_are_kept_per_tenant,
            a_space_notebook_keeps_its_records_apart,
            a_sign_in_link_works_once_and_only_in_time,
            refined_vectors_replace_only_unchanged_records_of_their_owner,
        );
    };
    (@each $make:expr; $attrs:tt; $($check:ident),+ $(,)?) => {
        $(
            $crate::conformance_tests!(@one $make; $attrs; $check);
        )+
    };
    (@one $make:expr; [$(#[$attr:meta])+]; $check:ident) => {
        $(#[$attr])+
        fn $check() {
            $crate::conformance::$check(&$make());
        }
    };
}

fn outcome(receipt: mnemo_core::ports::WriteReceipt) -> Remembered {
    (receipt.decision, receipt.id).into()
}

/// Forgets a record; the ids removed (none when it does not exist).
fn forget_ids(store: &dyn Store, who: &UserRef, target: &MemoryId, at: Timestamp) -> Vec<MemoryId> {
    store.forget(who, target, &deletion(at)).unwrap().map_or_else(Vec::new, |r| r.removed_ids)
}

/// Forgets every record of a user; how many records went.
fn forget_all(store: &dyn Store, who: &UserRef, at: Timestamp) -> u64 {
    store.forget_all(who, &deletion(at)).unwrap().removed.records
}

fn id(text: &str) -> MemoryId {
    MemoryId(text.to_owned())
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    let needle = needle.as_bytes();
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Every field written comes back unchanged.
pub fn write_get_round_trips_every_field(h: &dyn Harness) {
    let store = h.store();
    let alice = who("acme", "alice");
    let mut fields = keyed("Prefers tea over coffee", "user", "hot drink");
    fields.kind = Some(Kind::Semantic);
    fields.importance = Some(0.8);
    fields.confidence = Some(0.9);
    fields.scope = Some("project:p1".parse().unwrap());
    fields.agent_id = Some("helper".into());
    fields.session_id = Some("s1".into());
    fields.expires_at = Some(day(30));
    fields.review_after = Some(day(10));
    fields.metadata.insert("lang".into(), "en".into());
    let mut fields = from_source(fields, SourceType::UserAction, T0);
    if let Some(source) = fields.source.as_mut() {
        source.source_ref = Some("msg-1".into());
        source.extractor = Some("rules/v1".into());
    }
    let receipt = write(&*store, &alice, "m1", fields, T0);
    assert_eq!(outcome(receipt).outcome, Outcome::Added);
    let m = store.get(&alice, &id("m1"), T0).unwrap().expect("stored");
    assert_eq!(m.id, id("m1"));
    assert_eq!((m.tenant.as_str(), m.user_id.as_str()), ("acme", "alice"));
    assert_eq!(m.scope.to_string(), "project:p1");
    assert_eq!(m.agent_id.as_deref(), Some("helper"));
    assert_eq!(m.session_id.as_deref(), Some("s1"));
    assert_eq!(m.kind, Kind::Semantic);
    assert_eq!(m.key(), Some(("user", "hot_drink")));
    assert_eq!(m.content, "Prefers tea over coffee");
    assert_eq!((m.importance, m.confidence), (0.8, 0.9));
    assert_eq!(m.source.source_type, SourceType::UserAction);
    assert_eq!(m.source.source_ref.as_deref(), Some("msg-1"));
    assert_eq!(m.source.extractor.as_deref(), Some("rules/v1"));
    assert_eq!(m.source.captured_at, T0);
    assert_eq!(m.status, Status::Active);
    assert_eq!((m.created_at, m.updated_at, m.valid_from), (T0, T0, T0));
    assert_eq!((m.expires_at, m.review_after), (Some(day(30)), Some(day(10))));
    assert_eq!((m.superseded_by.clone(), m.version, m.last_used_at), (None, 1, None));
    assert_eq!(m.metadata.get("lang").and_then(serde_json::Value::as_str), Some("en"));
    let info = m.embedding.expect("vector recorded");
    assert_eq!((info.model.as_str(), info.dims, info.vector), ("fake-words", 64, None));
}

/// A new value for a key supersedes the old one, linked, kept in history; one stays active.
pub fn same_key_supersedes_leaving_one_active(h: &dyn Harness) {
    let store = h.store();
    let alice = who("acme", "alice");
    write(&*store, &alice, "m1", keyed("Lives in Dallas", "user", "home_city"), T0);
    let receipt =
        write(&*store, &alice, "m2", keyed("Lives in Austin", "user", "home_city"), day(1));
    let r = outcome(receipt);
    assert_eq!((r.outcome, r.reason), (Outcome::Updated, ReasonCode::NewValue));
    assert_eq!(r.superseded, vec![id("m1")]);
    let old = store.get(&alice, &id("m1"), day(1)).unwrap().unwrap();
    assert_eq!((old.status, old.superseded_by), (Status::Superseded, Some(id("m2"))));
    let active = store
        .list(&alice, &ListFilter { status: Some(Status::Active), ..Default::default() }, day(1))
        .unwrap();
    assert_eq!(active.iter().map(|m| m.id.clone()).collect::<Vec<_>>(), vec![id("m2")]);
    write(&*store, &alice, "m3", keyed("Lives in Boston", "user", "home_city"), day(2));
    let history = store.history(&alice, &id("m3"), day(2)).unwrap().unwrap();
    let chain: Vec<_> = history.superseded.iter().map(|m| m.id.clone()).collect();
    assert_eq!(chain, vec![id("m2"), id("m1")]);
}

/// Re-remembering a statement (any case and spacing) is skipped, not copied.
pub fn duplicate_statement_is_skipped(h: &dyn Harness) {
    let store = h.store();
    let alice = who("acme", "alice");
    write(&*store, &alice, "m1", stated("Afraid of  spiders"), T0);
    let r = outcome(write(&*store, &alice, "m2", stated("afraid of SPIDERS "), day(1)));
    assert_eq!(
        (r.outcome, r.id, r.reason),
        (Outcome::Skipped, Some(id("m1")), ReasonCode::Duplicate)
    );
    assert_eq!(store.list(&alice, &ListFilter::default(), day(1)).unwrap().len(), 1);
}

/// Reads never return an expired record; `expire` deletes it.
pub fn expired_records_are_never_read_and_expire_deletes_them(h: &dyn Harness) {
    let store = h.store();
    let alice = who("acme", "alice");
    let mut fields = stated("In Lisbon until Friday");
    fields.expires_at = Some(day(3));
    write(&*store, &alice, "m1", fields, T0);
    write(&*store, &alice, "m2", stated("Likes jazz"), T0);
    assert!(store.get(&alice, &id("m1"), day(2)).unwrap().is_some());
    assert!(store.get(&alice, &id("m1"), day(3)).unwrap().is_none());
    assert!(store.history(&alice, &id("m1"), day(4)).unwrap().is_none());
    let listed = store.list(&alice, &ListFilter::default(), day(4)).unwrap();
    assert_eq!(listed.iter().map(|m| m.id.clone()).collect::<Vec<_>>(), vec![id("m2")]);
    let with_expired = ListFilter { include_expired: true, ..Default::default() };
    assert_eq!(store.list(&alice, &with_expired, day(4)).unwrap().len(), 2);
    assert_eq!(store.expire("acme", None, day(4), "test").unwrap(), vec![id("m1")]);
    assert_eq!(store.list(&alice, &with_expired, day(4)).unwrap().len(), 1);
}

/// Another tenant's or user's ids behave exactly like ids that do not exist.
pub fn other_users_ids_do_not_exist(h: &dyn Harness) {
    let store = h.store();
    let alice = who("acme", "alice");
    write(&*store, &alice, "m1", stated("Secret project codename is Bluebird"), T0);
    for intruder in [who("acme", "bob"), who("globex", "alice")] {
        assert!(store.get(&intruder, &id("m1"), T0).unwrap().is_none());
        assert!(store.history(&intruder, &id("m1"), T0).unwrap().is_none());
        assert!(store.list(&intruder, &ListFilter::default(), T0).unwrap().is_empty());
        assert!(store.export(&intruder).unwrap().is_empty());
        assert!(store.audit(&intruder, 100).unwrap().is_empty());
        let edit = Edit::new("hijacked", None);
        assert!(store.edit(&intruder, &id("m1"), edit, T0, "test").unwrap().is_none());
        assert!(forget_ids(&*store, &intruder, &id("m1"), T0).is_empty());
        assert_eq!(forget_all(&*store, &intruder, T0), 0);
        // The same statement written by the intruder is new to them, not a duplicate.
        let r = outcome(write(
            &*store,
            &intruder,
            &format!("x-{intruder}"),
            stated("Secret project codename is Bluebird"),
            T0,
        ));
        assert_eq!(r.outcome, Outcome::Added);
    }
    let m = store.get(&alice, &id("m1"), T0).unwrap().unwrap();
    assert_eq!((m.content.as_str(), m.version), ("Secret project codename is Bluebird", 1));
    assert!(store.expire("globex", None, day(1000), "test").unwrap().is_empty());
}

fn assert_scrubbed(h: &dyn Harness, needle: &str, when: &str) {
    if let Some(bytes) = h.raw_bytes() {
        assert!(!contains(&bytes, needle), "`{needle}` still readable in the files after {when}");
        assert!(
            !contains(&bytes, &needle.to_lowercase()),
            "lowercased `{needle}` left after {when}"
        );
    }
}

fn assert_present(h: &dyn Harness, needle: &str) {
    if let Some(bytes) = h.raw_bytes() {
        assert!(contains(&bytes, needle), "scan is blind: `{needle}` not found before deletion");
    }
}

/// After `forget`, no byte of the text (nor of its old versions or superseded values)
/// remains in the files.
pub fn forget_scrubs_every_copy_of_the_text(h: &dyn Harness) {
    let store = h.store();
    let alice = who("acme", "alice");
    write(&*store, &alice, "keep", stated("Keeps a pet iguana named Zorblax"), T0);
    write(&*store, &alice, "old", keyed("Codeword Quixotica7731 first", "user", "codeword"), T0);
    write(
        &*store,
        &alice,
        "m1",
        keyed("Codeword Vellichor4412 second", "user", "codeword"),
        day(1),
    );
    let edit = Edit::new("Codeword Petrichor9925 edited", None);
    store.edit(&alice, &id("m1"), edit, day(2), "test").unwrap().unwrap();
    for needle in ["Quixotica7731", "Vellichor4412", "Petrichor9925"] {
        assert_present(h, needle);
    }
    let removed: BTreeSet<_> = forget_ids(&*store, &alice, &id("m1"), day(3)).into_iter().collect();
    assert_eq!(removed, BTreeSet::from([id("m1"), id("old")]));
    for needle in ["Quixotica7731", "Vellichor4412", "Petrichor9925"] {
        assert_scrubbed(h, needle, "forget");
    }
    assert!(store.get(&alice, &id("m1"), day(3)).unwrap().is_none());
    assert!(store.get(&alice, &id("old"), day(3)).unwrap().is_none());
    assert_present(h, "Zorblax");
}

/// After `forget_all`, none of the user's texts remain in the files.
pub fn forget_all_scrubs_every_copy_of_the_text(h: &dyn Harness) {
    let store = h.store();
    let alice = who("acme", "alice");
    let bob = who("acme", "bob");
    for (i, word) in ["Brontide5501", "Susurrus6602", "Apricity7703"].iter().enumerate() {
        write(&*store, &alice, &format!("a{i}"), stated(&format!("Remember {word} please")), T0);
    }
    write(&*store, &bob, "b1", stated("Bob keeps Halcyon8804"), T0);
    assert_present(h, "Susurrus6602");
    assert_eq!(forget_all(&*store, &alice, day(1)), 3);
    for word in ["Brontide5501", "Susurrus6602", "Apricity7703"] {
        assert_scrubbed(h, word, "forget_all");
    }
    assert!(
        store
            .list(&alice, &ListFilter { include_expired: true, ..Default::default() }, day(1))
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.list(&bob, &ListFilter::default(), day(1)).unwrap().len(), 1);
    assert_present(h, "Halcyon8804");
}

/// After `expire`, no byte of the expired text remains in the files.
pub fn expire_scrubs_every_copy_of_the_text(h: &dyn Harness) {
    let store = h.store();
    let alice = who("acme", "alice");
    let mut fields = stated("Temporary garden plan Limerence3306");
    fields.expires_at = Some(day(1));
    write(&*store, &alice, "m1", fields, T0);
    assert_present(h, "Limerence3306");
    assert_eq!(store.expire("acme", Some("alice"), day(2), "test").unwrap(), vec![id("m1")]);
    assert_scrubbed(h, "Limerence3306", "expire");
}

/// Deletion stays complete when the full-text index spans many pages and segments, where a
/// term can also appear as a page separator key.
pub fn forget_scrubs_in_a_large_index(h: &dyn Harness) {
    let store = h.store();
    let alice = who("acme", "alice");
    let words = ["amber", "basil", "cedar", "delta", "ember", "fjord", "grove", "heron"];
    let mut stored = 0;
    for i in 0..1200 {
        let text = format!(
            "note{i:04} mentions {} and {} with token{:03}",
            words[i % words.len()],
            words[(i / 8) % words.len()],
            i % 257
        );
        let r = outcome(write(&*store, &alice, &format!("n{i}"), stated(&text), T0));
        stored += usize::from(r.outcome == Outcome::Added);
        if i == 600 {
            write(&*store, &alice, "needle", stated("Vault code Mmmsecretword0613 inside"), T0);
        }
    }
    assert_present(h, "Mmmsecretword0613");
    forget_ids(&*store, &alice, &id("needle"), day(1));
    assert_scrubbed(h, "Mmmsecretword0613", "forget in a large index");
    assert!(stored > 1000, "only {stored} filler notes stored");
    assert_eq!(store.list(&alice, &ListFilter::default(), day(1)).unwrap().len(), stored);
}

/// A conversation turn is indexed in its neighbours' context and in its session's document;
/// forgetting it (or editing it) leaves no copy there either, and the rest stay searchable.
pub fn forgetting_a_turn_scrubs_it_from_its_neighbours(h: &dyn Harness) {
    let store = h.store();
    let alice = who("acme", "alice");
    let turns = [
        "Did you pick a name for the boat?",
        "We named it Quillback7741 after the fish",
        "Lovely, when is the launch?",
        "Next Saturday at the marina",
        "I will bring snacks",
    ];
    for (i, text) in turns.iter().enumerate() {
        let mut fields = stated(text);
        fields.kind = Some(mnemo_core::Kind::Episodic);
        fields.session_id = Some("s1".into());
        let mut fields = from_source(fields, SourceType::UserStated, T0);
        if let Some(source) = fields.source.as_mut() {
            source.source_ref = Some(format!("D1:{i}"));
        }
        write(&*store, &alice, &format!("t{i}"), fields, T0);
    }
    assert_present(h, "Quillback7741");
    let edit = Edit::new("Next Saturday at Marina Zephyrine2209", None);
    store.edit(&alice, &id("t3"), edit, day(1), "test").unwrap().unwrap();
    forget_ids(&*store, &alice, &id("t1"), day(1));
    assert_scrubbed(h, "Quillback7741", "forgetting a turn");
    forget_ids(&*store, &alice, &id("t3"), day(1));
    assert_scrubbed(h, "Zephyrine2209", "forgetting an edited turn");
    assert_scrubbed(h, "the marina", "forgetting an edited turn (its earlier version)");
    let left = store.list(&alice, &ListFilter::default(), day(1)).unwrap();
    assert_eq!(left.len(), 3);
    forget_all(&*store, &alice, day(2));
    assert_scrubbed(h, "snacks", "forget_all of a conversation");
}

/// Export, import into an empty tenant, export again: the same records.
pub fn export_import_round_trips(h: &dyn Harness) {
    let store = h.store();
    let alice = who("acme", "alice");
    write(&*store, &alice, "m1", keyed("Lives in Dallas", "user", "home_city"), T0);
    write(&*store, &alice, "m2", keyed("Lives in Austin", "user", "home_city"), day(1));
    let mut fields = stated("Pending web fact");
    fields = from_source(fields, SourceType::Web, T0);
    write(&*store, &alice, "m3", fields, day(1));
    let edit = Edit::new("Lives in Austin, Texas", None);
    store.edit(&alice, &id("m2"), edit, day(2), "test").unwrap().unwrap();
    let first = store.export(&alice).unwrap();
    assert_eq!(first.len(), 3);
    assert_eq!(first[1].history.len(), 1);
    // Import under another tenant (ids are global, so the original must go first).
    forget_all(&*store, &alice, day(3));
    let restored = who("acme", "alice");
    assert_eq!(
        store.import(&restored, first.clone(), day(3), "test", true).map(|i| i.count).unwrap(),
        3
    );
    let second = store.export(&restored).unwrap();
    assert_eq!(serde_json::to_value(&first).unwrap(), serde_json::to_value(&second).unwrap());
    // Importing the same ids again conflicts and writes nothing.
    let err = store.import(&restored, first, day(4), "test", true).map(|i| i.count).unwrap_err();
    assert_eq!(err.kind, mnemo_core::ErrorKind::Conflict);
    assert_eq!(store.export(&restored).unwrap().len(), 3);
}

/// Fields said in a message `message` at `at` (as ingest writes them).
fn said_in(content: &str, message: &str, at: Timestamp) -> CandidateFields {
    let mut fields = from_source(stated(content), SourceType::UserStated, at);
    if let Some(source) = fields.source.as_mut() {
        source.source_ref = Some(message.to_owned());
    }
    fields.restatement = Restatement::SaidAt(at);
    fields
}

/// Forgetting leaves tombstones: the same statement is refused as `forgotten` on a retry, a
/// replay of its message or an import, and stored again only when the user re-states it
/// (explicitly, or in a new message after the deletion). Other users are not affected.
pub fn deletion_ledger_stops_recreation(h: &dyn Harness) {
    let store = h.store();
    let alice = who("acme", "alice");
    let bob = who("acme", "bob");
    let forgotten =
        |r: mnemo_core::ports::WriteReceipt| r.decision == Decision::Refuse(ReasonCode::Forgotten);
    write(&*store, &alice, "m1", said_in("I live in Austin.", "msg-1", T0), T0);
    let export = store.export(&alice).unwrap();
    assert_eq!(forget_ids(&*store, &alice, &id("m1"), day(1)), [id("m1")]);
    // A retry of the request, in another case and punctuation.
    assert!(forgotten(write(&*store, &alice, "m2", stated("i live in austin"), day(2))));
    // A replay of the message, dated as it was or re-dated.
    assert!(forgotten(write(
        &*store,
        &alice,
        "m3",
        said_in("I live in Austin.", "msg-1", T0),
        day(2)
    )));
    assert!(forgotten(write(
        &*store,
        &alice,
        "m4",
        said_in("I live in Austin.", "msg-1", day(2)),
        day(2)
    )));
    // A message dated before the deletion is a replay too.
    assert!(forgotten(write(
        &*store,
        &alice,
        "m5",
        said_in("I live in Austin", "msg-9", T0),
        day(2)
    )));
    // Import of the old export brings nothing back, unless the user says so.
    let imported = store.import(&alice, export.clone(), day(2), "test", false).unwrap();
    assert_eq!(imported.count, 0);
    assert_eq!(imported.forgotten, [id("m1")]);
    assert!(store.export(&alice).unwrap().is_empty());
    // Nothing of this touches another user, nor another statement.
    assert_eq!(write(&*store, &bob, "b1", stated("I live in Austin"), day(2)).id, Some(id("b1")));
    assert_eq!(write(&*store, &alice, "m6", stated("I live in Boston"), day(2)).id, Some(id("m6")));
    // A new message after the deletion re-states it.
    let restated =
        write(&*store, &alice, "m7", said_in("I live in Austin", "msg-2", day(3)), day(3));
    assert_eq!(restated.id, Some(id("m7")));
    forget_ids(&*store, &alice, &id("m7"), day(4));
    // So does an explicit re-statement, and an import the user allowed.
    let mut explicit = stated("I live in Austin");
    explicit.restatement = Restatement::Explicit;
    assert_eq!(write(&*store, &alice, "m8", explicit, day(5)).id, Some(id("m8")));
    forget_ids(&*store, &alice, &id("m8"), day(6));
    let imported = store.import(&alice, export, day(7), "test", true).unwrap();
    assert_eq!((imported.count, imported.forgotten.len()), (1, 0));
    assert_eq!(
        store.get(&alice, &id("m1"), day(7)).unwrap().map(|m| m.content),
        Some("I live in Austin.".into())
    );
}

/// A receipt per deletion: what went (records, history, derived records, versions, vectors,
/// index entries, runs), the tombstones left, and what remains; receipts are listed newest
/// first, hold no content and survive `forget --all`.
pub fn deletion_receipts_say_what_went_and_outlive_the_account(h: &dyn Harness) {
    let store = h.store();
    let alice = who("acme", "alice");
    write(
        &*store,
        &alice,
        "m1",
        keyed("Lives in Dallas with Zanzibar4711", "user", "home_city"),
        T0,
    );
    write(&*store, &alice, "m2", keyed("Lives in Austin", "user", "home_city"), day(1));
    store
        .edit(&alice, &id("m2"), Edit::new("Lives in Austin, Texas", None), day(1), "test")
        .unwrap()
        .unwrap();
    write(&*store, &alice, "m3", from_source(stated("Likes tea"), SourceType::Web, day(1)), day(1));
    write(&*store, &alice, "m4", stated("Likes jazz"), day(1));
    let receipt = store.forget(&alice, &id("m2"), &deletion(day(2))).unwrap().unwrap();
    assert_eq!(receipt.scope, mnemo_core::ledger::DeletionScope::Memory);
    assert_eq!(receipt.memory_id, Some(id("m2")));
    let removed: BTreeSet<MemoryId> = receipt.removed_ids.iter().cloned().collect();
    assert_eq!(removed, [id("m1"), id("m2")].into_iter().collect());
    assert_eq!((receipt.removed.records, receipt.removed.superseded), (2, 1));
    // The edit without a vector left m2 without one: only m1's went.
    assert_eq!((receipt.removed.versions, receipt.removed.vectors), (1, 1));
    assert_eq!(receipt.removed.index_entries, 2);
    // One tombstone per distinct statement: m1's, m2's and m2's earlier version.
    assert_eq!(receipt.tombstones, 3);
    assert!(receipt.remains.iter().any(|r| r.place == "backups"));
    assert!(!serde_json::to_string(&receipt).unwrap().contains("Zanzibar4711"));
    assert!(store.reject(&alice, &id("m3"), &deletion(day(3))).unwrap(), "m3 is pending");
    let account = store.forget_all(&alice, &deletion(day(4))).unwrap();
    assert_eq!(account.scope, mnemo_core::ledger::DeletionScope::User);
    assert_eq!(account.removed.records, 1);
    let listed = store.deletions(&alice, 10).unwrap();
    assert_eq!(listed.len(), 3);
    assert_eq!(listed[1].scope, mnemo_core::ledger::DeletionScope::Rejected);
    assert_eq!(listed[1].removed_ids, [id("m3")]);
    assert_eq!([&listed[0], &listed[2]], [&account, &receipt]);
    assert_eq!(store.deletions(&alice, 1).unwrap().len(), 1);
    assert!(store.deletions(&who("acme", "bob"), 10).unwrap().is_empty());
    assert!(store.deletions(&who("other", "alice"), 10).unwrap().is_empty());
}

/// An edit the store is asked to apply after memory was switched off (the library's gate
/// read the settings before) is refused in the edit's own transaction and changes nothing.
pub fn edit_with_memory_off_changes_nothing(h: &dyn Harness) {
    let store = h.store();
    let alice = who("acme", "edit-off");
    write(&*store, &alice, "e1", stated("Likes green tea"), T0);
    store.set_settings(&alice, UserSettings { memory_enabled: false }, day(1), "test").unwrap();
    let edit = Edit::new("Likes black coffee", None);
    let err = store.edit(&alice, &id("e1"), edit, day(1), "test").unwrap_err();
    assert_eq!(err.kind, mnemo_core::ErrorKind::Conflict);
    assert!(err.message.contains("switched off"), "{}", err.message);
    let kept = store.get(&alice, &id("e1"), day(1)).unwrap().unwrap();
    assert_eq!((kept.content.as_str(), kept.version), ("Likes green tea", 1));
}

/// With memory off, confirming a held memory and starting or changing a run are refused in
/// their own transactions and write nothing, not even an audit line; ending a run (a
/// deletion) still works.
pub fn confirm_and_runs_with_memory_off_write_nothing(h: &dyn Harness) {
    let store = h.store();
    let alice = who("acme", "confirm-off");
    let web = from_source(stated("The user lives in Oslo"), SourceType::Web, T0);
    let held = write(&*store, &alice, "p1", web, T0);
    assert!(matches!(held.decision, Decision::Insert { status: Status::Pending, .. }), "{held:?}");
    started_run(&*store, &alice, "r1", "Plan the move");
    store.set_settings(&alice, UserSettings { memory_enabled: false }, day(1), "test").unwrap();
    let audit_before = store.audit(&alice, 100).unwrap().len();

    let refused = store.confirm(&alice, &id("p1"), day(1), "test").unwrap_err();
    assert_eq!(refused.kind, mnemo_core::ErrorKind::Conflict, "{}", refused.message);
    assert!(refused.message.contains("switched off"), "{}", refused.message);
    assert_eq!(store.get(&alice, &id("p1"), day(1)).unwrap().unwrap().status, Status::Pending);

    let run = Run::start("r2".to_owned(), "Another task", day(1)).unwrap();
    let refused = store.create_run(&alice, &run, "test").unwrap_err();
    assert_eq!(refused.kind, mnemo_core::ErrorKind::Conflict, "{}", refused.message);
    let refused =
        store.update_run(&alice, "r1", &change(RunChange::AddStep("Pack".into()))).unwrap_err();
    assert_eq!(refused.kind, mnemo_core::ErrorKind::Conflict, "{}", refused.message);
    let runs = store.runs(&alice).unwrap();
    assert_eq!(
        runs.iter().map(|r| (r.id.as_str(), r.steps.len())).collect::<Vec<_>>(),
        [("r1", 0)]
    );
    assert_eq!(store.audit(&alice, 100).unwrap().len(), audit_before, "an audit line was written");

    assert!(store.end_run(&alice, "r1", day(2), "test").unwrap().is_some());
}

/// Several records are forgotten in one transaction under one receipt, with their histories;
/// unknown ids are skipped and the user's other records stay.
pub fn forget_each_deletes_a_selection_under_one_receipt(h: &dyn Harness) {
    let store = h.store();
    let alice = who("acme", "selection");
    write(&*store, &alice, "k1", keyed("Drinks tea", "user", "drink"), T0);
    write(&*store, &alice, "k2", keyed("Drinks coffee", "user", "drink"), day(1));
    write(&*store, &alice, "s1", stated("Sails on weekends"), T0);
    write(&*store, &alice, "s2", stated("Plays the cello"), T0);
    let ids = [id("k2"), id("s1"), id("nope")];
    let receipt = store.forget_each(&alice, &ids, &deletion(day(2))).unwrap().unwrap();
    let scope = serde_json::to_value(&receipt).unwrap()["scope"].clone();
    assert_eq!(scope, "selection", "{receipt:?}");
    assert_eq!((receipt.removed.records, receipt.removed.superseded), (3, 1), "{receipt:?}");
    for gone in ["k1", "k2", "s1"] {
        assert!(store.get(&alice, &id(gone), day(2)).unwrap().is_none(), "{gone} remains");
    }
    assert!(store.get(&alice, &id("s2"), day(2)).unwrap().is_some());
    assert!(store.forget_each(&alice, &[id("nope")], &deletion(day(2))).unwrap().is_none());
    assert_eq!(store.deletions(&alice, 10).unwrap().len(), 1);
}

/// `edit` writes a new version and keeps the old one in history.
pub fn edit_keeps_old_version_in_history(h: &dyn Harness) {
    let store = h.store();
    let alice = who("acme", "alice");
    write(&*store, &alice, "m1", stated("Works at Acme"), T0);
    let edit = Edit::new("Works at Acme Corp", None);
    let m = store.edit(&alice, &id("m1"), edit, day(1), "test").unwrap().unwrap();
    assert_eq!((m.content.as_str(), m.version, m.updated_at), ("Works at Acme Corp", 2, day(1)));
    let history = store.history(&alice, &id("m1"), day(1)).unwrap().unwrap();
    assert_eq!(history.versions.len(), 1);
    assert_eq!(
        (history.versions[0].content.as_str(), history.versions[0].version),
        ("Works at Acme", 1)
    );
    // A superseded record cannot be edited.
    write(&*store, &alice, "k1", keyed("Tea", "user", "drink"), T0);
    write(&*store, &alice, "k2", keyed("Coffee", "user", "drink"), day(1));
    let edit = Edit::new("Water", None);
    let err = store.edit(&alice, &id("k1"), edit, day(2), "test").unwrap_err();
    assert_eq!(err.kind, mnemo_core::ErrorKind::Conflict);
}

/// An edit of the metadata alone replaces it and keeps the statement, its version and its
/// vector; an edit of the text later keeps the new metadata.
pub fn metadata_alone_changes_without_a_version(h: &dyn Harness) {
    let store = h.store();
    let alice = who("acme", "alice");
    let mut fields = stated("Works at Acme");
    fields.metadata.insert("team".into(), "red".into());
    write(&*store, &alice, "m1", fields, T0);
    let before = store.get(&alice, &id("m1"), T0).unwrap().unwrap();
    let metadata: mnemo_core::Metadata =
        [("team".to_owned(), serde_json::json!("blue")), ("rank".to_owned(), 2.into())].into();
    let edit = Edit { metadata: Some(metadata.clone()), ..Edit::new("Works at Acme", None) };
    let m = store.edit(&alice, &id("m1"), edit, day(1), "test").unwrap().unwrap();
    assert_eq!((m.metadata.clone(), m.version, m.updated_at), (metadata.clone(), 1, day(1)));
    assert_eq!((m.content.as_str(), &m.embedding), ("Works at Acme", &before.embedding));
    let history = store.history(&alice, &id("m1"), day(1)).unwrap().unwrap();
    assert!(history.versions.is_empty(), "{:?}", history.versions);
    let m = store.edit(&alice, &id("m1"), Edit::new("Works at Acme Corp", None), day(2), "test");
    let m = m.unwrap().unwrap();
    assert_eq!((m.version, m.metadata), (2, metadata));
    let other = store.get(&who("acme", "bob"), &id("m1"), day(2)).unwrap();
    assert!(other.is_none());
    // An expiry set, then removed, alone: the statement and its version stay.
    let until = Edit { expires_at: Some(Some(day(9))), ..Edit::new("Works at Acme Corp", None) };
    let m = store.edit(&alice, &id("m1"), until, day(3), "test").unwrap().unwrap();
    assert_eq!((m.expires_at, m.version), (Some(day(9)), 2));
    assert!(store.get(&alice, &id("m1"), day(10)).unwrap().is_none(), "expired at day 9");
    let forever = Edit { expires_at: Some(None), ..Edit::new("Works at Acme Corp", None) };
    let m = store.edit(&alice, &id("m1"), forever, day(4), "test").unwrap().unwrap();
    assert_eq!((m.expires_at, m.version), (None, 2));
    assert!(store.get(&alice, &id("m1"), day(10)).unwrap().is_some());
}

/// A search returns each record exactly as `get` does (every field, its embedder included),
/// with and without a query vector, and a record stored without a vector says it has none.
pub fn search_returns_the_records_get_returns(h: &dyn Harness) {
    use mnemo_core::ports::{Embedder, SearchFilter, SearchQuery};
    let store = h.store();
    let alice = who("acme", "alice");
    write(&*store, &alice, "v1", stated("Tea with lemon every morning"), T0);
    let bare = mnemo_core::lifecycle::Candidate::validate(stated("Tea in the garden"), T0).unwrap();
    let record = mnemo_core::ports::NewRecord { id: id("v0"), candidate: bare, embedding: None };
    store
        .write(&alice, record, T0, "test", &|c, ctx| mnemo_core::lifecycle::decide(c, ctx, T0))
        .unwrap();
    let embedder = crate::fakes::FakeEmbedder::new(64);
    let vector = mnemo_core::ports::Embedded {
        model: embedder.id().to_owned(),
        vector: embedder.embed(&["tea"]).unwrap().remove(0),
        calibration: None,
    };
    let terms = vec!["tea".to_owned()];
    let filter = SearchFilter::default();
    let take_all = |signals: &mnemo_core::retrieval::Signals<'_>| {
        (0..signals.rows.len())
            .map(|index| mnemo_core::retrieval::Fused { index, score: 0.0, evidence: 1.0 })
            .collect()
    };
    for query_vector in [Some(&vector), None] {
        let query = SearchQuery {
            terms: &terms,
            modifiers: &[],
            vector: query_vector,
            common: None,
            filter: &filter,
            notebooks: 1,
        };
        let found = store.search(&alice, &query, T0, &take_all).unwrap();
        assert_eq!(found.len(), 2, "{found:?}");
        for hit in found {
            let stored = store.get(&alice, &hit.memory.id, T0).unwrap().unwrap();
            assert_eq!(hit.memory, stored);
        }
    }
    let with = store.get(&alice, &id("v1"), T0).unwrap().unwrap();
    assert_eq!(with.embedding.map(|e| (e.model, e.dims)), Some((embedder.id().to_owned(), 64)));
    assert!(store.get(&alice, &id("v0"), T0).unwrap().unwrap().embedding.is_none());
}

/// A ranking is read back only as its owner's records that are still retrievable: a row
/// forgotten or expired since it was ranked, or named by another user, reads as nothing.
pub fn a_ranked_row_reads_only_as_its_owners_live_record(h: &dyn Harness) {
    use mnemo_core::ports::{SearchFilter, SearchQuery};
    let store = h.store();
    let (alice, bob) = (who("acme", "alice"), who("acme", "bob"));
    write(&*store, &alice, "a1", stated("Tea with lemon every morning"), T0);
    write(&*store, &alice, "a2", stated("Tea in the garden on Sundays"), T0);
    let mut brief = stated("Tea at the office until noon");
    brief.expires_at = Some(Timestamp::from_millis(T0.as_millis() + 3_600_000));
    write(&*store, &alice, "a3", brief, T0);
    write(&*store, &bob, "b1", stated("Tea without sugar"), T0);
    let terms = vec!["tea".to_owned()];
    let filter = SearchFilter::default();
    let query = SearchQuery {
        terms: &terms,
        modifiers: &[],
        vector: None,
        common: None,
        filter: &filter,
        notebooks: 1,
    };
    let take_all = |signals: &mnemo_core::retrieval::Signals<'_>| {
        (0..signals.rows.len())
            .map(|index| mnemo_core::retrieval::Fused { index, score: 0.0, evidence: 1.0 })
            .collect()
    };
    let ranked = store.rank(&alice, &query, T0, &take_all).unwrap();
    let ids = |found: Vec<mnemo_core::ports::Found>| {
        let mut ids: Vec<String> = found.into_iter().map(|f| f.memory.id.0).collect();
        ids.sort();
        ids
    };
    assert_eq!(ids(store.read_ranked(&alice, &ranked, T0).unwrap()), ["a1", "a2", "a3"]);
    // Another user naming alice's rows reads nothing, and alice none of bob's.
    assert!(store.read_ranked(&bob, &ranked, T0).unwrap().is_empty());
    let bobs = store.rank(&bob, &query, T0, &take_all).unwrap();
    assert_eq!(bobs.len(), 1);
    assert!(store.read_ranked(&alice, &bobs, T0).unwrap().is_empty());
    // Forgotten since: gone from the reading; expired by the time of reading: left out.
    forget_ids(&*store, &alice, &id("a2"), T0);
    assert_eq!(ids(store.read_ranked(&alice, &ranked, T0).unwrap()), ["a1", "a3"]);
    assert_eq!(ids(store.read_ranked(&alice, &ranked, day(1)).unwrap()), ["a1"]);
}

/// With memory off, a write is refused and leaves no record and no audit line.
pub fn memory_off_writes_nothing(h: &dyn Harness) {
    let store = h.store();
    let alice = who("acme", "alice");
    store.set_settings(&alice, UserSettings { memory_enabled: false }, T0, "test").unwrap();
    let audit_before = store.audit(&alice, 100).unwrap().len();
    let receipt = write(&*store, &alice, "m1", stated("Likes tea"), T0);
    assert_eq!(receipt.decision, Decision::Refuse(ReasonCode::MemoryDisabled));
    assert!(
        store
            .list(&alice, &ListFilter { include_expired: true, ..Default::default() }, T0)
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.audit(&alice, 100).unwrap().len(), audit_before);
    store.set_settings(&alice, UserSettings::default(), T0, "test").unwrap();
    assert_eq!(
        outcome(write(&*store, &alice, "m1", stated("Likes tea"), T0)).outcome,
        Outcome::Added
    );
}

/// Audit entries name decisions and ids, never content.
pub fn audit_never_copies_content(h: &dyn Harness) {
    let store = h.store();
    let alice = who("acme", "alice");
    write(&*store, &alice, "m1", keyed("Blood type Zeta", "user", "blood"), T0);
    write(&*store, &alice, "m2", keyed("Blood type Omega", "user", "blood"), day(1));
    forget_ids(&*store, &alice, &id("m2"), day(2));
    let entries = store.audit(&alice, 100).unwrap();
    let actions: Vec<_> = entries.iter().rev().map(|e| e.action).collect();
    assert_eq!(
        actions,
        vec![
            AuditAction::Added,
            AuditAction::Superseded,
            AuditAction::Updated,
            AuditAction::Forgotten,
            AuditAction::Forgotten,
        ]
    );
    let json = serde_json::to_string(&entries).unwrap();
    assert!(!json.contains("Zeta") && !json.contains("Omega"), "{json}");
}

/// Within one batch too: once a record's vector has matched the file's embedder, a later
/// record of another embedder (or of other dimensions) still fails, and the whole batch with
/// it.
pub fn a_batch_mixing_embedders_is_rejected_whole(h: &dyn Harness) {
    use mnemo_core::ports::{Embedded, Embedder, NewRecord};
    let store = h.store();
    let alice = who("acme", "alice");
    write(&*store, &alice, "m1", stated("First"), T0);
    let embedder = crate::fakes::FakeEmbedder::new(64);
    let record = |name: &str, text: &str, model: &str, dims: usize| {
        let candidate = mnemo_core::lifecycle::Candidate::validate(stated(text), T0).unwrap();
        let mut vector = embedder.embed(&[text]).unwrap().remove(0);
        vector.resize(dims, 0.5);
        NewRecord {
            id: id(name),
            candidate,
            embedding: Some(Embedded { model: model.into(), vector, calibration: None }),
        }
    };
    for (model, dims) in [("other", 64), (embedder.id(), 32)] {
        let batch = vec![
            record("m2", "Second", embedder.id(), 64),
            record("m3", "Third", embedder.id(), 64),
            record("m4", "Fourth", model, dims),
        ];
        let err = store
            .write_batch(&alice, batch, T0, "test", &|c, ctx| {
                mnemo_core::lifecycle::decide(c, ctx, T0)
            })
            .unwrap_err();
        assert_eq!(err.kind, mnemo_core::ErrorKind::InvalidInput, "{model}/{dims}");
        assert!(err.message.contains("embedder mismatch"), "{}", err.message);
        for name in ["m2", "m3", "m4"] {
            assert!(store.get(&alice, &id(name), T0).unwrap().is_none(), "{name}: {model}/{dims}");
        }
    }
}

/// A vector from a different embedder (or of other dimensions) is an error, never mixed in.
pub fn vectors_from_another_embedder_are_rejected(h: &dyn Harness) {
    let store = h.store();
    let alice = who("acme", "alice");
    write(&*store, &alice, "m1", stated("First"), T0);
    let candidate = mnemo_core::lifecycle::Candidate::validate(stated("Second"), T0).unwrap();
    let record = mnemo_core::ports::NewRecord {
        id: id("m2"),
        candidate,
        embedding: Some(mnemo_core::ports::Embedded {
            model: "other".into(),
            vector: vec![1.0; 8],
            calibration: None,
        }),
    };
    let err = store
        .write(&alice, record, T0, "test", &|c, ctx| mnemo_core::lifecycle::decide(c, ctx, T0))
        .unwrap_err();
    assert_eq!(err.kind, mnemo_core::ErrorKind::InvalidInput);
    assert!(err.message.contains("embedder mismatch"), "{}", err.message);
    assert!(store.get(&alice, &id("m2"), T0).unwrap().is_none());
}

/// One step of the isolation property: an operation by one of several users.
#[derive(Debug, Clone)]
enum Op {
    Write { user: usize, key: Option<u8>, text: u8 },
    Edit { user: usize, target: usize },
    Forget { user: usize, target: usize },
    ForgetAll { user: usize },
}

const USERS: [(&str, &str); 3] = [("t1", "u1"), ("t1", "u2"), ("t2", "u1")];

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..3usize, proptest::option::of(0..3u8), 0..6u8)
            .prop_map(|(user, key, text)| Op::Write { user, key, text }),
        2 => (0..3usize, 0..64usize).prop_map(|(user, target)| Op::Edit { user, target }),
        2 => (0..3usize, 0..64usize).prop_map(|(user, target)| Op::Forget { user, target }),
        1 => (0..3usize).prop_map(|user| Op::ForgetAll { user }),
    ]
}

/// Property: under any sequence of writes, edits and deletions by several tenants and users,
/// every read returns only the reader's own records, an operation on another's id changes
/// nothing, and no key ever has two active records.
pub fn isolation_property(h: &dyn Harness) {
    let mut runner = TestRunner::new(Config { cases: 24, ..Config::default() });
    let round = std::cell::Cell::new(0usize);
    let result = runner.run(&proptest::collection::vec(op_strategy(), 1..24), |ops| {
        round.set(round.get() + 1);
        let round = round.get();
        let store = h.store();
        let users: Vec<UserRef> = USERS.iter().map(|(t, u)| who(t, u)).collect();
        let mut owner: Vec<(MemoryId, usize)> = Vec::new();
        for (step, op) in ops.iter().enumerate() {
            let now = Timestamp::from_millis(T0.as_millis() + step as i64 * 1000);
            match op {
                Op::Write { user, key, text } => {
                    let content = format!("fact {text} of {user}");
                    let fields = match key {
                        Some(k) => keyed(&content, "user", &format!("attr{k}")),
                        None => stated(&content),
                    };
                    let new_id = format!("r{round}-{step}");
                    let r = outcome(write(&*store, &users[*user], &new_id, fields, now));
                    if matches!(r.outcome, Outcome::Added | Outcome::Updated | Outcome::Pending) {
                        owner.push((MemoryId(new_id), *user));
                    }
                }
                Op::Edit { user, target } => {
                    if let Some((target_id, target_owner)) = owner.get(*target % owner.len().max(1))
                    {
                        let edit = Edit::new(format!("edited by {user}"), None);
                        let result = store.edit(&users[*user], target_id, edit, now, "test");
                        if *user != *target_owner {
                            prop_assert!(matches!(result, Ok(None)), "foreign edit: {result:?}");
                        }
                    }
                }
                Op::Forget { user, target } => {
                    if let Some((target_id, target_owner)) = owner.get(*target % owner.len().max(1))
                    {
                        let removed = forget_ids(&*store, &users[*user], target_id, now);
                        if *user != *target_owner {
                            prop_assert!(removed.is_empty(), "foreign forget removed {removed:?}");
                        }
                    }
                }
                Op::ForgetAll { user } => {
                    forget_all(&*store, &users[*user], now);
                }
            }
            let later = Timestamp::from_millis(now.as_millis() + 1);
            for (index, user) in users.iter().enumerate() {
                let all = ListFilter { include_expired: true, ..Default::default() };
                let listed = store.list(user, &all, later).unwrap();
                for m in &listed {
                    prop_assert_eq!(
                        (&m.tenant, &m.user_id),
                        (&user.tenant().to_owned(), &user.user_id().to_owned())
                    );
                    let own_edit = format!("edited by {index}");
                    prop_assert!(
                        !m.content.starts_with("edited by") || m.content == own_edit,
                        "foreign edit visible: {}",
                        m.content
                    );
                }
                let mut active_keys = BTreeSet::new();
                for m in listed.iter().filter(|m| m.status == Status::Active) {
                    if let Some(key) = m.key() {
                        prop_assert!(
                            active_keys.insert((
                                m.scope.to_string(),
                                key.0.to_owned(),
                                key.1.to_owned()
                            )),
                            "two active records for {key:?}"
                        );
                    }
                }
                for (other_id, other_owner) in &owner {
                    if *other_owner != index {
                        prop_assert!(store.get(user, other_id, later).unwrap().is_none());
                        prop_assert!(store.history(user, other_id, later).unwrap().is_none());
                    }
                }
            }
        }
        Ok(())
    });
    if let Err(failure) = result {
        panic!("isolation property failed: {failure}");
    }
}

/// Property: whatever a user's records are (kinds, keys, supersessions, edits, expiry,
/// pending items), export → forget all → import → export gives the same records.
pub fn export_import_property(h: &dyn Harness) {
    let mut runner = TestRunner::new(Config { cases: 16, ..Config::default() });
    let step = (0..4u8, proptest::option::of(0..3u8), 0..8u8, any::<bool>(), any::<bool>());
    let result = runner.run(&proptest::collection::vec(step, 1..12), |steps| {
        let store = h.store();
        let alice = who("acme", "alice");
        let kinds = [Kind::Semantic, Kind::Episodic, Kind::Procedural, Kind::Profile];
        for (i, (kind, key, text, expiring, untrusted)) in steps.iter().enumerate() {
            let now = Timestamp::from_millis(T0.as_millis() + i as i64 * 60_000);
            let content = format!("statement {text} number {i}");
            let mut fields = match key {
                Some(k) => keyed(&content, "user", &format!("attr{k}")),
                None => stated(&content),
            };
            fields.kind = Some(kinds[*kind as usize]);
            if *expiring {
                fields.expires_at = Some(day(30));
            }
            if *untrusted {
                fields = from_source(fields, SourceType::Document, now);
            }
            let r = outcome(write(&*store, &alice, &format!("x{i}"), fields, now));
            if r.outcome == Outcome::Added && text % 3 == 0 {
                let edit = Edit::new(format!("edited {content}"), None);
                store.edit(&alice, &id(&format!("x{i}")), edit, now, "test").unwrap();
            }
        }
        let first = store.export(&alice).unwrap();
        forget_all(&*store, &alice, day(1));
        prop_assert!(store.export(&alice).unwrap().is_empty());
        prop_assert_eq!(
            store.import(&alice, first.clone(), day(1), "test", true).map(|i| i.count).unwrap(),
            first.len()
        );
        let second = store.export(&alice).unwrap();
        prop_assert_eq!(
            serde_json::to_value(&first).unwrap(),
            serde_json::to_value(&second).unwrap()
        );
        Ok(())
    });
    if let Err(failure) = result {
        panic!("export/import property failed: {failure}");
    }
}

fn started_run(store: &dyn Store, owner: &UserRef, id: &str, goal: &str) -> Run {
    let run = Run::start(id.to_owned(), goal, T0).unwrap();
    store.create_run(owner, &run, "test").unwrap();
    run
}

fn change(change: RunChange) -> impl Fn(&mut Run) -> Result<(), PortError> {
    move |run: &mut Run| {
        run.apply(&change, day(1))
            .map_err(|e| PortError::new(mnemo_core::ErrorKind::InvalidInput, e.to_string()))
    }
}

/// A run is stored whole, changes apply in order, a refused change leaves it as it was, and
/// ids are unique.
pub fn runs_persist_and_change_atomically(h: &dyn Harness) {
    let store = h.store();
    let alice = who("acme", "alice");
    let run = started_run(&*store, &alice, "r1", "Migrate the billing service");
    assert_eq!(store.run(&alice, "r1").unwrap(), Some(run.clone()));
    let again = store.create_run(&alice, &run, "test").unwrap_err();
    assert_eq!(again.kind, mnemo_core::ErrorKind::Conflict);
    store.update_run(&alice, "r1", &change(RunChange::AddStep("Dump the schema".into()))).unwrap();
    let done = RunChange::SetStatus { number: 1, status: StepStatus::Done };
    let updated = store.update_run(&alice, "r1", &change(done)).unwrap().unwrap();
    assert_eq!(updated.steps[0].status, StepStatus::Done);
    let bad = RunChange::SetStatus { number: 9, status: StepStatus::Blocked };
    let err = store.update_run(&alice, "r1", &change(bad)).unwrap_err();
    assert_eq!(err.kind, mnemo_core::ErrorKind::InvalidInput);
    assert_eq!(store.run(&alice, "r1").unwrap(), Some(updated));
    assert!(
        store
            .update_run(&alice, "nope", &change(RunChange::AddStep("x".into())))
            .unwrap()
            .is_none()
    );
    started_run(&*store, &alice, "r2", "Second task");
    let ids: Vec<String> = store.runs(&alice).unwrap().into_iter().map(|r| r.id).collect();
    assert_eq!(ids, ["r1", "r2"]);
    let actions: Vec<AuditAction> =
        store.audit(&alice, 10).unwrap().into_iter().map(|e| e.action).collect();
    assert_eq!(actions, [AuditAction::RunStarted, AuditAction::RunStarted]);
}

/// Another user's run does not exist: it cannot be read, listed, changed or ended.
pub fn runs_are_isolated_by_user(h: &dyn Harness) {
    let store = h.store();
    let alice = who("acme", "alice");
    started_run(&*store, &alice, "r1", "Alice's private task");
    for intruder in [who("acme", "bob"), who("globex", "alice")] {
        assert_eq!(store.run(&intruder, "r1").unwrap(), None);
        assert!(store.runs(&intruder).unwrap().is_empty());
        let add = change(RunChange::AddStep("hijack".into()));
        assert!(store.update_run(&intruder, "r1", &add).unwrap().is_none());
        assert!(store.end_run(&intruder, "r1", day(1), "test").unwrap().is_none());
    }
    let run = store.run(&alice, "r1").unwrap().unwrap();
    assert!(run.steps.is_empty());
}

/// Ending a run deletes its state from the files and leaves one audit entry naming the run
/// and nothing of its content; forgetting a user deletes their runs too.
pub fn ending_a_run_scrubs_its_state(h: &dyn Harness) {
    let store = h.store();
    let alice = who("acme", "alice");
    started_run(&*store, &alice, "r1", "Investigate Zanzibarian4471 outage");
    let evidence = RunChange::AddEvidence {
        source_id: "runbook.md".into(),
        excerpt: "restart the Quokkafold9313 pool".into(),
    };
    store.update_run(&alice, "r1", &change(evidence)).unwrap().unwrap();
    for needle in ["Zanzibarian4471", "Quokkafold9313"] {
        assert_present(h, needle);
    }
    let ended = store.end_run(&alice, "r1", day(2), "test").unwrap().unwrap();
    assert_eq!(ended.evidence.len(), 1);
    assert_eq!(store.run(&alice, "r1").unwrap(), None);
    assert!(store.end_run(&alice, "r1", day(2), "test").unwrap().is_none());
    for needle in ["Zanzibarian4471", "Quokkafold9313"] {
        assert_scrubbed(h, needle, "end_run");
    }
    let last = store.audit(&alice, 1).unwrap().remove(0);
    assert_eq!((last.action, last.run_id.as_deref()), (AuditAction::RunEnded, Some("r1")));
    started_run(&*store, &alice, "r2", "Another Pomegranix5582 task");
    forget_all(&*store, &alice, day(3));
    assert!(store.runs(&alice).unwrap().is_empty());
    assert_scrubbed(h, "Pomegranix5582", "forget_all");
}

/// A record derived from others (a session summary) is forgotten with any of its sources,
/// completely and in the same transaction; its sources are not forgotten with it; expiry of
/// a source (the end of a transcript's retention) leaves it, since it is meant to outlive it.
pub fn forgetting_a_source_forgets_what_was_derived_from_it(h: &dyn Harness) {
    let store = h.store();
    let alice = who("acme", "alice");
    write(&*store, &alice, "t1", stated("We picked the Quillmore7719 venue"), T0);
    assert_present(h, "Quillmore7719");
    write(&*store, &alice, "t2", stated("Catering is still open"), T0);
    let summary = CandidateFields {
        derived_from: vec![id("t1"), id("t2")],
        ..stated("Recap of the planning chat: hall booked, food remains undecided, budget unknown")
    };
    let receipt = write(&*store, &alice, "sum", summary, T0);
    assert_eq!(outcome(receipt).outcome, Outcome::Added);
    let read = store.get(&alice, &id("sum"), T0).unwrap().unwrap();
    assert_eq!(read.derived_from, [id("t1"), id("t2")]);
    // Forgetting the summary leaves its sources.
    let fact =
        CandidateFields { derived_from: vec![id("t2")], ..stated("Catering needs a decision") };
    write(&*store, &alice, "fact", fact, T0);
    assert_eq!(forget_ids(&*store, &alice, &id("fact"), day(1)), [id("fact")]);
    assert!(store.get(&alice, &id("t2"), day(1)).unwrap().is_some());
    // Forgetting a source removes the summary too.
    let removed: BTreeSet<_> = forget_ids(&*store, &alice, &id("t1"), day(1)).into_iter().collect();
    assert_eq!(removed, BTreeSet::from([id("t1"), id("sum")]));
    assert!(store.get(&alice, &id("sum"), day(1)).unwrap().is_none());
    assert!(store.get(&alice, &id("t2"), day(1)).unwrap().is_some());
    assert_scrubbed(h, "Quillmore7719", "forgetting a source of a summary");
    assert_scrubbed(h, "budget unknown", "forgetting a source of a summary");
    // Expiry of a source leaves what was derived from it.
    let expiring = CandidateFields { expires_at: Some(day(2)), ..stated("Turn that expires") };
    write(&*store, &alice, "t3", expiring, day(1));
    let kept = CandidateFields { derived_from: vec![id("t3")], ..stated("Summary that stays") };
    write(&*store, &alice, "sum2", kept, day(1));
    assert_eq!(store.expire("acme", None, day(3), "test").unwrap(), [id("t3")]);
    assert!(store.get(&alice, &id("sum2"), day(3)).unwrap().is_some());
    // Another user cannot forget alice's source, nor what was derived from it.
    let bob = who("acme", "bob");
    assert!(forget_ids(&*store, &bob, &id("t2"), day(3)).is_empty());
    assert!(store.get(&alice, &id("t2"), day(3)).unwrap().is_some());
}

/// Listing by session returns that session's records of the user only.
pub fn list_filters_by_session(h: &dyn Harness) {
    let store = h.store();
    let alice = who("acme", "alice");
    let in_session = |content: &str, session: &str| CandidateFields {
        session_id: Some(session.to_owned()),
        ..stated(content)
    };
    write(&*store, &alice, "a1", in_session("Booked the train to Ghent", "trip"), T0);
    write(&*store, &alice, "a2", in_session("Packed the rain jacket", "trip"), T0);
    write(&*store, &alice, "a3", in_session("Renewed the library card", "errands"), T0);
    write(&*store, &alice, "a4", stated("Likes quiet cafes"), T0);
    let bob = who("acme", "bob");
    write(&*store, &bob, "b1", in_session("Bob's own trip note", "trip"), T0);
    let filter = ListFilter { session: Some("trip".into()), ..Default::default() };
    let ids: BTreeSet<MemoryId> =
        store.list(&alice, &filter, T0).unwrap().into_iter().map(|m| m.id).collect();
    assert_eq!(ids, BTreeSet::from([id("a1"), id("a2")]));
    let none = ListFilter { session: Some("nope".into()), ..Default::default() };
    assert!(store.list(&alice, &none, T0).unwrap().is_empty());
    assert_eq!(store.list(&alice, &ListFilter::default(), T0).unwrap().len(), 4);
}

/// Marking memories used sets their `last_used_at`, all of them or none: a list with an id the
/// user has no record of (another user's, or made up) changes nothing and names that id.
pub fn marking_used_is_all_or_nothing_and_per_user(h: &dyn Harness) {
    let store = h.store();
    let (alice, bob) = (who("acme", "alice"), who("acme", "bob"));
    write(&*store, &alice, "a1", stated("Alice likes green tea"), T0);
    write(&*store, &alice, "a2", stated("Alice plays the cello"), T0);
    write(&*store, &bob, "b1", stated("Bob likes coffee"), T0);
    let ids = |names: &[&str]| names.iter().map(|n| MemoryId((*n).to_owned())).collect::<Vec<_>>();
    let last_used = |user: &UserRef, id: &str| {
        store.get(user, &MemoryId(id.to_owned()), day(2)).unwrap().unwrap().last_used_at
    };
    assert_eq!(store.mark_used(&alice, &ids(&["a1", "b1"]), day(1)).unwrap(), ids(&["b1"]));
    assert_eq!(store.mark_used(&alice, &ids(&["a2", "nope"]), day(1)).unwrap(), ids(&["nope"]));
    assert_eq!((last_used(&alice, "a1"), last_used(&alice, "a2")), (None, None));
    assert_eq!(last_used(&bob, "b1"), None);
    assert!(store.mark_used(&alice, &ids(&["a1", "a2", "a1"]), day(1)).unwrap().is_empty());
    assert_eq!((last_used(&alice, "a1"), last_used(&alice, "a2")), (Some(day(1)), Some(day(1))));
    assert_eq!(last_used(&bob, "b1"), None);
}

fn space(tenant: &str, id: &str) -> mnemo_core::space::Space {
    mnemo_core::space::Space {
        tenant: tenant.to_owned(),
        id: id.to_owned(),
        name: format!("Space {id}"),
        description: Some("what it is for".to_owned()),
        maintainers_write_directly: false,
        on_author_deleted: mnemo_core::space::OnAuthorDeleted::Remove,
        created_at: T0,
        created_by: "test".to_owned(),
    }
}

fn member(space: &str, user: &str, role: mnemo_core::space::Role) -> mnemo_core::space::Member {
    mnemo_core::space::Member {
        space_id: space.to_owned(),
        user_id: user.to_owned(),
        role,
        added_at: day(1),
        added_by: "test".to_owned(),
    }
}

/// Spaces and their members belong to one tenant: the same id in two tenants is two spaces, a
/// second space with an id is a conflict, a member of a missing space is not found, a role
/// is replaced, and deleting a space ends its memberships.
pub fn spaces_and_members_are_kept_per_tenant(h: &dyn Harness) {
    use mnemo_core::space::Role;
    let store = h.store();
    store.create_space(&space("acme", "eng")).unwrap();
    store.create_space(&space("acme", "ops")).unwrap();
    store.create_space(&space("globex", "eng")).unwrap();
    let again = store.create_space(&space("acme", "eng")).unwrap_err();
    assert_eq!(again.kind, mnemo_core::ErrorKind::Conflict, "{}", again.message);
    let listed: Vec<String> = store.spaces("acme").unwrap().into_iter().map(|s| s.id).collect();
    assert_eq!(listed, ["eng", "ops"]);
    assert_eq!(store.space("acme", "eng").unwrap(), Some(space("acme", "eng")));
    assert_eq!(store.space("acme", "sales").unwrap(), None);
    let missing = store.put_member("acme", &member("sales", "alice", Role::Reader)).unwrap_err();
    assert_eq!(missing.kind, mnemo_core::ErrorKind::NotFound, "{}", missing.message);
    store.put_member("acme", &member("eng", "alice", Role::Reader)).unwrap();
    store.put_member("acme", &member("eng", "alice", Role::Maintainer)).unwrap();
    store.put_member("acme", &member("ops", "alice", Role::Contributor)).unwrap();
    store.put_member("acme", &member("eng", "bob", Role::Reader)).unwrap();
    store.put_member("globex", &member("eng", "alice", Role::Reader)).unwrap();
    let roles: Vec<(String, Role)> = store
        .memberships(&who("acme", "alice"))
        .unwrap()
        .into_iter()
        .map(|(s, r)| (s.id, r))
        .collect();
    assert_eq!(
        roles,
        [("eng".to_owned(), Role::Maintainer), ("ops".to_owned(), Role::Contributor)]
    );
    let elsewhere = store.memberships(&who("globex", "alice")).unwrap();
    assert_eq!(elsewhere.len(), 1);
    assert_eq!((elsewhere[0].0.tenant.as_str(), elsewhere[0].1), ("globex", Role::Reader));
    let members = store.members("acme", "eng").unwrap();
    assert_eq!(
        members,
        [member("eng", "alice", Role::Maintainer), member("eng", "bob", Role::Reader)]
    );
    assert!(store.remove_member("acme", "eng", "bob").unwrap());
    assert!(!store.remove_member("acme", "eng", "bob").unwrap());
    assert!(store.memberships(&who("acme", "bob")).unwrap().is_empty());
    assert!(store.delete_space("acme", "eng").unwrap());
    assert!(!store.delete_space("acme", "eng").unwrap());
    let roles = store.memberships(&who("acme", "alice")).unwrap();
    assert_eq!(roles.iter().map(|(s, _)| s.id.as_str()).collect::<Vec<_>>(), ["ops"]);
    assert!(store.members("acme", "eng").unwrap().is_empty());
    assert_eq!(store.memberships(&who("globex", "alice")).unwrap().len(), 1);
}

/// A space's records are a notebook of their own: the author and approval round-trip, an
/// approval names the maintainer, a deleted author is renamed everywhere in one change, no
/// user reads them as their own, and forgetting one scrubs its text.
pub fn a_space_notebook_keeps_its_records_apart(h: &dyn Harness) {
    use mnemo_core::space::{WriteRule, under_review};
    use mnemo_core::{Scope, Shared};
    let store = h.store();
    let eng = UserRef::space("acme", "eng").unwrap();
    let alice = who("acme", "alice");
    let shared = |content: &str, author: &str| CandidateFields {
        scope: Some(Scope::Space("eng".into())),
        shared: Some(Shared { author: author.into(), approval: None, mandatory: true }),
        ..stated(content)
    };
    let candidate = mnemo_core::lifecycle::Candidate::validate(
        shared("Deploys freeze on Fridays Quillon3391", "alice"),
        T0,
    )
    .unwrap();
    let record = mnemo_core::ports::NewRecord { id: id("s1"), candidate, embedding: None };
    let receipt = store
        .write(&eng, record, T0, "test", &|c, ctx| {
            under_review(mnemo_core::lifecycle::decide(c, ctx, T0), WriteRule::Review)
        })
        .unwrap();
    assert!(
        matches!(
            receipt.decision,
            Decision::Insert { status: Status::Pending, reason: ReasonCode::NeedsReview, .. }
        ),
        "{receipt:?}"
    );
    write(&*store, &eng, "s2", shared("Code review needs two approvals", "bob"), T0);
    let stored = store.get(&eng, &id("s1"), T0).unwrap().unwrap();
    assert_eq!(stored.scope, Scope::Space("eng".into()));
    assert_eq!(
        stored.shared,
        Some(Shared { author: "alice".into(), approval: None, mandatory: true })
    );
    // Nobody reads the space's records as their own.
    assert!(store.get(&alice, &id("s1"), T0).unwrap().is_none());
    assert!(store.list(&alice, &ListFilter::default(), T0).unwrap().is_empty());
    // Approval names the maintainer, when and through which channel.
    let superseded = store.approve(&eng, &id("s1"), "bob", day(1), "http:key_1").unwrap().unwrap();
    assert!(superseded.is_empty());
    let approved = store.get(&eng, &id("s1"), day(1)).unwrap().unwrap();
    assert_eq!(approved.status, Status::Active);
    let approval = approved.shared.as_ref().and_then(|s| s.approval.clone()).unwrap();
    assert_eq!(
        (approval.by.as_str(), approval.at, approval.via.as_str()),
        ("bob", day(1), "http:key_1")
    );
    // A deleted user's name goes from every record they wrote or approved, at once.
    assert_eq!(store.reattribute(&eng, "bob", "forgotten:abc").unwrap(), 2);
    let renamed = store.get(&eng, &id("s1"), day(1)).unwrap().unwrap();
    assert_eq!(
        renamed.shared.as_ref().and_then(|s| s.approval.as_ref()).map(|a| a.by.as_str()),
        Some("forgotten:abc")
    );
    assert_eq!(
        store.get(&eng, &id("s2"), day(1)).unwrap().unwrap().shared.unwrap().author,
        "forgotten:abc"
    );
    assert_eq!(store.reattribute(&eng, "bob", "forgotten:abc").unwrap(), 0);
    // The space's notebook is searched like any other.
    let terms = vec!["deploys".to_owned(), "fridays".to_owned()];
    let filter = mnemo_core::ports::SearchFilter::default();
    let query = mnemo_core::ports::SearchQuery {
        terms: &terms,
        modifiers: &[],
        vector: None,
        common: None,
        filter: &filter,
        notebooks: 1,
    };
    let found = store
        .search(&eng, &query, day(1), &|rows| {
            mnemo_core::retrieval::fuse(
                "deploys fridays",
                rows,
                &mnemo_core::retrieval::RetrievalConfig::default(),
                10,
            )
        })
        .unwrap();
    assert_eq!(found.first().map(|f| f.memory.id.clone()), Some(id("s1")));
    let mine = store
        .search(&alice, &query, day(1), &|rows| {
            mnemo_core::retrieval::fuse(
                "deploys fridays",
                rows,
                &mnemo_core::retrieval::RetrievalConfig::default(),
                10,
            )
        })
        .unwrap();
    assert!(mine.is_empty(), "{mine:?}");
    // Forgetting a shared record is complete.
    assert_present(h, "Quillon3391");
    store.forget(&eng, &id("s1"), &deletion(day(2))).unwrap().unwrap();
    assert_scrubbed(h, "Quillon3391", "forget of a space's record");
}

/// A sign-in link signs its user in once, before it expires, and never another user.
pub fn a_sign_in_link_works_once_and_only_in_time(h: &dyn Harness) {
    use mnemo_core::ports::SignInLink;
    let store = h.store();
    let link = |hash: &str, user: &str| SignInLink {
        hash: hash.to_owned(),
        who: who("acme", user),
        created_at: T0,
        expires_at: day(1),
    };
    store.create_sign_in(&link("h1", "alice")).unwrap();
    store.create_sign_in(&link("h2", "bob")).unwrap();
    assert!(store.create_sign_in(&link("h1", "mallory")).is_err(), "a second link with one hash");
    assert_eq!(store.redeem_sign_in("nope", T0).unwrap(), None);
    assert_eq!(store.redeem_sign_in("h1", T0).unwrap(), Some(who("acme", "alice")));
    assert_eq!(store.redeem_sign_in("h1", T0).unwrap(), None, "a link signed in twice");
    assert_eq!(store.redeem_sign_in("h2", day(1)).unwrap(), None, "an expired link signed in");
    // A refused redemption does not use the link up.
    assert_eq!(store.redeem_sign_in("h2", T0).unwrap(), Some(who("acme", "bob")));
}

/// Refinement lists a user's unrefined records alone, oldest first; a refined vector replaces
/// the record's vector only while the record holds the content it was made from, and only for
/// its owner; search ranks by it; an edit's new vector is unrefined again.
pub fn refined_vectors_replace_only_unchanged_records_of_their_owner(h: &dyn Harness) {
    use mnemo_core::ports::{Embedded, Embedder, Refined, SearchFilter, SearchQuery};
    let store = h.store();
    let (alice, bob) = (who("acme", "alice"), who("acme", "bob"));
    write(&*store, &alice, "a1", stated("Tea with lemon every morning"), T0);
    write(&*store, &alice, "a2", stated("Works at Acme"), day(1));
    write(&*store, &bob, "b1", stated("Plays the cello"), T0);
    let ids = |found: Vec<mnemo_core::Memory>| -> Vec<String> {
        found.into_iter().map(|m| m.id.0).collect()
    };
    assert_eq!(ids(store.unrefined(&alice, 10).unwrap()), ["a1", "a2"]);
    assert_eq!(ids(store.unrefined(&alice, 1).unwrap()), ["a1"]);
    assert_eq!(ids(store.unrefined(&bob, 10).unwrap()), ["b1"]);
    let mut notebooks = store.unrefined_notebooks(10).unwrap();
    notebooks.sort_by(|a, b| a.user_id().cmp(b.user_id()));
    assert_eq!(notebooks, [alice.clone(), bob.clone()]);
    let embedder = crate::fakes::FakeEmbedder::new(64);
    let vector_of = |text: &str| Embedded {
        model: embedder.id().to_owned(),
        vector: embedder.embed(&[text]).unwrap().remove(0),
        calibration: None,
    };
    // The refined vectors point elsewhere, so a search can tell which one a record has.
    let refined = |id: &str, content: &str, toward: &str| Refined {
        id: MemoryId(id.into()),
        content: content.into(),
        vector: vector_of(toward),
    };
    let unread = store.unrefined(&alice, 10).unwrap();
    let edit = Edit::new("Works at Acme Corp", Some(vector_of("Works at Acme Corp")));
    store.edit(&alice, &id("a2"), edit, day(2), "test").unwrap();
    let batch = [
        refined("a1", &unread[0].content, "zebra crossing"),
        refined("a2", &unread[1].content, "zebra crossing"),
    ];
    assert_eq!(store.put_refined(&bob, &batch).unwrap(), 0, "bob has no such records");
    assert_eq!(store.put_refined(&alice, &batch).unwrap(), 1, "a2 changed since it was read");
    assert_eq!(ids(store.unrefined(&alice, 10).unwrap()), ["a2"]);
    assert_eq!(ids(store.unrefined(&bob, 10).unwrap()), ["b1"]);
    let record = store.get(&alice, &id("a1"), day(2)).unwrap().unwrap();
    assert_eq!(record.content, "Tea with lemon every morning");
    assert_eq!(record.version, 1);
    // A search by the refined vector's direction finds a1 by cosine alone.
    let query = vector_of("zebra crossing");
    let (terms, filter) = (Vec::new(), SearchFilter::default());
    let search = SearchQuery {
        terms: &terms,
        modifiers: &[],
        vector: Some(&query),
        common: None,
        filter: &filter,
        notebooks: 1,
    };
    let cosines = |signals: &mnemo_core::retrieval::Signals<'_>| {
        let mut best: Vec<(usize, f64)> =
            signals.rows.iter().enumerate().map(|(index, row)| (index, row.cosine)).collect();
        best.sort_by(|a, b| b.1.total_cmp(&a.1));
        best.into_iter()
            .map(|(index, cosine)| mnemo_core::retrieval::Fused {
                index,
                score: cosine,
                evidence: 1.0,
            })
            .collect()
    };
    let found = store.search(&alice, &search, day(2), &cosines).unwrap();
    assert_eq!(found[0].memory.id, id("a1"), "{found:?}");
    assert!(found[0].cosine > 0.99, "{}", found[0].cosine);
    let bobs = store.search(&bob, &search, day(2), &cosines).unwrap();
    assert!(bobs.iter().all(|f| f.cosine < 0.99), "bob's records keep their vectors");
    // Refining the edited record, then editing it again: its new vector is unrefined.
    let again = [refined("a2", "Works at Acme Corp", "Works at Acme Corp")];
    assert_eq!(store.put_refined(&alice, &again).unwrap(), 1);
    assert!(store.unrefined(&alice, 10).unwrap().is_empty());
    let edit = Edit::new("Works at Initech", Some(vector_of("Works at Initech")));
    store.edit(&alice, &id("a2"), edit, day(3), "test").unwrap();
    assert_eq!(ids(store.unrefined(&alice, 10).unwrap()), ["a2"]);
    let b1 = store.unrefined(&bob, 10).unwrap().remove(0);
    assert_eq!(store.put_refined(&bob, &[refined("b1", &b1.content, "cello")]).unwrap(), 1);
    assert_eq!(store.unrefined_notebooks(10).unwrap(), [alice]);
}
