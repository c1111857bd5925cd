//! The read path's pure part (SPEC §4): turning a query into lexical terms, fusing lexical
//! (BM25) and semantic (cosine) candidates into one relevance in 0..1, applying the relevance
//! gate, and ranking by the blended score.

use std::collections::HashMap;

use crate::clock::Timestamp;
use crate::ports::Scored;
use crate::record::{Memory, MemoryId};
use crate::scoring::{ScoreParts, ScoreWeights};

/// Words too common to carry meaning in a query.
const STOPWORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "before", "being", "but", "by", "can", "could", "did", "do", "does", "doing", "for",
    "from", "had", "has", "have", "having", "how", "i", "if", "in", "into", "is", "it", "its",
    "me", "my", "of", "on", "or", "our", "so", "some", "than", "that", "the", "their", "them",
    "then", "there", "these", "they", "this", "those", "to", "too", "very", "was", "we", "were",
    "what", "when", "where", "which", "who", "whom", "why", "will", "with", "would", "you", "your",
];

/// The lexical terms of a query: lowercase words and numbers, stopwords removed, each once.
/// When every word is a stopword, all words are kept.
pub fn query_terms(query: &str) -> Vec<String> {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut terms: Vec<String> =
        words.iter().filter(|w| !STOPWORDS.contains(&w.as_str())).cloned().collect();
    if terms.is_empty() {
        terms = words;
    }
    let mut seen = std::collections::HashSet::new();
    terms.retain(|t| seen.insert(t.clone()));
    terms
}

/// Tuning of the read path.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetrievalConfig {
    /// Candidates taken from each retriever before fusion.
    pub candidates: usize,
    /// Minimum relevance (0..1) a memory needs before blending.
    pub min_relevance: f64,
    /// Blending weights and half-life.
    pub weights: ScoreWeights,
    /// Cosine at or below which semantic relevance is 0.
    pub cosine_floor: f64,
    /// Cosine at or above which semantic relevance is 1.
    pub cosine_ceiling: f64,
    /// BM25 score at which lexical relevance reaches 1 (lower scores scale linearly).
    pub bm25_saturation: f64,
}

impl Default for RetrievalConfig {
    fn default() -> Self {
        Self {
            candidates: 100,
            min_relevance: 0.3,
            weights: ScoreWeights::default(),
            cosine_floor: 0.15,
            cosine_ceiling: 0.75,
            bm25_saturation: 10.0,
        }
    }
}

/// One ranked memory and why it ranked there.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The memory.
    pub memory: Memory,
    /// Relevance, recency, importance and blended score.
    pub parts: ScoreParts,
    /// Its BM25 score, if the lexical retriever found it.
    pub bm25: Option<f64>,
    /// Its cosine similarity, if the semantic retriever found it.
    pub cosine: Option<f64>,
}

/// Maps a cosine to 0..1 between the configured floor and ceiling.
fn semantic_relevance(cosine: f64, config: &RetrievalConfig) -> f64 {
    ((cosine - config.cosine_floor) / (config.cosine_ceiling - config.cosine_floor)).clamp(0.0, 1.0)
}

/// Maps a BM25 score to 0..1, saturating at the configured score.
fn lexical_relevance(bm25: f64, config: &RetrievalConfig) -> f64 {
    (bm25 / config.bm25_saturation).clamp(0.0, 1.0)
}

