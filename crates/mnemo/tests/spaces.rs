//! Shared spaces through the library: roles decide who reads, proposes, approves and forgets;
//! private notebooks stay private; a member who leaves stops reading at once; a deleted
//! user's contributions stay attributed to a forgotten author. A property test drives random
//! tenants, users, spaces, memberships, role changes, reads and writes.
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use mnemo::core::ledger::LedgerKey;
use mnemo::core::lifecycle::{CandidateFields, Outcome};
use mnemo::core::policy::ReasonCode;
use mnemo::core::ports::{ListFilter, SearchFilter};
use mnemo::core::space::{OnAuthorDeleted, Role};
use mnemo::core::{ErrorKind, FixedClock, ManualClock, Memory, Scope, Status, Timestamp, UserRef};
use mnemo::{ContextRequest, Mnemo, NewSpace, SearchRequest};
use proptest::prelude::*;

const T0: Timestamp = Timestamp::from_millis(1_780_000_000_000);

fn who(tenant: &str, user: &str) -> UserRef {
    UserRef::new(tenant, user).unwrap()
}

fn stated(text: &str) -> CandidateFields {
    CandidateFields { content: text.to_owned(), ..Default::default() }
}

fn search(mnemo: &Mnemo, who: &UserRef, query: &str) -> Vec<Memory> {
    let request = SearchRequest {
        query: query.to_owned(),
        k: 20,
        filter: SearchFilter::default(),
        min_relevance: Some(0.0),
        as_of: None,
        spaces: None,
    };
    mnemo.search(who, &request).unwrap().into_iter().map(|h| h.memory).collect()
}

fn space(id: &str) -> NewSpace {
    NewSpace { id: id.to_owned(), name: Some(format!("The {id} team")), ..Default::default() }
}

fn sqlite(dir: &tempfile::TempDir, clock: Arc<ManualClock>) -> Mnemo {
    let embedder = mnemo::builtin_embedder().unwrap();
    Mnemo::open_sqlite(&dir.path().join("m.db"), Some(embedder), clock, "cli").unwrap()
}

fn in_memory() -> Mnemo {
    let backend =
        mnemo_engine::memory::MemoryBackend::new(LedgerKey::from_slice(&[9; 32]).unwrap());
    let store = Arc::new(mnemo_engine::Engine::new(backend));
    Mnemo::new(store, None, Arc::new(FixedClock(T0)), "test")
}

