//! Shared spaces (SPEC §5b) in the library: creating them and their members, writing to a
//! space by role (a contributor proposes, a maintainer approves), finding which notebook a
//! record of a user's reach lives in, and what a deleted user leaves in spaces.
//!
//! A space's records are a notebook of their own (owner [`UserRef::space`]), so the store's
//! rules apply to them unchanged; this module decides who reaches that notebook, from the
//! membership the store holds at the time of each call.

use mnemo_core::ledger::{DeletionReceipt, Remnant};
use mnemo_core::lifecycle::{self, Candidate, CandidateFields, Remembered};
use mnemo_core::policy::ReasonCode;
use mnemo_core::ports::{ListFilter, NewRecord};
use mnemo_core::scope::{SPACE_OWNER_PREFIX, validate_key};
use mnemo_core::space::{self, Member, OnAuthorDeleted, Role, Space, WriteRule};
use mnemo_core::{ErrorKind, Memory, MemoryId, Scope, Shared, Status, UserRef};

use crate::{Error, Mnemo, Result, new_id};

/// The name that stands for a user's private notebook in a `spaces` filter.
pub const PRIVATE: &str = "private";

/// A new space's settings.
#[derive(Debug, Clone, Default)]
pub struct NewSpace {
    /// Its id within the tenant (one word; records are scoped `space:<id>`).
    pub id: String,
    /// A human name (default: the id).
    pub name: Option<String>,
    /// What it is for.
    pub description: Option<String>,
    /// Whether a maintainer's own write applies at once (default: it waits for review too).
    pub maintainers_write_directly: bool,
    /// What happens to a deleted member's approved contributions (default: they stay,
    /// attributed to a forgotten author).
    pub on_author_deleted: OnAuthorDeleted,
}

/// What an operation on a record of a space needs of the user's role there.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Need {
    /// Any member.
    Read,
    /// A maintainer; the words say what was asked ("approve proposals").
    Maintain(&'static str),
}

/// The notebook a record belongs to: its owner's, read from its scope (a space's records
/// carry `space:<id>`, and nothing else does).
pub(crate) fn owner_of(who: &UserRef, memory: &Memory) -> Result<UserRef> {
    match &memory.scope {
        Scope::Space(id) => Ok(UserRef::space(who.tenant(), id)?),
        _ => Ok(who.clone()),
    }
}

/// A record as a caller sees it: a space's record names its author as its user (the
/// space's owner id is the store's own).
pub(crate) fn presented(mut memory: Memory) -> Memory {
    if let Some(space) = memory.user_id.strip_prefix(SPACE_OWNER_PREFIX) {
        memory.user_id = match &memory.shared {
            Some(shared) => shared.author.clone(),
            None => format!("space:{space}"),
        };
    }
    memory
}

/// Scopes `fields` to the space `owner` holds, written by `who`.
fn stamp(fields: &mut CandidateFields, who: &UserRef, owner: &UserRef, mandatory: bool) {
    let space = owner.space_id().unwrap_or_default().to_owned();
    fields.scope = Some(Scope::Space(space));
    fields.shared = Some(Shared { author: who.user_id().to_owned(), approval: None, mandatory });
}

/// Where a record comes from, as context lines and listings say it.
pub fn origin(memory: &Memory) -> String {
    match &memory.scope {
        Scope::Space(id) => format!("space {id}"),
        _ => PRIVATE.to_owned(),
    }
}

/// For a context block: where a shared convention and a personal setting of the same thing
/// differ, a note on each saying which holds (SPEC §3: the personal setting, unless the
/// space marks its convention mandatory), by record id.
pub(crate) fn precedence_notes(
    profile: &[Memory],
    relevant: &[Memory],
) -> std::collections::HashMap<MemoryId, String> {
    let mut notes = std::collections::HashMap::new();
    let shared: Vec<&Memory> =
        relevant.iter().filter(|m| matches!(m.scope, Scope::Space(_))).collect();
    if shared.is_empty() {
        return notes;
    }
    // Each statement's claims are read once, not once per pair compared.
    let personal: Vec<space::Setting<'_>> = profile
        .iter()
        .chain(relevant)
        .filter(|m| !matches!(m.scope, Scope::Space(_)) && !m.transcript)
        .map(space::Setting::of)
        .collect();
    for shared in shared {
        let setting = space::Setting::of(shared);
        let Some(own) = personal.iter().find(|p| space::same_setting(&setting, p)) else {
            continue;
        };
        let own = own.memory;
        let from = origin(shared);
        let (on_shared, on_own) = match space::precedence(shared) {
            space::Precedence::Personal => (
                "differs from the user's personal setting, which takes precedence".to_owned(),
                format!("personal setting: takes precedence over the convention of {from}"),
            ),
            space::Precedence::Mandatory => (
                format!("mandatory in {from}: overrides the user's personal setting"),
                format!("personal setting, overridden by the mandatory convention of {from}"),
            ),
        };
        notes.insert(shared.id.clone(), on_shared);
        notes.entry(own.id.clone()).or_insert(on_own);
    }
    notes
}

