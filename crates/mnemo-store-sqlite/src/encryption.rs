//! Encryption at rest: with the `encryption` feature the file is an SQLCipher database
//! (AES-256 pages with an HMAC each, the write-ahead log included), unlocked by a passphrase.
//!
//! The passphrase is stretched once per open with PBKDF2-HMAC-SHA256 over the file's own
//! random salt (its first 16 bytes; a new file gets a new salt), and every connection of the
//! store is given the raw key that results, so opening a pool of connections costs one
//! derivation. `rekey` writes a copy of the database under a new key (or none) beside the
//! file and renames it over the original.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use rusqlite::Connection;

use crate::StoreError;

/// The salt's length at the start of an encrypted file.
const SALT_BYTES: usize = 16;

/// PBKDF2 rounds, as SQLCipher 4 uses for a passphrase.
#[cfg(feature = "encryption")]
const KDF_ROUNDS: u32 = 256_000;

/// The first bytes of every unencrypted SQLite file.
const PLAIN_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// A database passphrase. Its `Debug` form never shows it.
#[derive(Clone)]
pub struct DatabaseKey(#[cfg_attr(not(feature = "encryption"), allow(dead_code))] String);

impl DatabaseKey {
    /// A passphrase; surrounding whitespace (a key file's final newline) is not part of it.
    pub fn new(passphrase: &str) -> Result<Self, StoreError> {
        let passphrase = passphrase.trim();
        if passphrase.is_empty() {
            return Err(StoreError::Key("the database key is empty".into()));
        }
        Ok(Self(passphrase.to_owned()))
    }
}

impl fmt::Debug for DatabaseKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DatabaseKey(…)")
    }
}

/// What the file at a path holds, judged from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileState {
    /// Missing or empty: a new database.
    New,
    /// An unencrypted SQLite file.
    Plain,
    /// Anything else: an encrypted database, or not a database at all.
    Opaque,
}

/// Reads the file's state and, when it is not plain, its salt.
fn inspect(path: &Path) -> (FileState, Option<[u8; SALT_BYTES]>) {
    let mut head = [0u8; SALT_BYTES];
    let read = std::fs::File::open(path).and_then(|mut file| {
        let mut filled = 0;
        while filled < head.len() {
            match file.read(&mut head[filled..])? {
                0 => break,
                n => filled += n,
            }
        }
        Ok(filled)
    });
    match read {
        Err(_) | Ok(0) => (FileState::New, None),
        Ok(n) if n == SALT_BYTES && &head == PLAIN_HEADER => (FileState::Plain, None),
        Ok(_) => (FileState::Opaque, Some(head)),
    }
}

/// The state of the file at `path`.
pub(crate) fn file_state(path: &Path) -> FileState {
    inspect(path).0
}

/// The raw key every connection of one open store is given (`x'<key><salt>'`).
#[derive(Clone)]
pub(crate) struct Unlock(String);

impl fmt::Debug for Unlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Unlock(…)")
    }
}

impl Unlock {
    /// Derives the raw key for the file at `path` from `key`: with the file's salt, or a new
    /// one for a new file. A plain file cannot be opened with a key.
    pub(crate) fn for_file(path: &Path, key: &DatabaseKey) -> Result<Self, StoreError> {
        match inspect(path) {
            (FileState::Plain, _) => Err(StoreError::Key(format!(
                "{} is not encrypted: open it without a key, or encrypt it with `mnemo rekey`",
                path.display()
            ))),
            (FileState::Opaque, Some(salt)) => Self::derive(key, salt),
            _ => Self::derive(key, new_salt()?),
        }
    }

    /// The raw key for `key` with a new salt (a file about to be written).
    pub(crate) fn fresh(key: &DatabaseKey) -> Result<Self, StoreError> {
        Self::derive(key, new_salt()?)
    }

    #[cfg(feature = "encryption")]
    fn derive(key: &DatabaseKey, salt: [u8; SALT_BYTES]) -> Result<Self, StoreError> {
        use std::fmt::Write;
        let mut raw = [0u8; 32];
        pbkdf2::pbkdf2_hmac::<sha2::Sha256>(key.0.as_bytes(), &salt, KDF_ROUNDS, &mut raw);
        let mut hex = String::with_capacity(2 * (raw.len() + salt.len()) + 3);
        hex.push_str("x'");
        for byte in raw.iter().chain(&salt) {
            let _ = write!(hex, "{byte:02X}");
        }
        hex.push('\'');
        Ok(Self(hex))
    }