/// A contributor proposes, a maintainer approves (named in the record), a reader reads and
/// may not write or forget, a stranger sees nothing, and a member who leaves stops reading.
#[test]
fn roles_decide_who_reads_proposes_and_approves() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(T0));
    let mnemo = sqlite(&dir, Arc::clone(&clock));
    let (alice, bob, carol, dave) =
        (who("acme", "alice"), who("acme", "bob"), who("acme", "carol"), who("acme", "dave"));
    mnemo.create_space("acme", space("eng")).unwrap();
    mnemo.add_member("acme", "eng", "alice", Role::Maintainer).unwrap();
    mnemo.add_member("acme", "eng", "bob", Role::Contributor).unwrap();
    mnemo.add_member("acme", "eng", "carol", Role::Reader).unwrap();

    let proposed =
        mnemo.remember_in(&bob, "eng", stated("The team uses trunk-based development"), false);
    let proposed = proposed.unwrap();
    assert_eq!((proposed.outcome, proposed.reason), (Outcome::Pending, ReasonCode::NeedsReview));
    let id = proposed.id.unwrap();
    // The reader may not write; a stranger's write answers as a made-up space's does.
    let refused = mnemo.remember_in(&carol, "eng", stated("Reader's note"), false).unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::Forbidden, "{refused}");
    let stranger = mnemo.remember_in(&dave, "eng", stated("Stranger's note"), false).unwrap_err();
    let made_up = mnemo.remember_in(&dave, "nope", stated("Stranger's note"), false).unwrap_err();
    assert_eq!(stranger.kind(), ErrorKind::NotFound);
    assert_eq!(stranger.to_string().replace("eng", "X"), made_up.to_string().replace("nope", "X"));

    // What waits is the maintainer's to approve, with why it waits; nobody reads it yet.
    let pending = mnemo.pending_with_reasons(&alice).unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(
        (pending[0].0.id.clone(), pending[0].1),
        (id.clone(), Some(ReasonCode::NeedsReview))
    );
    assert_eq!(pending[0].0.user_id, "bob", "a shared record names its author");
    assert!(mnemo.pending(&bob).unwrap().is_empty(), "a contributor approves nothing");
    assert!(search(&mnemo, &carol, "trunk-based development").is_empty());
    let refused = mnemo.confirm(&carol, &id).unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::Forbidden);

    clock.set(Timestamp::from_millis(T0.as_millis() + 60_000));
    mnemo.confirm(&alice, &id).unwrap();
    let approved = mnemo.get(&carol, &id).unwrap();
    assert_eq!(approved.status, Status::Active);
    let shared = approved.shared.clone().unwrap();
    let approval = shared.approval.unwrap();
    assert_eq!(
        (shared.author.as_str(), approval.by.as_str(), approval.via.as_str()),
        ("bob", "alice", "cli")
    );
    assert_eq!(approval.at, mnemo::core::Clock::now(&*clock));

    // Every member reads it beside their own, labelled; a stranger does not.
    mnemo.remember(&carol, stated("I prefer rebasing my branches before merging")).unwrap();
    let found = search(&mnemo, &carol, "trunk-based development");
    assert_eq!(
        found.first().map(|m| (m.id.clone(), m.scope.clone())),
        Some((id.clone(), Scope::Space("eng".into())))
    );
    assert!(search(&mnemo, &dave, "trunk-based development").is_empty());
    assert_eq!(mnemo.get(&dave, &id).unwrap_err().kind(), ErrorKind::NotFound);
    // The `spaces` filter narrows the read.
    let only_private = SearchRequest {
        query: "trunk-based development".into(),
        k: 10,
        filter: SearchFilter::default(),
        min_relevance: Some(0.0),
        as_of: None,
        spaces: Some(vec!["private".into()]),
    };
    assert!(
        mnemo.search(&carol, &only_private).unwrap().iter().all(|h| h.memory.scope == Scope::User)
    );
    let unknown = SearchRequest { spaces: Some(vec!["ops".into()]), ..only_private.clone() };
    assert_eq!(mnemo.search(&carol, &unknown).unwrap_err().kind(), ErrorKind::NotFound);
    // A space's memories are listed with its scope, by members only.
    let listing = ListFilter { scope: Some(Scope::Space("eng".into())), ..Default::default() };
    assert_eq!(mnemo.list(&carol, &listing).unwrap().len(), 1);
    assert_eq!(mnemo.list(&dave, &listing).unwrap_err().kind(), ErrorKind::NotFound);
    assert!(
        mnemo.list(&carol, &ListFilter::default()).unwrap().iter().all(|m| m.scope == Scope::User)
    );

    // Only a maintainer forgets a shared memory.
    assert_eq!(mnemo.forget(&carol, &id).unwrap_err().kind(), ErrorKind::Forbidden);
    assert_eq!(
        mnemo.edit(&bob, &id, "Trunk-based, always").unwrap_err().kind(),
        ErrorKind::Forbidden
    );

    // Removing a member stops their reads at once.
    mnemo.remove_member("acme", "eng", "carol").unwrap();
    let after = search(&mnemo, &carol, "trunk-based development");
    assert!(after.iter().all(|m| m.scope == Scope::User), "{after:?}");
    assert_eq!(mnemo.get(&carol, &id).unwrap_err().kind(), ErrorKind::NotFound);
    let again = mnemo.remove_member("acme", "eng", "carol").unwrap_err();
    assert_eq!(again.kind(), ErrorKind::NotFound);

    // Forgetting by a maintainer is complete: the text leaves the file.
    let receipt = mnemo.forget(&alice, &id).unwrap();
    assert_eq!(receipt.removed_ids, [id]);
    drop(mnemo);
    let bytes = std::fs::read(dir.path().join("m.db")).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    assert!(!text.contains("trunk-based"), "the forgotten shared memory is still in the file");
}

