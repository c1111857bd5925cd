//! The deletion ledger's rules (SPEC §5): what a deletion leaves behind so that nothing
//! recreates what a person deleted, and the receipt each deletion answers with.
//!
//! Forgetting a record leaves a content-free tombstone per removed record: its id, a keyed
//! hash of its normalised statement and of its source reference (the message it came from),
//! and when it was deleted. A later write of the same statement is refused as `forgotten`
//! unless the user re-states it ([`Restatement`]): explicitly (`remember --restate`,
//! `import --allow-forgotten`), or in a message dated after the deletion that is not the
//! message it was first drawn from. A retried request, a replayed ingest, a mem0 client's
//! retry or an import of an old export therefore cannot bring it back.
//!
//! The hashes are HMAC-SHA256 under a key each store keeps to itself, so a tombstone does not
//! reveal its statement to someone who reads the ledger without the key; the text is never
//! stored.

use std::collections::BTreeSet;

use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::clock::Timestamp;
use crate::duration::Ttl;
use crate::ports::DeletionRequest;
use crate::record::MemoryId;

/// The secret a store keys its tombstones' hashes with (32 random bytes, made once per
/// database and kept in it).
#[derive(Clone, PartialEq, Eq)]
pub struct LedgerKey(pub [u8; 32]);

impl std::fmt::Debug for LedgerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LedgerKey(..)")
    }
}

impl LedgerKey {
    /// The key from its stored bytes, or `None` when they are not 32 bytes.
    pub fn from_slice(bytes: &[u8]) -> Option<Self> {
        bytes.try_into().ok().map(Self)
    }

    fn digest(&self, domain: &str, text: &str) -> String {
        // HMAC accepts keys of any length, so this cannot fail for 32 bytes.
        let Ok(mut mac) = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0) else {
            return String::new();
        };
        mac.update(domain.as_bytes());
        mac.update(&[0]);
        mac.update(text.as_bytes());
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let bytes = mac.finalize().into_bytes();
        let mut hex = String::with_capacity(2 * bytes.len());
        for b in bytes {
            hex.push(char::from(HEX[usize::from(b >> 4)]));
            hex.push(char::from(HEX[usize::from(b & 15)]));
        }
        hex
    }

    /// The keyed hash of a statement, normalised by [`statement_form`]: equal for the same
    /// words in any case, spacing or punctuation.
    pub fn statement_digest(&self, content: &str) -> String {
        self.digest("statement", &statement_form(content))
    }

    /// The keyed hash of a source reference (a message, conversation or document id).
    pub fn source_digest(&self, source_ref: &str) -> String {
        self.digest("source", source_ref)
    }
}

/// A statement reduced to its words: lower case, letters and digits only, single spaces.
pub fn statement_form(content: &str) -> String {
    let mut out = String::with_capacity(content.len());
    let words = content.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty());
    crate::lifecycle::lowercase_words(words, " ", |piece| out.push_str(piece));
    out
}

/// What the ledger knows about a candidate's statement: it was forgotten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForgottenMatch {
    /// When it was last deleted.
    pub deleted_at: Timestamp,
    /// Whether a deleted record with this statement came from the candidate's own source
    /// reference (the same message again: a replay).
    pub same_source: bool,
}

/// Whether a write re-states something the user had asked to forget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Restatement {
    /// Nothing says so: a forgotten statement is refused (a retry, a replay, an import).
    #[default]
    Not,
    /// The caller says the user asked for it again (`remember --restate`,
    /// `import --allow-forgotten`).
    Explicit,
    /// Said in a dated message at this time: a re-statement if said after the deletion, in
    /// another message than the one it was first drawn from.
    SaidAt(Timestamp),
}

/// Whether the ledger refuses a write: its statement was forgotten and it does not re-state it.
pub fn refuses(forgotten: Option<ForgottenMatch>, restatement: Restatement) -> bool {
    let Some(forgotten) = forgotten else { return false };
    match restatement {
        Restatement::Explicit => false,
        Restatement::Not => true,
        Restatement::SaidAt(at) => forgotten.same_source || at <= forgotten.deleted_at,
    }
}

/// One removed record's tombstone, as a store keeps it: no content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tombstone {
    /// The removed record.
    pub memory_id: MemoryId,
    /// [`LedgerKey::statement_digest`] of its content.
    pub statement_digest: String,
    /// [`LedgerKey::source_digest`] of its source reference, if it had one.
    pub source_digest: Option<String>,
}