impl Mnemo {
    /// Creates a shared space of `tenant` (its records are a notebook of their own).
    pub fn create_space(&self, tenant: &str, new: NewSpace) -> Result<Space> {
        let name = new.name.unwrap_or_else(|| new.id.clone());
        let space = Space {
            tenant: tenant.to_owned(),
            id: new.id,
            name,
            description: new.description,
            maintainers_write_directly: new.maintainers_write_directly,
            on_author_deleted: new.on_author_deleted,
            created_at: self.now(),
            created_by: self.actor.clone(),
        }
        .validate()?;
        self.store.create_space(&space)?;
        Ok(space)
    }

    /// Every space of the tenant, by id.
    pub fn spaces(&self, tenant: &str) -> Result<Vec<Space>> {
        Ok(self.store.spaces(&validate_key(tenant, "tenant")?)?)
    }

    /// One space of the tenant.
    pub fn space(&self, tenant: &str, id: &str) -> Result<Space> {
        let (tenant, id) = (validate_key(tenant, "tenant")?, validate_key(id, "space")?);
        self.store.space(&tenant, &id)?.ok_or(Error::SpaceNotFound(id))
    }

    /// A space's members, by user id.
    pub fn members(&self, tenant: &str, id: &str) -> Result<Vec<Member>> {
        let space = self.space(tenant, id)?;
        Ok(self.store.members(&space.tenant, &space.id)?)
    }

    /// Gives a user of the tenant a role in a space (replacing the role they had there).
    pub fn add_member(&self, tenant: &str, id: &str, user_id: &str, role: Role) -> Result<Member> {
        let user = UserRef::new(tenant, user_id)?;
        let space = self.space(tenant, id)?;
        let member = Member {
            space_id: space.id,
            user_id: user.user_id().to_owned(),
            role,
            added_at: self.now(),
            added_by: self.actor.clone(),
        };
        self.store.put_member(user.tenant(), &member).map_err(|e| match e.kind {
            ErrorKind::NotFound => Error::SpaceNotFound(member.space_id.clone()),
            _ => e.into(),
        })?;
        Ok(member)
    }

    /// Removes a member from a space: their reads of it stop at once. What they wrote stays.
    pub fn remove_member(&self, tenant: &str, id: &str, user_id: &str) -> Result<()> {
        let user = UserRef::new(tenant, user_id)?;
        let space = self.space(tenant, id)?;
        if self.store.remove_member(user.tenant(), &space.id, user.user_id())? {
            Ok(())
        } else {
            Err(Error::MemberNotFound { space: space.id, user: user.user_id().to_owned() })
        }
    }

    /// Deletes a space: every record of it completely (as `forget --all` does a user's,
    /// with tombstones and a receipt), then the space and its memberships.
    pub fn delete_space(&self, tenant: &str, id: &str) -> Result<DeletionReceipt> {
        let space = self.space(tenant, id)?;
        let owner = UserRef::space(&space.tenant, &space.id)?;
        let receipt = self.store.forget_all(&owner, &self.deletion())?;
        self.store.delete_space(&space.tenant, &space.id)?;
        Ok(receipt)
    }

    /// The spaces `who` is a member of, with their role, by space id.
    pub fn memberships(&self, who: &UserRef) -> Result<Vec<(Space, Role)>> {
        Ok(self.store.memberships(who)?)
    }

    /// `who`'s space `id` and role there; a space they are not a member of answers as one
    /// that does not exist.
    fn membership(&self, who: &UserRef, id: &str) -> Result<(Space, Role)> {
        let id = validate_key(id, "space")?;
        self.store
            .memberships(who)?
            .into_iter()
            .find(|(space, _)| space.id == id)
            .ok_or(Error::SpaceNotFound(id))
    }