/// A deleted user's approved contributions stay, attributed to a forgotten author, and the
/// receipt says so; their proposals still waiting go; a space set to remove them removes
/// them; the user leaves every space.
#[test]
fn a_deleted_member_leaves_attributed_contributions_or_none() {
    let mnemo = in_memory();
    let (alice, bob) = (who("acme", "alice"), who("acme", "bob"));
    mnemo.create_space("acme", space("eng")).unwrap();
    let strict = NewSpace { on_author_deleted: OnAuthorDeleted::Remove, ..space("legal") };
    mnemo.create_space("acme", strict).unwrap();
    for s in ["eng", "legal"] {
        mnemo.add_member("acme", s, "alice", Role::Maintainer).unwrap();
        mnemo.add_member("acme", s, "bob", Role::Contributor).unwrap();
    }
    let kept = mnemo.remember_in(&bob, "eng", stated("Releases ship on Tuesdays"), false).unwrap();
    let waiting = mnemo.remember_in(&bob, "eng", stated("Standups move to 10am"), false).unwrap();
    let removed =
        mnemo.remember_in(&bob, "legal", stated("Contracts need two signatures"), false).unwrap();
    let by_alice =
        mnemo.remember_in(&alice, "eng", stated("Bob approves the on-call rota"), false).unwrap();
    for r in [&kept, &removed] {
        mnemo.confirm(&alice, r.id.as_ref().unwrap()).unwrap();
    }
    mnemo.confirm(&alice, by_alice.id.as_ref().unwrap()).unwrap();
    mnemo.remember(&bob, stated("My private note about the quarter")).unwrap();

    let receipt = mnemo.forget_all(&bob).unwrap();
    let remnant = receipt.remains.iter().find(|r| r.place == "shared spaces").unwrap();
    assert!(remnant.detail.contains("forgotten:"), "{}", remnant.detail);
    assert!(mnemo.memberships(&bob).unwrap().is_empty());
    assert!(mnemo.list(&bob, &ListFilter::default()).unwrap().is_empty());
    let stays = mnemo.get(&alice, kept.id.as_ref().unwrap()).unwrap();
    let author = stays.shared.unwrap().author;
    assert!(author.starts_with("forgotten:") && !author.contains("bob"), "{author}");
    assert_eq!(stays.user_id, author);
    let gone = mnemo.get(&alice, waiting.id.as_ref().unwrap()).unwrap_err();
    assert_eq!(gone.kind(), ErrorKind::NotFound, "a proposal still waiting goes with its author");
    let gone = mnemo.get(&alice, removed.id.as_ref().unwrap()).unwrap_err();
    assert_eq!(gone.kind(), ErrorKind::NotFound, "this space removes a deleted author's work");
    assert_eq!(
        mnemo.get(&alice, by_alice.id.as_ref().unwrap()).unwrap().shared.unwrap().author,
        "alice"
    );
}