impl Tombstone {
    /// The tombstones of a removed record: one per distinct statement it held, its content
    /// and its earlier versions' (so a replay of what it said before an edit is caught too).
    pub fn all_of<'a>(
        key: &LedgerKey,
        memory_id: &MemoryId,
        statements: impl IntoIterator<Item = &'a str>,
        source_ref: Option<&str>,
    ) -> Vec<Self> {
        let digests: BTreeSet<String> =
            statements.into_iter().map(|s| key.statement_digest(s)).collect();
        let source_digest = source_ref.map(|r| key.source_digest(r));
        digests
            .into_iter()
            .map(|statement_digest| Self {
                memory_id: memory_id.clone(),
                statement_digest,
                source_digest: source_digest.clone(),
            })
            .collect()
    }
}

/// What a deletion was asked to remove.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeletionScope {
    /// One memory (`forget ID`), with its history and what was derived from it.
    Memory,
    /// Several memories at once (mem0's delete of one agent's or run's memories), each with
    /// its history and what was derived from it.
    Selection,
    /// A pending memory the user rejected.
    Rejected,
    /// Every record of the user (`forget --all`).
    User,
    /// Every record of a shared space (`space delete`).
    Space,
}

/// How much of each kind a deletion removed.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Removed {
    /// Records (memories and transcript turns), all statuses.
    pub records: u64,
    /// Of those, older records the named ones had superseded (their history).
    pub superseded: u64,
    /// Of those, records derived from them (session summaries, consolidated facts).
    pub derived: u64,
    /// Stored versions (edit history snapshots).
    pub versions: u64,
    /// Stored vectors.
    pub vectors: u64,
    /// Full-text index entries (one per record, plus its session's document re-indexed).
    pub index_entries: u64,
    /// Provenance links between records.
    pub links: u64,
    /// Runs (working memory of tasks).
    pub runs: u64,
}

/// Something that may still hold deleted data after the deletion committed, and until when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Remnant {
    /// Where (e.g. "backups", "PostgreSQL dead tuples").
    pub place: String,
    /// Until when it may remain, when that is known.
    pub until: Option<Timestamp>,
    /// What happens to it, in plain words.
    pub detail: String,
}

/// The answer to a deletion: what was removed, when and by whom, and what remains for how long.
/// It holds ids and counts, never content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeletionReceipt {
    /// The receipt's id.
    pub id: String,
    /// When the deletion committed.
    pub at: Timestamp,
    /// Who asked (`cli`, `mcp`, `http:<key id>`).
    pub actor: String,
    /// What was asked to be removed.
    pub scope: DeletionScope,
    /// The memory named (for `memory` and `rejected`).
    pub memory_id: Option<MemoryId>,
    /// Every record removed (for `memory` and `rejected`; for `user`, only the count).
    pub removed_ids: Vec<MemoryId>,
    /// Counts of what was removed.
    pub removed: Removed,
    /// Tombstones left so retries, replays and imports cannot recreate it.
    pub tombstones: u64,
    /// What may still hold deleted data, and until when.
    pub remains: Vec<Remnant>,
}

/// What a store counted in one deletion, before it becomes the receipt.
#[derive(Debug, Clone)]
pub struct Counted {
    /// What was asked to be removed.
    pub scope: DeletionScope,
    /// The memory named.
    pub memory_id: Option<MemoryId>,
    /// The records removed (left empty for a whole user).
    pub removed_ids: Vec<MemoryId>,
    /// Counts.
    pub removed: Removed,
    /// Tombstones written.
    pub tombstones: u64,
}

/// What a deletion of named records removes, gathered by [`select`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// The named records that exist (in the order named; one already removed with another
    /// named before it is left out).
    pub named: Vec<MemoryId>,
    /// How many records their histories hold (each named record included).
    pub history: u64,
    /// Everything removed, by a store's row handle: histories and what was derived from them,
    /// each once.
    pub doomed: Vec<(i64, MemoryId)>,
}

/// Gathers what forgetting `ids` removes. `find` gives a record's row handle (`None`: no such
/// record of the user); `chain(row, derived)` gives the row's history (itself and the older
/// records it superseded), with what was derived from them when `derived`. `None` when no
/// named record exists.
pub fn select<E>(
    ids: &[MemoryId],
    mut find: impl FnMut(&MemoryId) -> Result<Option<i64>, E>,
    mut chain: impl FnMut(i64, bool) -> Result<Vec<(i64, MemoryId)>, E>,
) -> Result<Option<Selection>, E> {
    let mut selection = Selection { named: Vec::new(), history: 0, doomed: Vec::new() };
    for id in ids {
        let Some(row) = find(id)? else { continue };
        if selection.doomed.iter().any(|(seen, _)| *seen == row) {
            continue;
        }
        selection.named.push(id.clone());
        selection.history += chain(row, false)?.len() as u64;
        for (row, gone) in chain(row, true)? {
            if !selection.doomed.iter().any(|(seen, _)| *seen == row) {
                selection.doomed.push((row, gone));
            }
        }
    }
    Ok((!selection.named.is_empty()).then_some(selection))
}