    /// The notebook of space `id` that `who` writes to, and how their writes are decided
    /// there; a reader may not write.
    fn writable(&self, who: &UserRef, id: &str) -> Result<(UserRef, WriteRule)> {
        let (space, role) = self.membership(who, id)?;
        match space::write_rule(&space, role) {
            WriteRule::Forbidden => Err(Error::SpaceRole {
                space: space.id,
                role,
                action: "write to it (contributors and maintainers may)",
            }),
            rule => Ok((UserRef::space(who.tenant(), &space.id)?, rule)),
        }
    }

    /// Writes a statement to a shared space as `who`: a reader may not; a contributor's
    /// write waits for a maintainer's review (`pending`, `needs_review`), as a maintainer's
    /// does unless the space lets maintainers write directly. The gate applies as to a
    /// private write (a secret is refused, an instruction held). `mandatory`: the
    /// convention overrides a member's personal setting of the same thing once active.
    pub fn remember_in(
        &self,
        who: &UserRef,
        space_id: &str,
        mut fields: CandidateFields,
        mandatory: bool,
    ) -> Result<Remembered> {
        let (owner, rule) = self.writable(who, space_id)?;
        let now = self.now();
        stamp(&mut fields, who, &owner, mandatory);
        let candidate = Candidate::validate(fields, now)?;
        if !self.store.settings(who)?.memory_enabled {
            return Ok(Remembered::refused(ReasonCode::MemoryDisabled));
        }
        let embedding = self.embed_one(&candidate.content)?;
        let record = NewRecord { id: new_id(), candidate, embedding };
        let receipt = self.store.write(&owner, record, now, &self.actor, &|c, ctx| {
            space::under_review(lifecycle::decide(c, &self.as_written(c, ctx), now), rule)
        })?;
        self.refine_soon(&owner);
        Ok((receipt.decision, receipt.id).into())
    }

    /// [`Mnemo::remember_in`] for several statements, in one transaction (all or nothing),
    /// as [`Mnemo::remember_batch`] writes them: loading a team's documents or decisions.
    pub fn remember_batch_in(
        &self,
        who: &UserRef,
        space_id: &str,
        batch: Vec<CandidateFields>,
    ) -> Result<Vec<Remembered>> {
        let (owner, rule) = self.writable(who, space_id)?;
        let batch = batch
            .into_iter()
            .map(|mut fields| {
                stamp(&mut fields, who, &owner, false);
                fields
            })
            .collect();
        self.write_batch(who, &owner, batch, rule)
    }

    /// The notebook holding record `id` within `who`'s reach: their own, else the space
    /// that holds it, if they may do `need` there. An id found nowhere answers with `who`'s
    /// own notebook, whose operation then says it is not found.
    pub(crate) fn reach(&self, who: &UserRef, id: &MemoryId, need: Need) -> Result<UserRef> {
        Ok(self.locate(who, id, need)?.map_or_else(|| who.clone(), |(owner, _)| owner))
    }

    /// [`Mnemo::reach`] with the record found there (unexpired), or `None` for an id found
    /// nowhere within reach.
    pub(crate) fn locate(
        &self,
        who: &UserRef,
        id: &MemoryId,
        need: Need,
    ) -> Result<Option<(UserRef, Memory)>> {
        let now = self.now();
        if let Some(memory) = self.store.get(who, id, now)? {
            return Ok(Some((who.clone(), memory)));
        }
        for (space, role) in self.store.memberships(who)? {
            let owner = UserRef::space(who.tenant(), &space.id)?;
            let Some(memory) = self.store.get(&owner, id, now)? else { continue };
            if let Need::Maintain(action) = need
                && !role.may_maintain()
            {
                return Err(Error::SpaceRole { space: space.id, role, action });
            }
            return Ok(Some((owner, memory)));
        }
        Ok(None)
    }

