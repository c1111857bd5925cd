//! Who a memory belongs to: the tenant and user every query is scoped by, the optional
//! workspace or project label within that user, and the shared spaces whose notebooks have
//! an owner of their own.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::InvalidInput;
use crate::limits::MAX_KEY_BYTES;

/// Checks an identifier: non-empty after trimming, at most [`MAX_KEY_BYTES`], no control
/// characters. Returns the trimmed value.
pub fn validate_key(value: &str, field: &str) -> Result<String, InvalidInput> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(InvalidInput::new(field, "must not be empty"));
    }
    if trimmed.len() > MAX_KEY_BYTES {
        return Err(InvalidInput::new(field, format!("longer than {MAX_KEY_BYTES} bytes")));
    }
    if trimmed.chars().any(char::is_control) {
        return Err(InvalidInput::new(field, "contains control characters"));
    }
    Ok(trimmed.to_owned())
}

/// The tenant and user a request acts for. Every store operation takes one, first.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UserRef {
    tenant: String,
    user_id: String,
}

impl UserRef {
    /// Validates and builds a user reference.
    pub fn new(tenant: &str, user_id: &str) -> Result<Self, InvalidInput> {
        Ok(Self {
            tenant: validate_key(tenant, "tenant")?,
            user_id: validate_key(user_id, "user")?,
        })
    }

    /// The tenant id.
    pub fn tenant(&self) -> &str {
        &self.tenant
    }

    /// The user id within the tenant.
    pub fn user_id(&self) -> &str {
        &self.user_id
    }

    /// The owner of a shared space's notebook: an id no user can have (it starts with a
    /// control character, which [`UserRef::new`] refuses), so every store rule that confines
    /// a query to one user confines it to the space.
    pub fn space(tenant: &str, space_id: &str) -> Result<Self, InvalidInput> {
        Ok(Self {
            tenant: validate_key(tenant, "tenant")?,
            user_id: format!("{SPACE_OWNER_PREFIX}{}", validate_key(space_id, "space")?),
        })
    }

    /// The owner of a notebook as a store keeps it (a user's id, or a space's owner id).
    pub fn stored(tenant: &str, user_id: &str) -> Result<Self, InvalidInput> {
        match user_id.strip_prefix(SPACE_OWNER_PREFIX) {
            Some(space) => Self::space(tenant, space),
            None => Self::new(tenant, user_id),
        }
    }

    /// The space this reference owns, when it is a space's notebook.
    pub fn space_id(&self) -> Option<&str> {
        self.user_id.strip_prefix(SPACE_OWNER_PREFIX)
    }
}

/// How a space's owner id starts (see [`UserRef::space`]).
pub const SPACE_OWNER_PREFIX: &str = "\u{1}space:";

impl fmt::Display for UserRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.tenant, self.user_id)
    }
}

/// The scope of a memory within its user: personal, or tied to a workspace or project.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Scope {
    /// The user's personal memory (the default).
    #[default]
    User,
    /// A workspace label on the user's own records (private: sharing is a [`Scope::Space`]).
    Workspace(String),
    /// Memory about one project of the user (a label on the user's own records).
    Project(String),
    /// A record of a shared space (it lives in the space's notebook, not the user's).
    Space(String),
}

impl FromStr for Scope {
    type Err = InvalidInput;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        let bad = || {
            InvalidInput::new(
                "scope",
                format!(
                    "`{text}` is not a scope (use user, space:<id>, workspace:<id> or project:<id>)"
                ),
            )
        };
        if text == "user" {
            return Ok(Scope::User);
        }
        let (prefix, id) = text.split_once(':').ok_or_else(bad)?;
        let id = validate_key(id, "scope").map_err(|_| bad())?;
        match prefix {
            "workspace" => Ok(Scope::Workspace(id)),
            "project" => Ok(Scope::Project(id)),
            "space" => Ok(Scope::Space(id)),
            _ => Err(bad()),
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::User => f.write_str("user"),
            Scope::Workspace(id) => write!(f, "workspace:{id}"),
            Scope::Project(id) => write!(f, "project:{id}"),
            Scope::Space(id) => write!(f, "space:{id}"),
        }
    }
}

impl schemars::JsonSchema for Scope {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Scope".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": "^(user|space:.+|workspace:.+|project:.+)$",
            "description": "user (private), space:<id> (a shared space), workspace:<id> or project:<id> (private labels)"
        })
    }
}

impl Serialize for Scope {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Scope {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer)?.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_parses_and_prints() {
        for text in ["user", "workspace:acme", "project:p-1", "space:eng"] {
            let scope: Scope = text.parse().unwrap();
            assert_eq!(scope.to_string(), text);
        }
        for bad in ["", "team:x", "workspace:", "project", "user:1"] {
            assert!(bad.parse::<Scope>().is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn user_ref_rejects_empty_and_control_characters() {
        assert!(UserRef::new("t", " ").is_err());
        assert!(UserRef::new("", "u").is_err());
        assert!(UserRef::new("t", "a\u{0}b").is_err());
        assert_eq!(UserRef::new(" t ", "u").unwrap().tenant(), "t");
    }

    #[test]
    fn a_space_owner_is_no_user() {
        let space = UserRef::space("t", "eng").unwrap();
        assert_eq!(space.space_id(), Some("eng"));
        assert!(UserRef::new("t", space.user_id()).is_err(), "a user took a space's owner id");
        assert_eq!(UserRef::new("t", "space:eng").unwrap().space_id(), None);
        assert!(UserRef::space("t", "").is_err());
    }
}