/// A user's export holds what they wrote to spaces (a proposal waiting, an approved record,
/// in a space they have since left) beside their own records, and no one else's; importing
/// the export writes their own records only, never into a space.
#[test]
fn an_export_holds_the_users_contributions_and_an_import_leaves_them_to_the_spaces() {
    let mnemo = in_memory();
    let (alice, bob) = (who("acme", "alice"), who("acme", "bob"));
    for s in ["eng", "ops"] {
        mnemo.create_space("acme", space(s)).unwrap();
        mnemo.add_member("acme", s, "alice", Role::Maintainer).unwrap();
        mnemo.add_member("acme", s, "bob", Role::Contributor).unwrap();
    }
    let approved = mnemo.remember_in(&bob, "eng", stated("Releases ship on Tuesdays"), false);
    let approved = approved.unwrap().id.unwrap();
    mnemo.confirm(&alice, &approved).unwrap();
    let waiting = mnemo.remember_in(&bob, "ops", stated("Pagers rotate weekly"), false);
    let waiting = waiting.unwrap().id.unwrap();
    mnemo.remember_in(&alice, "eng", stated("Alice owns the deploy script"), false).unwrap();
    mnemo.remember(&bob, stated("My private note about the quarter")).unwrap();
    mnemo.remove_member("acme", "eng", "bob").unwrap();

    let document = mnemo.export(&bob).unwrap();
    assert_eq!(document.memories.len(), 1);
    let mut contributed: Vec<(String, String, Status)> = document
        .contributions
        .iter()
        .map(|r| (r.memory.id.0.clone(), r.memory.scope.to_string(), r.memory.status))
        .collect();
    contributed.sort();
    let mut expected = vec![
        (approved.0.clone(), "space:eng".to_owned(), Status::Active),
        (waiting.0.clone(), "space:ops".to_owned(), Status::Pending),
    ];
    expected.sort();
    assert_eq!(contributed, expected);
    assert!(document.contributions.iter().all(|r| r.memory.user_id == "bob"));

    // Restored elsewhere: bob's own record comes back; the contributions stay the spaces'.
    let elsewhere = in_memory();
    let report = elsewhere.import(&bob, document, false).unwrap();
    assert_eq!(report.imported, 1);
    assert!(elsewhere.spaces("acme").unwrap().is_empty());
    let restored = elsewhere.list(&bob, &ListFilter::default()).unwrap();
    assert_eq!(restored.len(), 1);
    assert_eq!(restored[0].content, "My private note about the quarter");
}

/// A space's convention and a personal setting of the same thing both appear in context,
/// each saying which holds: the personal one, unless the space marks its convention
/// mandatory.
#[test]
fn context_says_where_each_line_comes_from_and_which_setting_holds() {
    let dir = tempfile::tempdir().unwrap();
    let mnemo = sqlite(&dir, Arc::new(ManualClock::new(T0)));
    let dev = who("acme", "dev");
    mnemo
        .create_space("acme", NewSpace { maintainers_write_directly: true, ..space("eng") })
        .unwrap();
    mnemo.add_member("acme", "eng", "dev", Role::Maintainer).unwrap();
    let keyed = |text: &str| CandidateFields {
        subject: Some("code".into()),
        attribute: Some("indentation".into()),
        kind: Some(mnemo::core::Kind::Procedural),
        ..stated(text)
    };
    mnemo.remember(&dev, keyed("Indent code with tabs")).unwrap();
    let convention =
        mnemo.remember_in(&dev, "eng", keyed("Indent code with four spaces"), false).unwrap();
    assert_eq!(convention.outcome, Outcome::Added, "this space lets maintainers write directly");
    let tokenizer = mnemo::Tokenizer::new(mnemo::TokenizerName::O200k).unwrap();
    let ask = ContextRequest {
        query: "how should I indent code?".into(),
        budget: 800,
        ..Default::default()
    };
    let block = mnemo.context(&dev, &ask, &tokenizer).unwrap();
    let personal = block.rendered.lines().find(|l| l.contains("tabs")).unwrap();
    let shared = block.rendered.lines().find(|l| l.contains("four spaces")).unwrap();
    assert!(personal.contains("; private]") && personal.contains("takes precedence"), "{personal}");
    assert!(shared.contains("; space eng]") && shared.contains("personal setting"), "{shared}");

    // Marked mandatory, the convention holds over the personal setting.
    mnemo.forget(&dev, convention.id.as_ref().unwrap()).unwrap();
    let mandatory =
        mnemo.remember_in(&dev, "eng", keyed("Indent code with two spaces"), true).unwrap();
    assert_eq!(mandatory.outcome, Outcome::Added, "{mandatory:?}");
    let block = mnemo.context(&dev, &ask, &tokenizer).unwrap();
    let shared = block.rendered.lines().find(|l| l.contains("two spaces")).unwrap();
    let personal = block.rendered.lines().find(|l| l.contains("tabs")).unwrap();
    assert!(shared.contains("mandatory in space eng"), "{shared}");
    assert!(personal.contains("overridden by the mandatory convention"), "{personal}");
}

