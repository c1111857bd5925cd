//! Shared spaces (SPEC §5b): a team's, a project's or the organisation's memory, beside each
//! member's private notebook. A space has members with roles; what a role may do, how a
//! write to a space is decided, and how a shared convention and a personal setting of the
//! same thing are weighed are rules here.
//!
//! A space's records live in a notebook of their own, owned by [`crate::UserRef::space`], so
//! every store rule (supersession, deletion with its ledger, expiry) applies to them
//! unchanged; who may reach that notebook is decided from the membership read in the store.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::clock::Timestamp;
use crate::error::InvalidInput;
use crate::lifecycle::Decision;
use crate::policy::ReasonCode;
use crate::record::{Memory, Status};
use crate::scope::validate_key;

/// What a member of a space may do.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "SpaceRole")]
pub enum Role {
    /// Reads the space.
    Reader,
    /// Reads the space and proposes memories to it, which wait for a maintainer's review.
    Contributor,
    /// Reads, writes, approves and rejects proposals, edits and forgets the space's memories.
    Maintainer,
}

impl Role {
    /// Every role, least to most.
    pub const ALL: &'static [Role] = &[Role::Reader, Role::Contributor, Role::Maintainer];

    /// The wire spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Role::Reader => "reader",
            Role::Contributor => "contributor",
            Role::Maintainer => "maintainer",
        }
    }

    /// Whether the role may write to the space at all (a contributor only proposes).
    pub const fn may_write(self) -> bool {
        matches!(self, Role::Contributor | Role::Maintainer)
    }

    /// Whether the role may approve, reject, edit and forget the space's memories.
    pub const fn may_maintain(self) -> bool {
        matches!(self, Role::Maintainer)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Role {
    type Err = InvalidInput;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Role::ALL.iter().copied().find(|role| role.as_str() == text.trim()).ok_or_else(|| {
            InvalidInput::new(
                "role",
                format!(
                    "unknown value `{}` (expected one of: reader, contributor, maintainer)",
                    text.trim()
                ),
            )
        })
    }
}

/// What happens to a deleted member's approved contributions.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum OnAuthorDeleted {
    /// They stay, attributed to a forgotten author (the default: team knowledge outlives
    /// the person who wrote it down).
    #[default]
    Keep,
    /// They are deleted completely with the author's private memories.
    Remove,
}

impl OnAuthorDeleted {
    /// The wire spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            OnAuthorDeleted::Keep => "keep",
            OnAuthorDeleted::Remove => "remove",
        }
    }
}

impl FromStr for OnAuthorDeleted {
    type Err = InvalidInput;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim() {
            "keep" => Ok(OnAuthorDeleted::Keep),
            "remove" => Ok(OnAuthorDeleted::Remove),
            other => Err(InvalidInput::new(
                "on_author_deleted",
                format!("unknown value `{other}` (expected one of: keep, remove)"),
            )),
        }
    }
}

/// A shared space of a tenant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Space {
    /// The tenant it belongs to.
    pub tenant: String,
    /// Its id within the tenant (`space:<id>` is the scope of its records).
    pub id: String,
    /// A human name ("Platform team").
    pub name: String,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether a maintainer's own write applies at once (otherwise it waits for a
    /// maintainer's review like a contributor's).
    pub maintainers_write_directly: bool,
    /// What happens to a deleted member's approved contributions.
    pub on_author_deleted: OnAuthorDeleted,
    /// When it was created.
    pub created_at: Timestamp,
    /// Who created it (a channel and key, e.g. `http:key_ab12`).
    pub created_by: String,
}

