//! Shared spaces and their members on PostgreSQL (`spaces`, `space_members`). A space's
//! records are ordinary rows of its own notebook; these tables only say who may reach it.

use mnemo_core::ports::{PortError, SpaceStore};
use mnemo_core::space::{Member, Role, Space};
use mnemo_core::{ErrorKind, Timestamp, UserRef};

use crate::{PostgresBackend, StoreError};

const SPACE_COLUMNS: &str = "s.tenant, s.id, s.name, s.description, \
     s.maintainers_write_directly, s.on_author_deleted, s.created_at, s.created_by";

fn parsed<T: std::str::FromStr<Err = mnemo_core::error::InvalidInput>>(
    text: &str,
) -> Result<T, StoreError> {
    text.parse().map_err(|e: mnemo_core::error::InvalidInput| StoreError::Corrupt(e.to_string()))
}

fn space_from_row(row: &postgres::Row) -> Result<Space, StoreError> {
    Ok(Space {
        tenant: row.try_get(0)?,
        id: row.try_get(1)?,
        name: row.try_get(2)?,
        description: row.try_get(3)?,
        maintainers_write_directly: row.try_get(4)?,
        on_author_deleted: parsed(row.try_get::<_, &str>(5)?)?,
        created_at: Timestamp::from_millis(row.try_get(6)?),
        created_by: row.try_get(7)?,
    })
}

fn member_from_row(row: &postgres::Row) -> Result<Member, StoreError> {
    Ok(Member {
        space_id: row.try_get(0)?,
        user_id: row.try_get(1)?,
        role: parsed(row.try_get::<_, &str>(2)?)?,
        added_at: Timestamp::from_millis(row.try_get(3)?),
        added_by: row.try_get(4)?,
    })
}

impl SpaceStore for PostgresBackend {
    fn create_space(&self, space: &Space) -> Result<(), PortError> {
        let mut conn = self.conn()?;
        let inserted = conn
            .client
            .execute(
                "INSERT INTO spaces (tenant, id, name, description, maintainers_write_directly,
                                     on_author_deleted, created_at, created_by)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING",
                &[
                    &space.tenant,
                    &space.id,
                    &space.name,
                    &space.description,
                    &space.maintainers_write_directly,
                    &space.on_author_deleted.as_str(),
                    &space.created_at.as_millis(),
                    &space.created_by,
                ],
            )
            .map_err(StoreError::from)?;
        if inserted == 0 {
            return Err(StoreError::Conflict(format!("space {} exists already", space.id)).into());
        }
        Ok(())
    }

    fn space(&self, tenant: &str, id: &str) -> Result<Option<Space>, PortError> {
        let mut conn = self.conn()?;
        let row = conn
            .client
            .query_opt(
                &format!("SELECT {SPACE_COLUMNS} FROM spaces s WHERE s.tenant = $1 AND s.id = $2"),
                &[&tenant, &id],
            )
            .map_err(StoreError::from)?;
        Ok(row.as_ref().map(space_from_row).transpose()?)
    }

    fn spaces(&self, tenant: &str) -> Result<Vec<Space>, PortError> {
        let mut conn = self.conn()?;
        let rows = conn
            .client
            .query(
                &format!("SELECT {SPACE_COLUMNS} FROM spaces s WHERE s.tenant = $1 ORDER BY s.id"),
                &[&tenant],
            )
            .map_err(StoreError::from)?;
        Ok(rows.iter().map(space_from_row).collect::<Result<_, _>>()?)
    }

    fn delete_space(&self, tenant: &str, id: &str) -> Result<bool, PortError> {
        let mut conn = self.conn()?;
        // Members go with the space (ON DELETE CASCADE).
        let removed = conn
            .client
            .execute("DELETE FROM spaces WHERE tenant = $1 AND id = $2", &[&tenant, &id])
            .map_err(StoreError::from)?;
        Ok(removed > 0)
    }

    fn put_member(&self, tenant: &str, member: &Member) -> Result<(), PortError> {
        let mut conn = self.conn()?;
        let written = conn
            .client
            .execute(
                "INSERT INTO space_members (tenant, space_id, user_id, role, added_at, added_by)
                 SELECT $1, $2, $3, $4, $5, $6
                  WHERE EXISTS (SELECT 1 FROM spaces WHERE tenant = $1 AND id = $2)
                 ON CONFLICT (tenant, space_id, user_id) DO UPDATE
                    SET role = excluded.role, added_at = excluded.added_at,
                        added_by = excluded.added_by",
                &[
                    &tenant,
                    &member.space_id,
                    &member.user_id,
                    &member.role.as_str(),
                    &member.added_at.as_millis(),
                    &member.added_by,
                ],
            )
            .map_err(StoreError::from)?;
        if written == 0 {
            return Err(PortError::new(
                ErrorKind::NotFound,
                format!("no space {}", member.space_id),
            ));
        }
        Ok(())
    }

    fn remove_member(&self, tenant: &str, space: &str, user_id: &str) -> Result<bool, PortError> {
        let mut conn = self.conn()?;
        let removed = conn
            .client
            .execute(
                "DELETE FROM space_members WHERE tenant = $1 AND space_id = $2 AND user_id = $3",
                &[&tenant, &space, &user_id],
            )
            .map_err(StoreError::from)?;
        Ok(removed > 0)
    }

    fn members(&self, tenant: &str, space: &str) -> Result<Vec<Member>, PortError> {
        let mut conn = self.conn()?;
        let rows = conn
            .client
            .query(
                "SELECT space_id, user_id, role, added_at, added_by FROM space_members
                  WHERE tenant = $1 AND space_id = $2 ORDER BY user_id",
                &[&tenant, &space],
            )
            .map_err(StoreError::from)?;
        Ok(rows.iter().map(member_from_row).collect::<Result<_, _>>()?)
    }

    fn memberships(&self, who: &UserRef) -> Result<Vec<(Space, Role)>, PortError> {
        let mut conn = self.conn()?;
        let rows = conn
            .client
            .query(
                &format!(
                    "SELECT {SPACE_COLUMNS}, m.role FROM space_members m
                       JOIN spaces s ON s.tenant = m.tenant AND s.id = m.space_id
                      WHERE m.tenant = $1 AND m.user_id = $2 ORDER BY s.id"
                ),
                &[&who.tenant(), &who.user_id()],
            )
            .map_err(StoreError::from)?;
        Ok(rows
            .iter()
            .map(|row| Ok((space_from_row(row)?, parsed(row.try_get::<_, &str>(8)?)?)))
            .collect::<Result<_, StoreError>>()?)
    }
}
