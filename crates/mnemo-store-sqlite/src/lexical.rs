//! An in-memory BM25F index of one user's records, kept beside their vectors. A record is
//! scored with its conversational context: the previous turn of its session (weight 1), the
//! one before (0.5) and the next turn (0.5); each session is also scored as one document.
//! Postings hold the record's own terms only, so context costs nothing to maintain: it is
//! gathered through the session order at query time.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, OnceLock};

use rust_stemmers::{Algorithm, Stemmer};
use rustc_hash::FxHashMap;

const K1: f64 = 1.2;
const B: f64 = 0.5;
const W_PREV: f64 = 1.0;
const W_PREV2: f64 = 0.5;
const W_NEXT: f64 = 0.5;

fn stemmer() -> &'static Stemmer {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    STEMMER.get_or_init(|| Stemmer::create(Algorithm::English))
}

/// Lowercase, stemmed word and number tokens.
pub(crate) fn terms(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| stemmer().stem(&w.to_lowercase()).into_owned())
        .collect()
}

/// BM25F scores by rowid, and session BM25 scores by session id.
pub(crate) type LexicalScores = (FxHashMap<i64, f64>, HashMap<Arc<str>, f64>);

#[derive(Debug)]
struct Doc {
    terms: Box<[(u32, u16)]>,
    len: u32,
    session: Option<Arc<str>>,
}

/// One user's lexical index.
#[derive(Debug, Default)]
pub(crate) struct LexicalIndex {
    dictionary: HashMap<Box<str>, u32>,
    docs: FxHashMap<i64, Doc>,
    /// Term id → (rowid → count of the term in the record's own text).
    postings: FxHashMap<u32, FxHashMap<i64, u16>>,
    sessions: HashMap<Arc<str>, BTreeSet<i64>>,
    session_len: HashMap<Arc<str>, u64>,
    total_len: u64,
    sessioned_len: u64,
}

impl LexicalIndex {
    /// Adds or replaces a record's text.
    pub(crate) fn upsert(&mut self, rowid: i64, text: &str, session: Option<Arc<str>>) {
        self.remove(rowid);
        let mut counts: HashMap<u32, u16> = HashMap::new();
        let tokens = terms(text);
        for token in &tokens {
            let next = self.dictionary.len() as u32;
            let id = *self.dictionary.entry(token.as_str().into()).or_insert(next);
            *counts.entry(id).or_insert(0) += 1;
        }
        for (id, count) in &counts {
            self.postings.entry(*id).or_default().insert(rowid, *count);
        }
        let len = tokens.len() as u32;
        self.total_len += u64::from(len);
        if let Some(s) = &session {
            self.sessions.entry(s.clone()).or_default().insert(rowid);
            *self.session_len.entry(s.clone()).or_insert(0) += u64::from(len);
            self.sessioned_len += u64::from(len);
        }
        self.docs.insert(rowid, Doc { terms: counts.into_iter().collect(), len, session });
    }

    /// Removes a record.
    pub(crate) fn remove(&mut self, rowid: i64) {
        let Some(doc) = self.docs.remove(&rowid) else { return };
        for (id, _) in doc.terms.iter() {
            if let Some(set) = self.postings.get_mut(id) {
                set.remove(&rowid);
                if set.is_empty() {
                    self.postings.remove(id);
                }
            }
        }
        self.total_len -= u64::from(doc.len);
        if let Some(s) = &doc.session {
            if let Some(set) = self.sessions.get_mut(s) {
                set.remove(&rowid);
                if set.is_empty() {
                    self.sessions.remove(s);
                }
            }
            if let Some(l) = self.session_len.get_mut(s) {
                *l -= u64::from(doc.len);
                if *l == 0 {
                    self.session_len.remove(s);
                }
            }
            self.sessioned_len -= u64::from(doc.len);
        }
    }

    fn neighbour(&self, rowid: i64, session: &Option<Arc<str>>, offset: i32) -> Option<i64> {
        let set = self.sessions.get(session.as_ref()?)?;
        match offset {
            -1 => set.range(..rowid).next_back().copied(),
            1 => set.range(rowid + 1..).next().copied(),
            2 => set.range(rowid + 1..).nth(1).copied(),
            -2 => set.range(..rowid).nth_back(1).copied(),
            _ => None,
        }
    }

