//! Shared spaces and their members on SQLite (`spaces`, `space_members`). A space's records
//! are ordinary rows of its own notebook; these tables only say who may reach it.

use mnemo_core::ports::{PortError, SpaceStore};
use mnemo_core::space::{Member, Role, Space};
use mnemo_core::{Timestamp, UserRef};
use rusqlite::{OptionalExtension, params};

use crate::vector_index::Touched;
use crate::{SqliteBackend, StoreError};

const SPACE_COLUMNS: &str = "s.tenant, s.id, s.name, s.description, \
     s.maintainers_write_directly, s.on_author_deleted, s.created_at, s.created_by";

fn parsed<T: std::str::FromStr<Err = mnemo_core::error::InvalidInput>>(
    text: &str,
    column: usize,
) -> rusqlite::Result<T> {
    text.parse().map_err(|e: mnemo_core::error::InvalidInput| {
        rusqlite::Error::FromSqlConversionFailure(
            column,
            rusqlite::types::Type::Text,
            e.problem.into(),
        )
    })
}

fn space_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Space> {
    Ok(Space {
        tenant: row.get(0)?,
        id: row.get(1)?,
        name: row.get(2)?,
        description: row.get(3)?,
        maintainers_write_directly: row.get(4)?,
        on_author_deleted: parsed(&row.get::<_, String>(5)?, 5)?,
        created_at: Timestamp::from_millis(row.get(6)?),
        created_by: row.get(7)?,
    })
}

fn member_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Member> {
    Ok(Member {
        space_id: row.get(0)?,
        user_id: row.get(1)?,
        role: parsed(&row.get::<_, String>(2)?, 2)?,
        added_at: Timestamp::from_millis(row.get(3)?),
        added_by: row.get(4)?,
    })
}

impl SpaceStore for SqliteBackend {
    fn create_space(&self, space: &Space) -> Result<(), PortError> {
        Ok(self.write_tx(&space.tenant, None, |tx| {
            let exists: bool = tx.query_row(
                "SELECT EXISTS (SELECT 1 FROM spaces WHERE tenant = ?1 AND id = ?2)",
                params![space.tenant, space.id],
                |r| r.get(0),
            )?;
            if exists {
                return Err(StoreError::Conflict(format!("space {} exists already", space.id)));
            }
            tx.execute(
                "INSERT INTO spaces (tenant, id, name, description, maintainers_write_directly,
                                     on_author_deleted, created_at, created_by)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    space.tenant,
                    space.id,
                    space.name,
                    space.description,
                    space.maintainers_write_directly,
                    space.on_author_deleted.as_str(),
                    space.created_at.as_millis(),
                    space.created_by
                ],
            )?;
            Ok(((), Touched::Nothing))
        })?)
    }

    fn space(&self, tenant: &str, id: &str) -> Result<Option<Space>, PortError> {
        let conn = self.reader();
        Ok(conn
            .prepare_cached(&format!(
                "SELECT {SPACE_COLUMNS} FROM spaces s WHERE s.tenant = ?1 AND s.id = ?2"
            ))
            .and_then(|mut stmt| stmt.query_row([tenant, id], space_from_row).optional())
            .map_err(StoreError::from)?)
    }

    fn spaces(&self, tenant: &str) -> Result<Vec<Space>, PortError> {
        let conn = self.reader();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {SPACE_COLUMNS} FROM spaces s WHERE s.tenant = ?1 ORDER BY s.id"
            ))
            .map_err(StoreError::from)?;
        let rows = stmt.query_map([tenant], space_from_row).map_err(StoreError::from)?;
        Ok(rows.collect::<Result<Vec<_>, _>>().map_err(StoreError::from)?)
    }

    fn delete_space(&self, tenant: &str, id: &str) -> Result<bool, PortError> {
        Ok(self.write_tx(tenant, None, |tx| {
            tx.execute(
                "DELETE FROM space_members WHERE tenant = ?1 AND space_id = ?2",
                params![tenant, id],
            )?;
            let removed = tx
                .execute("DELETE FROM spaces WHERE tenant = ?1 AND id = ?2", params![tenant, id])?;
            Ok((removed > 0, Touched::Nothing))
        })?)
    }

    fn put_member(&self, tenant: &str, member: &Member) -> Result<(), PortError> {
        Ok(self.write_tx(tenant, None, |tx| {
            let exists: bool = tx.query_row(
                "SELECT EXISTS (SELECT 1 FROM spaces WHERE tenant = ?1 AND id = ?2)",
                params![tenant, member.space_id],
                |r| r.get(0),
            )?;
            if !exists {
                return Err(StoreError::Port(PortError::new(
                    mnemo_core::ErrorKind::NotFound,
                    format!("no space {}", member.space_id),
                )));
            }
            tx.execute(
                "INSERT INTO space_members (tenant, space_id, user_id, role, added_at, added_by)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (tenant, space_id, user_id) DO UPDATE
                    SET role = excluded.role, added_at = excluded.added_at,
                        added_by = excluded.added_by",
                params![
                    tenant,
                    member.space_id,
                    member.user_id,
                    member.role.as_str(),
                    member.added_at.as_millis(),
                    member.added_by
                ],
            )?;
            Ok(((), Touched::Nothing))
        })?)
    }

    fn remove_member(&self, tenant: &str, space: &str, user_id: &str) -> Result<bool, PortError> {
        Ok(self.write_tx(tenant, None, |tx| {
            let removed = tx.execute(
                "DELETE FROM space_members WHERE tenant = ?1 AND space_id = ?2 AND user_id = ?3",
                params![tenant, space, user_id],
            )?;
            Ok((removed > 0, Touched::Nothing))
        })?)
    }

    fn members(&self, tenant: &str, space: &str) -> Result<Vec<Member>, PortError> {
        let conn = self.reader();
        let mut stmt = conn
            .prepare_cached(
                "SELECT space_id, user_id, role, added_at, added_by FROM space_members
                  WHERE tenant = ?1 AND space_id = ?2 ORDER BY user_id",
            )
            .map_err(StoreError::from)?;
        let rows = stmt.query_map([tenant, space], member_from_row).map_err(StoreError::from)?;
        Ok(rows.collect::<Result<Vec<_>, _>>().map_err(StoreError::from)?)
    }

    fn memberships(&self, who: &UserRef) -> Result<Vec<(Space, Role)>, PortError> {
        let conn = self.reader();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {SPACE_COLUMNS}, m.role FROM space_members m
                   JOIN spaces s ON s.tenant = m.tenant AND s.id = m.space_id
                  WHERE m.tenant = ?1 AND m.user_id = ?2 ORDER BY s.id"
            ))
            .map_err(StoreError::from)?;
        let rows = stmt
            .query_map([who.tenant(), who.user_id()], |row| {
                Ok((space_from_row(row)?, parsed::<Role>(&row.get::<_, String>(8)?, 8)?))
            })
            .map_err(StoreError::from)?;
        Ok(rows.collect::<Result<Vec<_>, _>>().map_err(StoreError::from)?)
    }
}
