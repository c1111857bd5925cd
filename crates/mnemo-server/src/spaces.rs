//! `/v1/spaces`: shared spaces and their members. Creating and deleting a space and
//! changing its members needs an admin key of the tenant; a user key sees only the spaces
//! its user is a member of (another space answers exactly as a made-up id does), a tenant
//! key every space of its tenant.

use axum::extract::State;
use mnemo::NewSpace;
use mnemo_api::requests::{MemberBody, SpaceCreateBody, UserQuery};
use mnemo_api::{self as api};

use crate::AppState;
use crate::routes::{ApiError, ApiResult as Answer, Body, Caller, Path, Query, blocking, json};

/// The space `id` as the caller may see it: a user key's own user must be a member.
fn visible(
    mnemo: &mnemo::Mnemo,
    caller: &Caller,
    id: &str,
) -> Result<mnemo::core::space::Space, ApiError> {
    match &caller.0.user_id {
        Some(_) => {
            let who = caller.user(None)?;
            mnemo
                .memberships(&who)?
                .into_iter()
                .map(|(space, _)| space)
                .find(|space| space.id == id.trim())
                .ok_or_else(|| mnemo::Error::SpaceNotFound(id.trim().to_owned()).into())
        }
        None => Ok(mnemo.space(&caller.0.tenant, id)?),
    }
}

pub(crate) async fn create(
    State(state): State<AppState>,
    caller: Caller,
    body: Result<Body<SpaceCreateBody>, ApiError>,
) -> Answer<api::SpaceEntry> {
    let Body(body) = body?;
    caller.admin("creating a space")?;
    let tenant = caller.0.tenant.clone();
    json(
        blocking(&state, &caller, move |mnemo| {
            let new = NewSpace {
                id: body.id,
                name: body.name,
                description: body.description,
                maintainers_write_directly: body.maintainers_write_directly,
                on_author_deleted: body.on_author_deleted,
            };
            Ok(api::SpaceEntry { space: mnemo.create_space(&tenant, new)?, role: None })
        })
        .await?,
    )
}

/// A user's spaces with their role (a user key's own user, or the user a tenant key names),
/// or every space of the tenant for a tenant key naming no user.
pub(crate) async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<UserQuery>,
) -> Answer<api::SpaceList> {
    let who = match (&caller.0.user_id, &q.user_id) {
        (None, None) => None,
        _ => Some(caller.user(q.user_id.as_deref())?),
    };
    let tenant = caller.0.tenant.clone();
    let spaces = blocking(&state, &caller, move |mnemo| {
        Ok(match who {
            Some(who) => mnemo
                .memberships(&who)?
                .into_iter()
                .map(|(space, role)| api::SpaceEntry { space, role: Some(role) })
                .collect(),
            None => mnemo
                .spaces(&tenant)?
                .into_iter()
                .map(|space| api::SpaceEntry { space, role: None })
                .collect(),
        })
    })
    .await?;
    json(api::SpaceList { spaces })
}

pub(crate) async fn show(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Answer<api::SpaceDetail> {
    let tenant = caller.0.tenant.clone();
    let detail = blocking(&state, &caller, {
        let caller = Caller(caller.0.clone());
        move |mnemo| {
            let space = visible(mnemo, &caller, &id)?;
            let members = mnemo.members(&tenant, &space.id)?;
            Ok(api::SpaceDetail { space, members })
        }
    })
    .await?;
    json(detail)
}

pub(crate) async fn members(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Answer<api::MemberList> {
    let tenant = caller.0.tenant.clone();
    let members = blocking(&state, &caller, {
        let caller = Caller(caller.0.clone());
        move |mnemo| {
            let space = visible(mnemo, &caller, &id)?;
            Ok(mnemo.members(&tenant, &space.id)?)
        }
    })
    .await?;
    json(api::MemberList { members })
}

pub(crate) async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Answer<api::SpaceDeleted> {
    caller.admin("deleting a space")?;
    let tenant = caller.0.tenant.clone();
    json(
        blocking(&state, &caller, move |mnemo| {
            let receipt = mnemo.delete_space(&tenant, &id)?;
            Ok(api::SpaceDeleted { deleted: id.trim().to_owned(), receipt })
        })
        .await?,
    )
}

pub(crate) async fn add_member(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    body: Result<Body<MemberBody>, ApiError>,
) -> Answer<mnemo::core::space::Member> {
    let Body(body) = body?;
    caller.admin("changing a space's members")?;
    let tenant = caller.0.tenant.clone();
    json(
        blocking(&state, &caller, move |mnemo| {
            Ok(mnemo.add_member(&tenant, &id, &body.user_id, body.role)?)
        })
        .await?,
    )
}

pub(crate) async fn remove_member(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, user_id)): Path<(String, String)>,
) -> Answer<api::MemberRemoved> {
    caller.admin("changing a space's members")?;
    let tenant = caller.0.tenant.clone();
    json(
        blocking(&state, &caller, move |mnemo| {
            mnemo.remove_member(&tenant, &id, &user_id)?;
            Ok(api::MemberRemoved { space_id: id, user_id })
        })
        .await?,
    )
}