impl Space {
    /// Validates a new space's fields.
    pub fn validate(mut self) -> Result<Self, InvalidInput> {
        self.tenant = validate_key(&self.tenant, "tenant")?;
        self.id = validate_key(&self.id, "space")?;
        if self.id.contains(char::is_whitespace) || self.id.contains(',') {
            return Err(InvalidInput::new("space", "must not contain spaces or commas"));
        }
        self.name = validate_key(&self.name, "name")?;
        if let Some(description) = &self.description
            && description.len() > crate::limits::MAX_CONTENT_BYTES
        {
            return Err(InvalidInput::new("description", "is too long"));
        }
        Ok(self)
    }
}

/// One member of a space and their role.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Member {
    /// The space.
    pub space_id: String,
    /// The member (a user of the space's tenant).
    pub user_id: String,
    /// What they may do.
    pub role: Role,
    /// When they were given this role.
    pub added_at: Timestamp,
    /// Who gave it (a channel and key).
    pub added_by: String,
}

/// How a member's write to a space is decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteRule {
    /// The member may not write to the space.
    Forbidden,
    /// The write waits for a maintainer's review (`pending`, `needs_review`).
    Review,
    /// The write goes through the gate as a private one does.
    Direct,
}

/// What `role` may do when writing to `space`.
pub fn write_rule(space: &Space, role: Role) -> WriteRule {
    match role {
        Role::Reader => WriteRule::Forbidden,
        Role::Contributor => WriteRule::Review,
        Role::Maintainer if space.maintainers_write_directly => WriteRule::Direct,
        Role::Maintainer => WriteRule::Review,
    }
}

/// The write decision for a space under `rule`: a write that would become active waits for
/// review instead, and supersedes nothing until it is approved. A refusal, a skip or a hold
/// of the gate stands as it is.
pub fn under_review(decision: Decision, rule: WriteRule) -> Decision {
    match decision {
        Decision::Insert { status: Status::Active, .. } if rule == WriteRule::Review => {
            Decision::Insert {
                status: Status::Pending,
                reason: ReasonCode::NeedsReview,
                supersede: Vec::new(),
            }
        }
        other => other,
    }
}

/// The name a deleted author or approver is given in the records they leave in spaces: a
/// digest (from the deletion ledger's key) that tells their contributions apart without
/// naming them.
pub fn forgotten_author(digest: &str) -> String {
    format!("forgotten:{}", digest.get(..12).unwrap_or(digest))
}

/// A statement to compare settings with: its record and its claims, read once.
#[derive(Debug)]
pub struct Setting<'a> {
    /// The record.
    pub memory: &'a Memory,
    claims: Vec<crate::claims::Claim>,
}

impl<'a> Setting<'a> {
    /// Reads `memory`'s claims.
    pub fn of(memory: &'a Memory) -> Self {
        Self { memory, claims: crate::claims::claims(&memory.content) }
    }
}

/// Whether a shared record and a personal one set the same thing differently: the same
/// subject and attribute with other words, or (unkeyed) one gives another value of a slot
/// the other fills (see [`crate::claims`]).
pub fn same_setting(shared: &Setting<'_>, personal: &Setting<'_>) -> bool {
    if let (Some(a), Some(b)) = (shared.memory.key(), personal.memory.key()) {
        return a == b
            && crate::lifecycle::normalize(&shared.memory.content)
                != crate::lifecycle::normalize(&personal.memory.content);
    }
    let apart = crate::claims::Nearness::default();
    crate::claims::contradicts_read(&personal.claims, &shared.claims, apart)
        || crate::claims::contradicts_read(&shared.claims, &personal.claims, apart)
}

/// How a shared record and a personal record of the same setting are weighed in context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precedence {
    /// The personal setting holds; the convention is shown as the space's.
    Personal,
    /// The space marks its convention mandatory: it holds over the personal setting.
    Mandatory,
}

