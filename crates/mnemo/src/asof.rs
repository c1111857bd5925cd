//! As-of reads: search, list and context answered with what the notebook held true at a past
//! time (see [`mnemo_core::asof`] for the rules). The records as they stood are read from the
//! store's export and audit trail, and a search ranks them with the same signals, fusion and
//! blend as a current one, in an index built for the question.

use mnemo_core::asof::{Stood, Transitions, stood_at};
use mnemo_core::ports::{Found, SearchQuery};
use mnemo_core::retrieval::Fused;
use mnemo_core::retrieval::Signals;
use mnemo_core::{Memory, Timestamp, UserRef};
use mnemo_index::{IndexRow, ScanFilter, UserIndex};

use crate::{Mnemo, Result};

impl Mnemo {
    /// The user's records that existed at `at`, as they stood then, oldest first. A time
    /// later than now answers with what is held now, less what will have expired by then:
    /// nothing later is known.
    pub(crate) fn stood_at(&self, who: &UserRef, at: Timestamp) -> Result<Vec<Stood>> {
        let trail = Transitions::from_audit(&self.store.audit(who, usize::MAX)?);
        Ok(stood_at(self.store.export(who)?, &trail, at))
    }

    /// The user's records that held true at `at`, as they stood then, oldest first.
    pub(crate) fn held_at(&self, who: &UserRef, at: Timestamp) -> Result<Vec<Memory>> {
        Ok(self.stood_at(who, at)?.into_iter().filter(|s| s.held).map(|s| s.memory).collect())
    }

    /// Ranks the records that held at `at` for a query as the store ranks current records:
    /// BM25F with conversational context, cosine, session BM25, speaker and date signals, the
    /// filter applied before ranking. The records that existed then without holding (pending,
    /// superseded) count in the statistics as the store's index counts them.
    pub(crate) fn search_held(
        &self,
        stood: Vec<Stood>,
        search: &SearchQuery<'_>,
        at: Timestamp,
        select: &dyn Fn(&Signals<'_>) -> Vec<Fused>,
    ) -> Vec<Found> {
        let model = self.embedder.as_ref().map(|e| (e.id(), e.dims()));
        let mut index = UserIndex::default();
        for (rowid, Stood { memory, held }) in stood.iter().enumerate() {
            // A vector of another embedder is not comparable with the query's: none.
            let vector = memory
                .embedding
                .as_ref()
                .filter(|info| {
                    model
                        .as_ref()
                        .is_some_and(|(id, dims)| info.model == *id && info.dims as usize == *dims)
                })
                .and_then(|info| info.vector.clone())
                .unwrap_or_default();
            index.upsert_row(IndexRow {
                rowid: rowid as i64,
                kind: memory.kind,
                scope: memory.scope.to_string(),
                active: *held,
                sensitive: memory.sensitivity == mnemo_core::Sensitivity::Sensitive,
                expires_at: memory.expires_at.map(Timestamp::as_millis),
                vector,
                text: memory.content.clone(),
                speaker: mnemo_core::record::metadata_str(&memory.metadata, "speaker")
                    .map(str::to_owned),
                session: memory.session_id.clone(),
                valid_from: memory.valid_from.as_millis(),
            });
        }
        let filter = search.filter;
        let scope = filter.scope.as_ref().map(ToString::to_string);
        let scan = ScanFilter {
            now: at.as_millis(),
            kind: filter.kind,
            scope: scope.as_deref(),
            exclude_sensitive: filter.exclude_sensitive,
        };
        let mut held: Vec<Option<Memory>> = stood.into_iter().map(|s| Some(s.memory)).collect();
        index
            .search(
                search.words(),
                search.vector.map(|v| v.vector.as_slice()),
                search.common,
                scan,
                search.notebooks,
                select,
            )
            .into_iter()
            .filter_map(|hit| {
                let memory = held.get_mut(usize::try_from(hit.row).ok()?)?.take()?;
                Some(Found { memory, fused: hit.fused, bm25: hit.bm25, cosine: hit.cosine })
            })
            .collect()
    }
}