/// Fuses both candidate lists into one relevance per memory, drops what is under the gate,
/// and ranks the rest by the blended score (ties by relevance). Relevance is the stronger of
/// the two signals plus a share of the weaker, so agreement between retrievers ranks first.
pub fn rank(
    lexical: Vec<Scored>,
    semantic: Vec<Scored>,
    config: &RetrievalConfig,
    now: Timestamp,
) -> Vec<Hit> {
    let mut merged: HashMap<MemoryId, (Memory, Option<f64>, Option<f64>)> = HashMap::new();
    for s in lexical {
        merged.entry(s.memory.id.clone()).or_insert((s.memory, None, None)).1 = Some(s.score);
    }
    for s in semantic {
        merged.entry(s.memory.id.clone()).or_insert((s.memory, None, None)).2 = Some(s.score);
    }
    let mut hits: Vec<Hit> = merged
        .into_values()
        .filter_map(|(memory, bm25, cosine)| {
            let lex = bm25.map_or(0.0, |b| lexical_relevance(b, config));
            let sem = cosine.map_or(0.0, |c| semantic_relevance(c, config));
            let (strong, weak) = if lex >= sem { (lex, sem) } else { (sem, lex) };
            let relevance = (strong + 0.5 * weak * (1.0 - strong)).clamp(0.0, 1.0);
            if relevance < config.min_relevance {
                return None;
            }
            let last = memory.last_used_at.map_or(memory.updated_at, |u| u.max(memory.updated_at));
            let parts = config.weights.blend(relevance, now.days_since(last), memory.importance);
            Some(Hit { memory, parts, bm25, cosine })
        })
        .collect();
    hits.sort_by(|a, b| {
        b.parts
            .score
            .total_cmp(&a.parts.score)
            .then(b.parts.relevance.total_cmp(&a.parts.relevance))
            .then_with(|| a.memory.id.cmp(&b.memory.id))
    });
    hits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lifecycle::{Candidate, CandidateFields};
    use crate::record::Status;

    const NOW: Timestamp = Timestamp::from_millis(1_768_478_400_000);

    fn memory(id: &str, importance: f64, age_days: i64) -> Memory {
        let at = Timestamp::from_millis(NOW.as_millis() - age_days * 86_400_000);
        Candidate::validate(
            CandidateFields {
                content: format!("memory {id}"),
                importance: Some(importance),
                ..Default::default()
            },
            at,
        )
        .unwrap()
        .into_memory(MemoryId(id.into()), "t", "u", Status::Active, at)
    }

    #[test]
    fn query_terms_drop_stopwords_and_repeats() {
        assert_eq!(
            query_terms("What did Caroline do with the Caroline painting?"),
            ["caroline", "painting"]
        );
        assert_eq!(query_terms("who is it"), ["who", "is", "it"]);
        assert!(query_terms("  ?! ").is_empty());
    }

    #[test]
    fn gate_drops_irrelevant_but_important_memories() {
        let config = RetrievalConfig::default();
        let important = memory("imp", 1.0, 0);
        let relevant = memory("rel", 0.1, 0);
        let hits = rank(
            vec![],
            vec![
                Scored { memory: important, score: 0.12 },
                Scored { memory: relevant, score: 0.7 },
            ],
            &config,
            NOW,
        );
        assert_eq!(hits.iter().map(|h| h.memory.id.0.as_str()).collect::<Vec<_>>(), ["rel"]);
        assert!(rank(vec![], vec![], &config, NOW).is_empty());
    }

    #[test]
    fn agreement_of_both_retrievers_ranks_first() {
        let config = RetrievalConfig { min_relevance: 0.0, ..Default::default() };
        let both = memory("both", 0.5, 1);
        let lex_only = memory("lex", 0.5, 1);
        let hits = rank(
            vec![
                Scored { memory: both.clone(), score: 6.0 },
                Scored { memory: lex_only, score: 6.0 },
            ],
            vec![Scored { memory: both, score: 0.5 }],
            &config,
            NOW,
        );
        assert_eq!(hits[0].memory.id.0, "both");
        assert!(hits[0].parts.relevance > hits[1].parts.relevance);
        assert!(hits.iter().all(|h| (0.0..=1.0).contains(&h.parts.relevance)));
    }

    #[test]
    fn blended_score_prefers_recent_and_important_at_equal_relevance() {
        let config = RetrievalConfig { min_relevance: 0.0, ..Default::default() };
        let old = memory("old", 0.2, 120);
        let fresh = memory("fresh", 0.9, 0);
        let hits = rank(
            vec![],
            vec![Scored { memory: old, score: 0.6 }, Scored { memory: fresh, score: 0.6 }],
            &config,
            NOW,
        );
        assert_eq!(hits[0].memory.id.0, "fresh");
        assert!((hits[1].parts.recency - 0.0625).abs() < 1e-9);
    }
}