impl Counted {
    /// The count of forgetting a [`Selection`]: `removed` is what the store counted as it
    /// purged its rows, `tombstones` how many it left.
    pub fn of_selection(selection: Selection, removed: Removed, tombstones: u64) -> Self {
        let Selection { named, history, doomed } = selection;
        let (named_count, doomed_count) = (named.len() as u64, doomed.len() as u64);
        Self {
            scope: if named.len() == 1 { DeletionScope::Memory } else { DeletionScope::Selection },
            memory_id: if named.len() == 1 { named.into_iter().next() } else { None },
            removed_ids: doomed.into_iter().map(|(_, id)| id).collect(),
            removed: Removed {
                superseded: history.saturating_sub(named_count),
                derived: doomed_count.saturating_sub(history),
                ..removed
            },
            tombstones,
        }
    }

    /// The receipt of this deletion: `store` says what the store itself keeps after the
    /// commit, and backups are added from the request's retention.
    pub fn receipt(self, request: &DeletionRequest<'_>, store: Vec<Remnant>) -> DeletionReceipt {
        DeletionReceipt {
            id: request.receipt_id.clone(),
            at: request.now,
            actor: request.actor.to_owned(),
            scope: self.scope,
            memory_id: self.memory_id,
            removed_ids: self.removed_ids,
            removed: self.removed,
            tombstones: self.tombstones,
            remains: remains(store, request.now, request.backup_retention),
        }
    }
}

/// What remains after a deletion committed, given how long the operator keeps backups: the
/// store's own remnants (`store`) plus backups taken before the deletion.
pub fn remains(store: Vec<Remnant>, at: Timestamp, backup_retention: Option<Ttl>) -> Vec<Remnant> {
    let backups = Remnant {
        place: "backups".into(),
        until: backup_retention.map(|ttl| at.plus(ttl)),
        detail: match backup_retention {
            Some(_) => "copies taken before this deletion hold it until they age out at the \
                        backup retention the operator set"
                .into(),
            None => "copies taken before this deletion hold it for as long as they are kept".into(),
        },
    };
    store.into_iter().chain(std::iter::once(backups)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> LedgerKey {
        LedgerKey([7; 32])
    }

    #[test]
    fn digests_ignore_case_spacing_and_punctuation_but_not_words() {
        let k = key();
        assert_eq!(
            k.statement_digest("I live in Austin."),
            k.statement_digest("i  LIVE in austin")
        );
        assert_ne!(k.statement_digest("I live in Austin"), k.statement_digest("I live in Boston"));
        assert_eq!(k.statement_digest("x").len(), 64);
        // Statements and sources are hashed apart, and another key gives other digests.
        assert_ne!(k.statement_digest("m-1"), k.source_digest("m-1"));
        assert_ne!(k.statement_digest("x"), LedgerKey([8; 32]).statement_digest("x"));
    }

    #[test]
    fn a_digest_does_not_contain_the_text() {
        let digest = key().statement_digest("Zanzibar4711 is my code word");
        assert!(!digest.to_lowercase().contains("zanzibar"));
        assert!(digest.chars().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn only_a_restatement_passes_a_tombstone() {
        let at = Timestamp::from_millis(1_000_000);
        let earlier = Timestamp::from_millis(999_000);
        let later = Timestamp::from_millis(1_001_000);
        let other = Some(ForgottenMatch { deleted_at: at, same_source: false });
        let same = Some(ForgottenMatch { deleted_at: at, same_source: true });
        assert!(!refuses(None, Restatement::Not));
        assert!(refuses(other, Restatement::Not));
        assert!(!refuses(other, Restatement::Explicit));
        assert!(!refuses(same, Restatement::Explicit));
        // A new message after the deletion re-states it; a replay of an old one does not, nor
        // the same message again with a new date.
        assert!(!refuses(other, Restatement::SaidAt(later)));
        assert!(refuses(other, Restatement::SaidAt(earlier)));
        assert!(refuses(other, Restatement::SaidAt(at)));
        assert!(refuses(same, Restatement::SaidAt(later)));
    }

    #[test]
    fn one_tombstone_per_distinct_statement() {
        let id = MemoryId("m".into());
        let stones = Tombstone::all_of(
            &key(),
            &id,
            ["I live in Austin.", "i live in austin", "I live in Boston"],
            Some("msg-1"),
        );
        assert_eq!(stones.len(), 2);
        assert!(stones.iter().all(|t| t.source_digest == Some(key().source_digest("msg-1"))));
    }

    #[test]
    fn backups_remain_until_their_retention() {
        let at = Timestamp::from_millis(0);
        let day = 86_400_000;
        let remains = remains(Vec::new(), at, Some(Ttl::from_millis(30 * day)));
        assert_eq!(remains.len(), 1);
        assert_eq!(remains[0].until, Some(Timestamp::from_millis(30 * day)));
    }
}