/// Which of a shared record and a personal one of the same setting holds (SPEC §3: a space's
/// convention does not override a personal setting unless it is mandatory).
pub fn precedence(shared: &Memory) -> Precedence {
    if shared.shared.as_ref().is_some_and(|s| s.mandatory) {
        Precedence::Mandatory
    } else {
        Precedence::Personal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn space(direct: bool) -> Space {
        Space {
            tenant: "t".into(),
            id: "eng".into(),
            name: "Engineering".into(),
            description: None,
            maintainers_write_directly: direct,
            on_author_deleted: OnAuthorDeleted::Keep,
            created_at: Timestamp::from_millis(0),
            created_by: "cli".into(),
        }
    }

    #[test]
    fn roles_parse_and_say_what_they_may_do() {
        assert_eq!("maintainer".parse::<Role>().unwrap(), Role::Maintainer);
        let err = "owner".parse::<Role>().unwrap_err();
        assert_eq!(err.field, "role");
        assert!(err.problem.contains("reader, contributor, maintainer"), "{}", err.problem);
        assert!(!Role::Reader.may_write() && Role::Contributor.may_write());
        assert!(!Role::Contributor.may_maintain() && Role::Maintainer.may_maintain());
    }

    #[test]
    fn contributors_propose_and_maintainers_write_where_the_space_allows() {
        assert_eq!(write_rule(&space(false), Role::Reader), WriteRule::Forbidden);
        assert_eq!(write_rule(&space(true), Role::Contributor), WriteRule::Review);
        assert_eq!(write_rule(&space(false), Role::Maintainer), WriteRule::Review);
        assert_eq!(write_rule(&space(true), Role::Maintainer), WriteRule::Direct);
        let active = Decision::Insert {
            status: Status::Active,
            reason: ReasonCode::NewValue,
            supersede: vec![crate::MemoryId("old".into())],
        };
        assert_eq!(
            under_review(active.clone(), WriteRule::Review),
            Decision::Insert {
                status: Status::Pending,
                reason: ReasonCode::NeedsReview,
                supersede: vec![]
            }
        );
        assert_eq!(under_review(active.clone(), WriteRule::Direct), active);
        let held = Decision::Insert {
            status: Status::Pending,
            reason: ReasonCode::InstructionLike,
            supersede: vec![],
        };
        assert_eq!(under_review(held.clone(), WriteRule::Review), held);
        let refused = Decision::Refuse(ReasonCode::Secret);
        assert_eq!(under_review(refused.clone(), WriteRule::Review), refused);
    }

    fn memory(content: &str, key: Option<(&str, &str)>) -> Memory {
        let fields = crate::lifecycle::CandidateFields {
            content: content.into(),
            subject: key.map(|k| k.0.into()),
            attribute: key.map(|k| k.1.into()),
            ..Default::default()
        };
        crate::lifecycle::Candidate::validate(fields, Timestamp::from_millis(0))
            .unwrap()
            .into_memory(
                crate::MemoryId(content.into()),
                "t",
                "u",
                Status::Active,
                Timestamp::from_millis(0),
            )
    }

    #[test]
    fn the_same_setting_is_read_from_keys_or_from_what_statements_claim() {
        let same = |a: &Memory, b: &Memory| same_setting(&Setting::of(a), &Setting::of(b));
        let tabs = memory("Indent code with tabs", Some(("code", "indentation")));
        let spaces = memory("Indent code with four spaces", Some(("code", "indentation")));
        assert!(same(&spaces, &tabs));
        assert!(!same(&tabs, &tabs), "the same words are no difference");
        let vim = memory("My favourite editor is Vim", None);
        let emacs = memory("My favourite editor is Emacs", None);
        let tea = memory("I like green tea", None);
        assert!(same(&vim, &emacs), "another value of the same slot");
        assert!(!same(&vim, &tea), "a statement about something else");
    }

    #[test]
    fn a_space_id_is_one_word() {
        assert!(space(true).validate().is_ok());
        let bad = Space { id: "a b".into(), ..space(true) };
        assert_eq!(bad.validate().unwrap_err().field, "space");
        let bad = Space { name: " ".into(), ..space(true) };
        assert_eq!(bad.validate().unwrap_err().field, "name");
    }
}