/// One step of the property test.
#[derive(Debug, Clone)]
enum Step {
    AddMember { tenant: usize, space: usize, user: usize, role: Role },
    RemoveMember { tenant: usize, space: usize, user: usize },
    WritePrivate { tenant: usize, user: usize },
    WriteSpace { tenant: usize, space: usize, user: usize },
    Approve { tenant: usize, user: usize },
    Read { tenant: usize, user: usize },
}

fn step() -> impl Strategy<Value = Step> {
    let role = prop_oneof![Just(Role::Reader), Just(Role::Contributor), Just(Role::Maintainer)];
    prop_oneof![
        (0..2usize, 0..2usize, 0..3usize, role)
            .prop_map(|(tenant, space, user, role)| Step::AddMember { tenant, space, user, role }),
        (0..2usize, 0..2usize, 0..3usize).prop_map(|(tenant, space, user)| Step::RemoveMember {
            tenant,
            space,
            user
        }),
        (0..2usize, 0..3usize).prop_map(|(tenant, user)| Step::WritePrivate { tenant, user }),
        (0..2usize, 0..2usize, 0..3usize).prop_map(|(tenant, space, user)| Step::WriteSpace {
            tenant,
            space,
            user
        }),
        (0..2usize, 0..3usize).prop_map(|(tenant, user)| Step::Approve { tenant, user }),
        (0..2usize, 0..3usize).prop_map(|(tenant, user)| Step::Read { tenant, user }),
    ]
}

const TENANTS: [&str; 2] = ["acme", "globex"];
const USERS: [&str; 3] = ["ann", "ben", "cat"];
const SPACES: [&str; 2] = ["eng", "ops"];

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// No user reads a memory of a space they are not a member of at the time of the read,
    /// writes where their role does not allow, or sees another user's private memory.
    #[test]
    fn members_read_and_write_only_what_their_role_allows(steps in proptest::collection::vec(step(), 1..40)) {
        let mnemo = in_memory();
        for tenant in TENANTS {
            for s in SPACES {
                mnemo.create_space(tenant, space(s)).unwrap();
            }
        }
        // The model: (tenant, space, user) -> role; which record belongs where.
        let mut roles: BTreeMap<(usize, usize, usize), Role> = BTreeMap::new();
        let mut private_of: BTreeMap<String, (usize, usize)> = BTreeMap::new();
        let mut space_of: BTreeMap<String, (usize, usize)> = BTreeMap::new();
        for (n, step) in steps.into_iter().enumerate() {
            match step {
                Step::AddMember { tenant, space, user, role } => {
                    mnemo.add_member(TENANTS[tenant], SPACES[space], USERS[user], role).unwrap();
                    roles.insert((tenant, space, user), role);
                }
                Step::RemoveMember { tenant, space, user } => {
                    let removed = mnemo.remove_member(TENANTS[tenant], SPACES[space], USERS[user]);
                    prop_assert_eq!(removed.is_ok(), roles.remove(&(tenant, space, user)).is_some());
                }
                Step::WritePrivate { tenant, user } => {
                    let me = who(TENANTS[tenant], USERS[user]);
                    let r = mnemo.remember(&me, stated(&format!("Private note {n} zephyr"))).unwrap();
                    private_of.insert(r.id.unwrap().0, (tenant, user));
                }
                Step::WriteSpace { tenant, space, user } => {
                    let me = who(TENANTS[tenant], USERS[user]);
                    let written = mnemo.remember_in(&me, SPACES[space], stated(&format!("Shared note {n} zephyr")), false);
                    match roles.get(&(tenant, space, user)) {
                        None => prop_assert_eq!(written.unwrap_err().kind(), ErrorKind::NotFound),
                        Some(Role::Reader) => prop_assert_eq!(written.unwrap_err().kind(), ErrorKind::Forbidden),
                        Some(_) => {
                            let r = written.unwrap();
                            prop_assert_eq!((r.outcome, r.reason), (Outcome::Pending, ReasonCode::NeedsReview));
                            space_of.insert(r.id.unwrap().0, (tenant, space));
                        }
                    }
                }
                Step::Approve { tenant, user } => {
                    let me = who(TENANTS[tenant], USERS[user]);
                    for m in mnemo.pending(&me).unwrap() {
                        if let Scope::Space(s) = &m.scope {
                            let space = SPACES.iter().position(|x| x == s).unwrap();
                            prop_assert_eq!(roles.get(&(tenant, space, user)), Some(&Role::Maintainer), "offered to approve what they may not");
                        } else {
                            prop_assert_eq!(private_of.get(&m.id.0), Some(&(tenant, user)));
                        }
                        mnemo.confirm(&me, &m.id).unwrap();
                    }
                }
                Step::Read { tenant, user } => {
                    let me = who(TENANTS[tenant], USERS[user]);
                    let mut seen: Vec<Memory> = search(&mnemo, &me, "zephyr note");
                    seen.extend(mnemo.list(&me, &ListFilter::default()).unwrap());
                    for (s, space) in SPACES.iter().enumerate() {
                        let filter = ListFilter { scope: Some(Scope::Space((*space).into())), ..Default::default() };
                        match mnemo.list(&me, &filter) {
                            Ok(listed) => {
                                prop_assert!(roles.contains_key(&(tenant, s, user)));
                                seen.extend(listed);
                            }
                            Err(e) => {
                                prop_assert_eq!(e.kind(), ErrorKind::NotFound);
                                prop_assert!(!roles.contains_key(&(tenant, s, user)));
                            }
                        }
                    }
                    let mut ids = BTreeSet::new();
                    for m in seen {
                        ids.insert(m.id.0.clone());
                        match (private_of.get(&m.id.0), space_of.get(&m.id.0)) {
                            (Some(owner), _) => prop_assert_eq!(*owner, (tenant, user), "read another user's private memory"),
                            (_, Some(&(t, s))) => prop_assert!(t == tenant && roles.contains_key(&(t, s, user)), "read a space it is not a member of"),
                            (None, None) => prop_assert!(false, "an unknown record {:?}", m.id),
                        }
                    }
                    // Every record it may read by id, and none other.
                    for (id, &(t, s)) in &space_of {
                        let got = mnemo.get(&me, &mnemo::core::MemoryId(id.clone()));
                        prop_assert_eq!(got.is_ok(), t == tenant && roles.contains_key(&(t, s, user)));
                    }
                }
            }
        }
    }
}