    fn len_of(&self, rowid: Option<i64>) -> f64 {
        rowid.and_then(|r| self.docs.get(&r)).map_or(0.0, |d| f64::from(d.len))
    }

    /// BM25F of every record matching any of `query` (plain words; stemmed here), and BM25
    /// of every matching session, by rowid and by session id.
    pub(crate) fn score(&self, query: &[String]) -> LexicalScores {
        let mut turns: FxHashMap<i64, f64> = FxHashMap::default();
        let mut sessions: HashMap<Arc<str>, f64> = HashMap::new();
        let n = self.docs.len() as f64;
        if n == 0.0 {
            return (turns, sessions);
        }
        // Each sessioned record's length also counts, with weights adding to two, in its
        // neighbours' context: the average context-weighted length, without a full pass.
        let avgdl = ((self.total_len + 2 * self.sessioned_len) as f64 / n).max(1.0);
        let ns = self.sessions.len() as f64;
        let avg_session = if ns > 0.0 { self.sessioned_len as f64 / ns } else { 1.0 };
        let mut seen = HashSet::new();
        for term in query.iter().flat_map(|q| terms(q)) {
            if !seen.insert(term.clone()) {
                continue;
            }
            let Some(id) = self.dictionary.get(term.as_str()) else { continue };
            let Some(posting) = self.postings.get(id) else { continue };
            let df = posting.len() as f64;
            let idf = ((n - df + 0.5) / (df + 0.5)).ln().max(1e-6);
            let mut tf: FxHashMap<i64, f64> = FxHashMap::default();
            let mut per_session: HashMap<Arc<str>, f64> = HashMap::new();
            for (&rowid, &count) in posting {
                let count = f64::from(count);
                let Some(doc) = self.docs.get(&rowid) else { continue };
                *tf.entry(rowid).or_insert(0.0) += count;
                if let Some(s) = &doc.session {
                    *per_session.entry(s.clone()).or_insert(0.0) += count;
                    for (offset, weight) in [(1, W_PREV), (2, W_PREV2), (-1, W_NEXT)] {
                        if let Some(other) = self.neighbour(rowid, &doc.session, offset) {
                            *tf.entry(other).or_insert(0.0) += weight * count;
                        }
                    }
                }
            }
            for (rowid, f) in tf {
                let Some(doc) = self.docs.get(&rowid) else { continue };
                let dl = f64::from(doc.len)
                    + W_PREV * self.len_of(self.neighbour(rowid, &doc.session, -1))
                    + W_PREV2 * self.len_of(self.neighbour(rowid, &doc.session, -2))
                    + W_NEXT * self.len_of(self.neighbour(rowid, &doc.session, 1));
                let score = idf * f * (K1 + 1.0) / (f + K1 * (1.0 - B + B * dl / avgdl));
                *turns.entry(rowid).or_insert(0.0) += score;
            }
            let sdf = per_session.len() as f64;
            let sidf = (1.0 + (ns - sdf + 0.5) / (sdf + 0.5)).ln();
            for (session, g) in per_session {
                let sl = self.session_len.get(&session).copied().unwrap_or(0) as f64;
                let score = sidf * g * (K1 + 1.0) / (g + K1 * (1.0 - B + B * sl / avg_session));
                *sessions.entry(session).or_insert(0.0) += score;
            }
        }
        (turns, sessions)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_and_sessions_score_and_removal_forgets() {
        let mut index = LexicalIndex::default();
        let s: Arc<str> = Arc::from("s1");
        index.upsert(1, "Did you name the boat?", Some(s.clone()));
        index.upsert(2, "Yes, we called her Quillback", Some(s.clone()));
        index.upsert(3, "I like pizza", None);
        let (turns, sessions) = index.score(&["boat".into()]);
        // The answer is found through the question before it.
        assert!(turns.get(&2).copied().unwrap_or(0.0) > 0.0);
        assert!(turns[&1] > turns[&2]);
        assert!(!turns.contains_key(&3));
        assert!(sessions[&s] > 0.0);
        index.remove(1);
        let (turns, _) = index.score(&["boat".into()]);
        assert!(turns.is_empty());
        assert_eq!(terms("Running runs RAN"), ["run", "run", "ran"]);
    }
}
