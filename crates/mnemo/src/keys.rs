//! API keys: created once and shown once, stored as a SHA-256 hash, bound to a tenant and
//! optionally to one user; and the memory panel's one-time sign-in links, kept the same way.

use mnemo_core::UserRef;
use mnemo_core::error::InvalidInput;
use mnemo_core::ports::{ApiKey, SignInLink};
use mnemo_core::scope::validate_key;
use sha2::{Digest, Sha256};

use crate::{Error, Mnemo, Result};

/// Who a request acts as, from its key.
#[derive(Debug, Clone, PartialEq)]
pub struct Principal {
    /// The key's id.
    pub key_id: String,
    /// Its tenant.
    pub tenant: String,
    /// The only user it may act for (`None`: any user of the tenant).
    pub user_id: Option<String>,
    /// Whether it may manage the tenant.
    pub admin: bool,
    /// Its own rate limit (requests per second), if it has one.
    pub rate: Option<f64>,
}

/// The highest rate a key may be given, in requests per second.
pub const MAX_KEY_RATE: f64 = 1_000_000.0;

fn hash(secret: &str) -> String {
    Sha256::digest(secret.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

impl Mnemo {
    /// Creates a key for `tenant` (and, for a user key, `user`); returns the secret, which is
    /// not stored and cannot be shown again, and the stored record.
    /// `rate` gives the key its own rate limit in requests per second (a backend service that
    /// holds one key for many users needs more than the server's default).
    pub fn create_key(
        &self,
        tenant: &str,
        user: Option<&str>,
        admin: bool,
        rate: Option<f64>,
    ) -> Result<(String, ApiKey)> {
        let tenant = validate_key(tenant, "tenant")?;
        if let Some(rate) = rate
            && !(rate.is_finite() && rate > 0.0 && rate <= MAX_KEY_RATE)
        {
            return Err(InvalidInput::new(
                "--rate",
                format!("must be a number of requests per second in (0, {MAX_KEY_RATE}]"),
            )
            .into());
        }
        let user_id = user.map(|u| validate_key(u, "user")).transpose()?;
        if admin && user_id.is_some() {
            return Err(InvalidInput::new(
                "--admin",
                "an admin key acts for the whole tenant, not one user",
            )
            .into());
        }
        let secret =
            format!("mnemo_{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple());
        let key = ApiKey {
            id: format!("key_{}", &uuid::Uuid::new_v4().simple().to_string()[..12]),
            tenant,
            user_id,
            admin,
            rate,
            key_hash: hash(&secret),
            created_at: self.now(),
            revoked_at: None,
        };
        self.store().create_key(&key)?;
        Ok((secret, key))
    }

    /// The principal a secret key stands for, if it is a live key.
    pub fn authenticate(&self, secret: &str) -> Result<Option<Principal>> {
        let secret = secret.trim();
        if !secret.starts_with("mnemo_") {
            return Ok(None);
        }
        Ok(self.store().find_key(&hash(secret))?.map(|k| Principal {
            key_id: k.id,
            tenant: k.tenant,
            user_id: k.user_id,
            admin: k.admin,
            rate: k.rate,
        }))
    }

    /// A tenant's keys (hashes are never shown).
    pub fn list_keys(&self, tenant: &str) -> Result<Vec<ApiKey>> {
        Ok(self.store().list_keys(&validate_key(tenant, "tenant")?)?)
    }

    /// Whether any tenant has a live key.
    pub fn has_live_keys(&self) -> Result<bool> {
        Ok(self.store().has_live_keys()?)
    }

    /// Revokes a tenant's key.
    pub fn revoke_key(&self, tenant: &str, id: &str) -> Result<()> {
        if self.store().revoke_key(&validate_key(tenant, "tenant")?, id, self.now())? {
            Ok(())
        } else {
            Err(Error::KeyNotFound { id: id.to_owned(), tenant: tenant.to_owned() })
        }
    }
}

/// How long a sign-in link of the memory panel works.
pub const SIGN_IN_TTL: mnemo_core::duration::Ttl =
    mnemo_core::duration::Ttl::from_millis(10 * 60_000);

impl Mnemo {
    /// Makes a one-time sign-in link secret for `who`'s memory panel, valid for
    /// [`SIGN_IN_TTL`]: only its hash is stored, and it signs in once.
    pub fn create_sign_in(&self, who: &UserRef) -> Result<String> {
        let secret = format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple());
        let now = self.now();
        let link = SignInLink {
            hash: hash(&secret),
            who: who.clone(),
            created_at: now,
            expires_at: now.plus(SIGN_IN_TTL),
        };
        self.store().create_sign_in(&link)?;
        Ok(secret)
    }

    /// The user a sign-in link secret signs in, once: `None` for a link that is unknown,
    /// expired or already used.
    pub fn redeem_sign_in(&self, secret: &str) -> Result<Option<UserRef>> {
        if secret.is_empty() || secret.len() > 128 {
            return Ok(None);
        }
        Ok(self.store().redeem_sign_in(&hash(secret), self.now())?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_is_sha256_hex() {
        assert_eq!(hash("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