    /// The notebooks a read of `who` covers: a search scoped to one space reads that space;
    /// scoped otherwise, the user's own; unscoped, their own and every space they are a
    /// member of, or those `only` names ([`PRIVATE`] for their own).
    pub(crate) fn notebooks(
        &self,
        who: &UserRef,
        scope: Option<&Scope>,
        only: Option<&[String]>,
    ) -> Result<Vec<UserRef>> {
        match scope {
            Some(Scope::Space(id)) => {
                let (space, _) = self.membership(who, id)?;
                return Ok(vec![UserRef::space(who.tenant(), &space.id)?]);
            }
            Some(_) => return Ok(vec![who.clone()]),
            None => {}
        }
        // The user's own notebook alone needs no look at their memberships.
        if only.is_some_and(|only| !only.is_empty() && only.iter().all(|n| n.trim() == PRIVATE)) {
            return Ok(vec![who.clone()]);
        }
        let memberships = self.store.memberships(who)?;
        let Some(only) = only else {
            let mut all = vec![who.clone()];
            for (space, _) in memberships {
                all.push(UserRef::space(who.tenant(), &space.id)?);
            }
            return Ok(all);
        };
        let mut chosen = Vec::new();
        for name in only {
            let name = name.trim();
            let owner = if name == PRIVATE {
                who.clone()
            } else {
                let space = memberships
                    .iter()
                    .find(|(space, _)| space.id == name)
                    .ok_or_else(|| Error::SpaceNotFound(name.to_owned()))?;
                UserRef::space(who.tenant(), &space.0.id)?
            };
            if !chosen.contains(&owner) {
                chosen.push(owner);
            }
        }
        if chosen.is_empty() {
            return Err(mnemo_core::error::InvalidInput::new(
                "spaces",
                "names no notebook (use private and space ids)",
            )
            .into());
        }
        Ok(chosen)
    }

    /// The notebooks whose pending records `who` may approve: their own and every space they
    /// maintain.
    pub(crate) fn reviewable(&self, who: &UserRef) -> Result<Vec<UserRef>> {
        let mut owners = vec![who.clone()];
        for (space, role) in self.store.memberships(who)? {
            if role.may_maintain() {
                owners.push(UserRef::space(who.tenant(), &space.id)?);
            }
        }
        Ok(owners)
    }

    /// Active records past their `review_after` date that `who` may re-confirm (their own
    /// and those of the spaces they maintain), most overdue first.
    pub fn overdue_reviews(&self, who: &UserRef) -> Result<Vec<Memory>> {
        let now = self.now();
        let filter = ListFilter { status: Some(Status::Active), ..Default::default() };
        let mut overdue = Vec::new();
        for owner in self.reviewable(who)? {
            overdue.extend(
                self.store
                    .list(&owner, &filter, now)?
                    .into_iter()
                    .filter(|m| m.review_after.is_some_and(|at| at <= now))
                    .map(presented),
            );
        }
        overdue.sort_by(|a, b| a.review_after.cmp(&b.review_after).then(a.id.cmp(&b.id)));
        Ok(overdue)
    }

    /// What a user's deletion does in the tenant's spaces: their proposals still waiting are
    /// deleted completely; their approved contributions stay, attributed to a forgotten
    /// author (or go too, where the space says so), as do approvals they gave; they leave
    /// every space. Returns what remains, for the deletion's receipt.
    pub(crate) fn leave_spaces(&self, who: &UserRef) -> Result<Vec<Remnant>> {
        let now = self.now();
        let alias = space::forgotten_author(&uuid::Uuid::new_v4().simple().to_string());
        let every = ListFilter { include_expired: true, ..Default::default() };
        let mut kept = 0;
        for space in self.store.spaces(who.tenant())? {
            let owner = UserRef::space(&space.tenant, &space.id)?;
            let records = self.store.list(&owner, &every, now)?;
            let removed: Vec<MemoryId> = records
                .iter()
                .filter(|m| {
                    m.shared.as_ref().is_some_and(|s| s.author == who.user_id())
                        && (m.status == Status::Pending
                            || space.on_author_deleted == OnAuthorDeleted::Remove)
                })
                .map(|m| m.id.clone())
                .collect();
            if !removed.is_empty() {
                self.store.forget_each(&owner, &removed, &self.deletion())?;
            }
            kept += self.store.reattribute(&owner, who.user_id(), &alias)?;
            self.store.remove_member(who.tenant(), &space.id, who.user_id())?;
        }
        Ok((kept > 0)
            .then(|| Remnant {
                place: "shared spaces".into(),
                until: None,
                detail: format!(
                    "{kept} memories of shared spaces this user wrote or approved stay there, \
                     attributed to {alias} instead of the user"
                ),
            })
            .into_iter()
            .collect())
    }
}