    #[cfg(not(feature = "encryption"))]
    fn derive(_key: &DatabaseKey, _salt: [u8; SALT_BYTES]) -> Result<Self, StoreError> {
        Err(StoreError::Key(
            "this mnemo was built without encryption at rest (cargo feature `encryption`)".into(),
        ))
    }

    /// Gives `conn` the key; must come before anything else reads the file.
    pub(crate) fn apply(&self, conn: &Connection) -> Result<(), StoreError> {
        // A wrong key is reported as an error value; SQLCipher need not also log it. Hex
        // digits only in the key: nothing here can break out of the literal.
        conn.execute_batch(&format!(
            "PRAGMA cipher_log_level = NONE; PRAGMA key = \"{}\";",
            self.0
        ))?;
        Ok(())
    }
}

/// Sixteen random bytes, from SQLite's own generator.
fn new_salt() -> Result<[u8; SALT_BYTES], StoreError> {
    let conn = Connection::open_in_memory()?;
    let bytes: Vec<u8> =
        conn.query_row("SELECT randomblob(?1)", [SALT_BYTES as i64], |r| r.get(0))?;
    let mut salt = [0u8; SALT_BYTES];
    salt.copy_from_slice(&bytes);
    Ok(salt)
}

/// Why a file could not be read with the key given (or without one).
pub(crate) fn unreadable(path: &Path, keyed: bool) -> StoreError {
    let why = match (keyed, file_state(path)) {
        (true, _) => "the key is wrong, or it is not a mnemo database",
        (false, FileState::Opaque) => "it is encrypted (give its key), or it is not a database",
        (false, _) => "it is not a mnemo database",
    };
    StoreError::Key(format!("cannot read {}: {why}", path.display()))
}

/// Rewrites the database at `path` under `new` (`None`: unencrypted), reading it with `old`.
/// The copy is written beside the file and renamed over it once complete, so an interrupted
/// rekey leaves the original as it was. No other connection may have the file open.
pub fn rekey(
    path: &Path,
    old: Option<&DatabaseKey>,
    new: Option<&DatabaseKey>,
) -> Result<(), StoreError> {
    if !cfg!(feature = "encryption") {
        return Err(StoreError::Key(
            "this mnemo was built without encryption at rest (cargo feature `encryption`)".into(),
        ));
    }
    if file_state(path) == FileState::New {
        return Err(StoreError::Key(format!("{} holds no database to rekey", path.display())));
    }
    // CREATE lets the copy be attached; the file itself exists (checked above).
    let flags =
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_CREATE;
    let conn = Connection::open_with_flags(path, flags)
        .map_err(|source| StoreError::Open { path: path.to_owned(), source })?;
    conn.busy_timeout(std::time::Duration::from_secs(2))?;
    if let Some(old) = old {
        Unlock::for_file(path, old)?.apply(&conn)?;
    }
    // The exclusive lock fails while another process has the file open.
    let readable = conn
        .execute_batch("PRAGMA locking_mode = EXCLUSIVE; BEGIN IMMEDIATE; COMMIT;")
        .and_then(|()| {
            conn.query_row("SELECT count(*) FROM schema_migrations", [], |r| r.get::<_, i64>(0))
        });
    if let Err(error) = readable {
        return Err(match error.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
                StoreError::Key(format!(
                    "{} is in use by another process; stop it before rekeying",
                    path.display()
                ))
            }
            _ => unreadable(path, old.is_some()),
        });
    }
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    let copy = sibling(path, "-rekey");
    let _ = std::fs::remove_file(&copy);
    let key = match new {
        Some(new) => Unlock::fresh(new)?.0,
        None => String::new(),
    };
    let exported = (|| -> Result<(), StoreError> {
        conn.execute(
            &format!("ATTACH DATABASE ?1 AS rekeyed KEY \"{key}\""),
            [copy.to_string_lossy().as_ref()],
        )?;
        conn.query_row("SELECT sqlcipher_export('rekeyed')", [], |_| Ok(()))?;
        conn.execute_batch("DETACH DATABASE rekeyed;")?;
        Ok(())
    })();
    if let Err(error) = exported {
        let _ = std::fs::remove_file(&copy);
        return Err(error);
    }
    drop(conn);
    std::fs::File::open(&copy).and_then(|file| file.sync_all()).map_err(StoreError::Io)?;
    std::fs::rename(&copy, path).map_err(StoreError::Io)?;
    for stale in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(sibling(path, stale));
    }
    Ok(())
}

/// `path` with `suffix` appended to its file name.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}