/// A batch written to a space is decided as single writes are: a contributor's waits for
/// review, a reader's is refused whole, and the space's records carry their author.
#[test]
fn a_batch_to_a_space_follows_the_roles() {
    let mnemo = in_memory();
    mnemo
        .create_space("acme", NewSpace { maintainers_write_directly: true, ..space("eng") })
        .unwrap();
    for (user, role) in
        [("ann", Role::Maintainer), ("ben", Role::Contributor), ("cy", Role::Reader)]
    {
        mnemo.add_member("acme", "eng", user, role).unwrap();
    }
    let batch = || vec![stated("Builds run on every push"), stated("Main is always releasable")];
    let proposed = mnemo.remember_batch_in(&who("acme", "ben"), "eng", batch()).unwrap();
    assert!(
        proposed
            .iter()
            .all(|r| (r.outcome, r.reason) == (Outcome::Pending, ReasonCode::NeedsReview))
    );
    let refused = mnemo.remember_batch_in(&who("acme", "cy"), "eng", batch()).unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::Forbidden);
    let direct = mnemo
        .remember_batch_in(&who("acme", "ann"), "eng", vec![stated("Deploys need a green build")])
        .unwrap();
    assert_eq!(direct[0].outcome, Outcome::Added);
    let listing = ListFilter { scope: Some(Scope::Space("eng".into())), ..Default::default() };
    let stored = mnemo.list(&who("acme", "cy"), &listing).unwrap();
    assert_eq!(stored.len(), 3, "the reader's batch wrote nothing");
    let authors: BTreeSet<String> = stored.iter().map(|m| m.user_id.clone()).collect();
    assert_eq!(authors, BTreeSet::from(["ann".to_owned(), "ben".to_owned()]));
    // A private batch may not name a space.
    let scoped = CandidateFields { scope: Some(Scope::Space("eng".into())), ..stated("Sneaky") };
    let err = mnemo.remember_batch(&who("acme", "ann"), vec![scoped]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
}
