//! An in-memory BM25F index of one user's records, kept beside their vectors. A record is
//! scored with its conversational context: the previous turn of its session (weight 1), the
//! one before (0.5) and the next turn (0.5); each session is also scored as one document.
//! Postings hold the record's own terms only, so context costs nothing to maintain: it is
//! gathered through the session order at query time.
//!
//! Records are addressed by the slot their owner gives them (dense, `0..len`), so scores come
//! back as plain arrays the search scan reads by position, without hashing.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Mutex, OnceLock};

use mnemo_core::retrieval::MODIFIER_ALONE;
use rust_stemmers::{Algorithm, Stemmer};
use rustc_hash::FxHashMap;

/// Documents without a query term assumed besides the user's records when weighing the
/// term (its IDF): with a notebook of one record, a matched word still carries weight.
const BACKGROUND_DOCS: f64 = 100.0;
const K1: f64 = 1.2;
const B: f64 = 0.5;
const W_PREV: f64 = 1.0;
const W_PREV2: f64 = 0.5;
const W_NEXT: f64 = 0.5;

fn stemmer() -> &'static Stemmer {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    STEMMER.get_or_init(|| Stemmer::create(Algorithm::English))
}

/// The word and number tokens of a text, as written.
fn tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty())
}

/// Lowercase, stemmed word and number tokens.
pub(crate) fn terms(text: &str) -> Vec<String> {
    tokens(text).map(|w| stemmer().stem(&w.to_lowercase()).into_owned()).collect()
}

/// The whole words of the WordPiece vocabulary that the built-in model and MiniLM share
/// (bert-base-uncased's), by rank: after its reserved tokens and single characters, the
/// vocabulary lists words in roughly descending order of frequency in its training text
/// (encyclopaedia and books), "the" first. Continuation pieces (`##…`) are left out.
fn general_ranks() -> &'static HashMap<&'static str, u32> {
    static RANKS: OnceLock<HashMap<&'static str, u32>> = OnceLock::new();
    RANKS.get_or_init(|| {
        include_str!("../../../models/minilm-l6-fit-256/vocab.txt")
            .lines()
            .skip_while(|w| *w != "the")
            .filter(|w| !w.starts_with("##"))
            .zip(1..)
            .collect()
    })
}

/// How much a query word can tell records apart in general language, 0..1: the log of its
/// frequency rank over the log of the vocabulary's size (so "the" weighs 0, a word ranked
/// 150th, such as "team" or "work", about half, and a word outside the vocabulary, a name or
/// a rare word, 1). It scales the word's IDF, which says only how rare the word is among the
/// user's records: in a notebook of a few dozen statements "team" or "name" is as rare as
/// "Biscuit" or "Leeds", and one shared everyday word would otherwise weigh as much as a
/// shared name.
fn general_weight(word: &str) -> f64 {
    let ranks = general_ranks();
    match ranks.get(word.to_lowercase().as_str()) {
        Some(&rank) => (f64::from(rank).ln() / (ranks.len() as f64).ln()).clamp(0.0, 1.0),
        None => 1.0,
    }
}

/// Per-slot arrays of zeros kept between searches (at most [`SPARE_ARRAYS`], each of at
/// most [`SPARE_CELLS`]), so that a search of a large notebook neither allocates nor clears
/// arrays of its size: a search takes them zeroed and gives them back zeroed, clearing only
/// the cells it wrote.
static SPARE: Mutex<Vec<Vec<f64>>> = Mutex::new(Vec::new());

/// How many zeroed arrays [`SPARE`] keeps (up to two per search running at once).
const SPARE_ARRAYS: usize = 8;

/// The longest array [`SPARE`] keeps (8 MiB): a notebook of more records allocates its
/// arrays at each search rather than hold that much memory between searches.
const SPARE_CELLS: usize = 1 << 20;

/// An array of `n` zeros, from [`SPARE`] when one is there.
fn zeros(n: usize) -> Vec<f64> {
    let spare = SPARE.lock().unwrap_or_else(std::sync::PoisonError::into_inner).pop();
    let mut array = spare.unwrap_or_default();
    // Every cell of a spare array is 0, so shortening or lengthening it keeps it zeroed.
    array.resize(n, 0.0);
    array
}

/// Gives back an array whose cells are all 0.
fn give_back(array: Vec<f64>) {
    if array.capacity() == 0 || array.len() > SPARE_CELLS {
        return;
    }
    let mut spare = SPARE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if spare.len() < SPARE_ARRAYS {
        spare.push(array);
    }
}

/// BM25's saturation of a term's frequency `f` in a record of length `dl`, with the term's
/// weight: `idf·f·(k1+1) / (f + k1·(1 − b + b·dl/avgdl))`, as `lift·f / (f + base + per_len·dl)`.
/// One occurrence in a short record, the usual match, is read from a table made for the term
/// when it has many records.
struct Saturation {
    lift: f64,
    base: f64,
    per_len: f64,
    /// The saturation of one occurrence by record length, `0..ONCE_LENGTHS` (none for a
    /// term with few records).
    once: Option<[f64; ONCE_LENGTHS]>,
}

/// The record lengths a term's [`Saturation`] table covers.
const ONCE_LENGTHS: usize = 64;

/// A term with at least this many records gets its [`Saturation`] table.
const ONCE_TABLE_FROM: usize = 4 * ONCE_LENGTHS;

impl Saturation {
    fn new(idf: f64, avgdl: f64, records: usize) -> Self {
        let mut saturation = Self {
            lift: idf * (K1 + 1.0),
            base: K1 * (1.0 - B),
            per_len: K1 * B / avgdl,
            once: None,
        };
        if records >= ONCE_TABLE_FROM {
            saturation.once = Some(std::array::from_fn(|dl| saturation.of(1.0, dl as f64)));
        }
        saturation
    }

    fn of(&self, f: f64, dl: f64) -> f64 {
        self.lift * f / (f + self.base + self.per_len * dl)
    }

    /// The saturation of `count` occurrences in a record of `len` terms.
    fn of_count(&self, count: u16, len: u32) -> f64 {
        match self.once.as_ref().and_then(|once| once.get(len as usize)) {
            Some(&once) if count == 1 => once,
            _ => self.of(f64::from(count), f64::from(len)),
        }
    }
}

/// BM25F scores of one query: by record slot, and by session number.
#[derive(Debug, Default)]
pub(crate) struct LexicalScores {
    /// BM25F of each slot's record with its context (0 when nothing matches).
    pub(crate) turns: Vec<f64>,
    /// The slots whose `turns` score is not 0, in no order: every slot written.
    pub(crate) matched: Vec<u32>,
    /// BM25 of each session as one document, indexed by session number.
    pub(crate) sessions: Vec<f64>,
}

impl LexicalScores {
    /// The BM25 of a session (0 for none, or one without a match).
    pub(crate) fn session_score(&self, session: Option<u32>) -> f64 {
        session.and_then(|s| self.sessions.get(s as usize)).copied().unwrap_or(0.0)
    }
}

impl Drop for LexicalScores {
    fn drop(&mut self) {
        let mut turns = std::mem::take(&mut self.turns);
        for &slot in &self.matched {
            turns[slot as usize] = 0.0;
        }
        give_back(turns);
    }
}

#[derive(Debug)]
struct Doc {
    rowid: i64,
    terms: Box<[(u32, u16)]>,
    len: u32,
    session: Option<u32>,
}

/// A slot's length and session (`NO_SESSION` for none), kept apart from its terms so the
/// scoring loop reads a small array.
#[derive(Debug, Clone, Copy)]
struct Shape {
    len: u32,
    session: u32,
}

const NO_SESSION: u32 = u32::MAX;

/// A record's entry in a term's posting: its slot, how often the term occurs in it, and its
/// length when that alone decides its score (a record outside any session, of fewer than
/// [`IN_CONTEXT`] terms), so the scan reads nothing else for it.
#[derive(Debug, Clone, Copy)]
struct Posting {
    slot: u32,
    count: u16,
    /// The record's length, or [`IN_CONTEXT`]: the scan reads its [`Shape`].
    len: u16,
}

/// A [`Posting`]'s length for a record in a session, or too long to be written there.
const IN_CONTEXT: u16 = u16::MAX;

/// One user's lexical index over slots `0..len`.
#[derive(Debug, Default)]
pub(crate) struct LexicalIndex {
    dictionary: foldhash::HashMap<Box<str>, u32>,
    /// Each lowercase word met by [`Self::set`] to its term's id in `dictionary`, so a word
    /// is stemmed once per index rather than once per record that holds it.
    surface: foldhash::HashMap<Box<str>, u32>,
    docs: Vec<Doc>,
    /// Per slot, the record's length and session.
    shapes: Vec<Shape>,
    /// By term id, the slots whose own text holds the term, in slot order, with its count
    /// there (empty once no record holds it): a search reads each posting front to back,
    /// and so the scores by slot.
    postings: Vec<Vec<Posting>>,
    /// Session number → its records in rowid (conversation) order, with their slots.
    sessions: FxHashMap<u32, BTreeMap<i64, u32>>,
    /// Session number → total length of its records; sized to the highest session number.
    session_len: Vec<u64>,
    total_len: u64,
    sessioned_len: u64,
}

impl LexicalIndex {
    /// Sets the record at `slot`, which is either an existing slot or the next one (`len`).
    pub(crate) fn set(&mut self, slot: u32, rowid: i64, text: &str, session: Option<u32>) {
        // The terms of [`terms`], each looked up by its lowercase form first, then counted.
        let mut ids: Vec<u32> = tokens(text).map(|word| self.term_id(word)).collect();
        let len = u32::try_from(ids.len()).unwrap_or(u32::MAX);
        ids.sort_unstable();
        let mut counts: Vec<(u32, u16)> = Vec::with_capacity(ids.len());
        for id in ids {
            match counts.last_mut() {
                Some((last, count)) if *last == id => *count = count.saturating_add(1),
                _ => counts.push((id, 1)),
            }
        }
        let doc = Doc { rowid, terms: counts.into_boxed_slice(), len, session };
        let shape = Shape { len: doc.len, session: session.unwrap_or(NO_SESSION) };
        if (slot as usize) < self.docs.len() {
            self.unlink(slot);
            self.docs[slot as usize] = doc;
            self.shapes[slot as usize] = shape;
        } else {
            self.docs.push(doc);
            self.shapes.push(shape);
        }
        self.link(slot);
    }

    /// The id of a word's term (its lowercase stem), numbering a new term.
    fn term_id(&mut self, word: &str) -> u32 {
        // Most words are lowercase ASCII already: looked up as written, with no copy.
        let lower = if word.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()) {
            Cow::Borrowed(word)
        } else {
            Cow::Owned(word.to_lowercase())
        };
        if let Some(&id) = self.surface.get(lower.as_ref()) {
            return id;
        }
        let stem = stemmer().stem(&lower).into_owned();
        let next = self.dictionary.len() as u32;
        let id = *self.dictionary.entry(stem.into()).or_insert(next);
        if id == next {
            self.postings.push(Vec::new());
        }
        self.surface.insert(lower.into(), id);
        id
    }

    /// Removes the record at `slot` and moves the last record into it, as `Vec::swap_remove`.
    pub(crate) fn swap_remove(&mut self, slot: u32) {
        let last = self.docs.len() as u32 - 1;
        self.unlink(slot);
        if slot != last {
            self.unlink(last);
        }
        self.docs.swap_remove(slot as usize);
        self.shapes.swap_remove(slot as usize);
        if slot != last {
            self.link(slot);
        }
    }

    /// Adds the record at `slot` to the postings, sessions and length totals.
    fn link(&mut self, slot: u32) {
        let doc = &self.docs[slot as usize];
        let len = match doc.session {
            None => u16::try_from(doc.len).unwrap_or(IN_CONTEXT),
            Some(_) => IN_CONTEXT,
        };
        for &(id, count) in doc.terms.iter() {
            let posting = &mut self.postings[id as usize];
            let entry = Posting { slot, count, len };
            // New records take the next slot, so most links append.
            if posting.last().is_none_or(|last| last.slot < slot) {
                posting.push(entry);
            } else {
                let at = posting.partition_point(|p| p.slot < slot);
                posting.insert(at, entry);
            }
        }
        let len = u64::from(doc.len);
        self.total_len += len;
        if let Some(s) = doc.session {
            self.sessions.entry(s).or_default().insert(doc.rowid, slot);
            if self.session_len.len() <= s as usize {
                self.session_len.resize(s as usize + 1, 0);
            }
            self.session_len[s as usize] += len;
            self.sessioned_len += len;
        }
    }

    /// Takes the record at `slot` out of the postings, sessions and length totals.
    fn unlink(&mut self, slot: u32) {
        let doc = &self.docs[slot as usize];
        for (id, _) in doc.terms.iter() {
            let posting = &mut self.postings[*id as usize];
            if let Ok(at) = posting.binary_search_by_key(&slot, |p| p.slot) {
                posting.remove(at);
            }
        }
        let len = u64::from(doc.len);
        self.total_len -= len;
        if let Some(s) = doc.session {
            if let Some(set) = self.sessions.get_mut(&s) {
                set.remove(&doc.rowid);
                if set.is_empty() {
                    self.sessions.remove(&s);
                }
            }
            self.session_len[s as usize] -= len;
            self.sessioned_len -= len;
        }
    }

    /// The slot of the record `offset` turns after (negative: before) `slot` in its session.
    fn neighbour(&self, slot: u32, offset: i32) -> Option<u32> {
        let doc = &self.docs[slot as usize];
        let set = self.sessions.get(&doc.session?)?;
        let rowid = doc.rowid;
        let found = match offset {
            -1 => set.range(..rowid).next_back(),
            1 => set.range(rowid + 1..).next(),
            2 => set.range(rowid + 1..).nth(1),
            -2 => set.range(..rowid).nth_back(1),
            _ => None,
        };
        found.map(|(_, slot)| *slot)
    }

    fn len_of(&self, slot: Option<u32>) -> f64 {
        slot.map_or(0.0, |s| f64::from(self.shapes[s as usize].len))
    }

    /// BM25F of every record matching any of `query` (plain words; stemmed here), and BM25
    /// of every matching session, each word's IDF scaled by its [`general_weight`]. A word
    /// that `modifiers` pairs with nouns (`mnemo_core::retrieval::modifiers`) scores
    /// [`MODIFIER_ALONE`] of its weight in a record holding none of them.
    pub(crate) fn score(&self, query: &[String], modifiers: &[(String, String)]) -> LexicalScores {
        let n = self.docs.len();
        let mut scores = LexicalScores {
            turns: zeros(n),
            sessions: vec![0.0; self.session_len.len()],
            matched: Vec::new(),
        };
        if n == 0 {
            return scores;
        }
        // Each sessioned record's length also counts, with weights adding to two, in its
        // neighbours' context: the average context-weighted length, without a full pass.
        let avgdl = ((self.total_len + 2 * self.sessioned_len) as f64 / n as f64).max(1.0);
        let ns = self.sessions.len() as f64;
        let avg_session = if ns > 0.0 { self.sessioned_len as f64 / ns } else { 1.0 };
        // Per-term scratch: term frequency by slot (gathered with context, so for sessioned
        // records only: none without sessions) and by session, and which were touched.
        let mut tf = if self.sessions.is_empty() { Vec::new() } else { zeros(n) };
        let mut touched: Vec<u32> = Vec::new();
        let mut per_session = vec![0.0_f64; self.session_len.len()];
        let mut touched_sessions: Vec<u32> = Vec::new();
        let mut seen = HashSet::new();
        // Each modifying term's nouns, and the records holding one of them (in their own
        // words), one bit per slot.
        let mut nouns_of: HashMap<String, Vec<String>> = HashMap::new();
        for (modifier, noun) in modifiers {
            for modifier in terms(modifier) {
                nouns_of.entry(modifier).or_default().extend(terms(noun));
            }
        }
        let holding_a_noun: HashMap<String, Vec<u64>> = nouns_of
            .into_iter()
            .map(|(modifier, nouns)| {
                let mut bits = vec![0_u64; n.div_ceil(64)];
                let postings = nouns
                    .iter()
                    .filter_map(|noun| self.dictionary.get(noun.as_str()))
                    .filter_map(|id| self.postings.get(*id as usize));
                for posting in postings {
                    for p in posting {
                        if let Some(word) = bits.get_mut(p.slot as usize / 64) {
                            *word |= 1 << (p.slot % 64);
                        }
                    }
                }
                (modifier, bits)
            })
            .collect();
        let weighted = query.iter().flat_map(|word| {
            let general = general_weight(word);
            terms(word).into_iter().map(move |term| (term, general))
        });
        for (term, general) in weighted {
            if general <= 0.0 || !seen.insert(term.clone()) {
                continue;
            }
            let Some(id) = self.dictionary.get(term.as_str()) else { continue };
            let Some(posting) = self.postings.get(*id as usize).filter(|p| !p.is_empty()) else {
                continue;
            };
            let df = posting.len() as f64;
            // Robertson's IDF over the records plus a background of documents without the
            // term, so a match means as much in a small notebook as in a large one, scaled by
            // how much the word tells apart in general language.
            let idf =
                general * ((n as f64 + BACKGROUND_DOCS - df + 0.5) / (df + 0.5)).ln().max(1e-6);
            let mut add = |slot: u32, amount: f64| {
                let cell = &mut tf[slot as usize];
                if *cell == 0.0 {
                    touched.push(slot);
                }
                *cell += amount;
            };
            let saturation = Saturation::new(idf, avgdl, posting.len());
            // A modifier counts in full only beside its noun.
            let nouns = holding_a_noun.get(&term);
            let share = |slot: u32| match nouns {
                Some(bits)
                    if bits
                        .get(slot as usize / 64)
                        .is_some_and(|w| w & (1 << (slot % 64)) == 0) =>
                {
                    MODIFIER_ALONE
                }
                _ => 1.0,
            };
            for &Posting { slot, count, len } in posting {
                // Outside a session a record has no context: the term's frequency is this
                // count alone, and its score is final at once.
                let alone = |len: u32, scores: &mut LexicalScores| {
                    let cell = &mut scores.turns[slot as usize];
                    if *cell == 0.0 {
                        scores.matched.push(slot);
                    }
                    *cell += saturation.of_count(count, len) * share(slot);
                };
                if len != IN_CONTEXT {
                    alone(u32::from(len), &mut scores);
                    continue;
                }
                let shape = self.shapes[slot as usize];
                let s = shape.session;
                if s == NO_SESSION {
                    alone(shape.len, &mut scores);
                } else {
                    let count = f64::from(count);
                    add(slot, count);
                    let cell = &mut per_session[s as usize];
                    if *cell == 0.0 {
                        touched_sessions.push(s);
                    }
                    *cell += count;
                    for (offset, weight) in [(1, W_PREV), (2, W_PREV2), (-1, W_NEXT)] {
                        if let Some(other) = self.neighbour(slot, offset) {
                            add(other, weight * count);
                        }
                    }
                }
            }
            for slot in touched.drain(..) {
                let f = std::mem::take(&mut tf[slot as usize]);
                if scores.turns[slot as usize] == 0.0 {
                    scores.matched.push(slot);
                }
                // Only sessioned records are added here, so each has its context.
                let dl = f64::from(self.shapes[slot as usize].len)
                    + W_PREV * self.len_of(self.neighbour(slot, -1))
                    + W_PREV2 * self.len_of(self.neighbour(slot, -2))
                    + W_NEXT * self.len_of(self.neighbour(slot, 1));
                scores.turns[slot as usize] += saturation.of(f, dl) * share(slot);
            }
            let sdf = touched_sessions.len() as f64;
            let sidf = general * (1.0 + (ns - sdf + 0.5) / (sdf + 0.5)).ln();
            for session in touched_sessions.drain(..) {
                let g = std::mem::take(&mut per_session[session as usize]);
                let sl = self.session_len[session as usize] as f64;
                scores.sessions[session as usize] +=
                    sidf * g * (K1 + 1.0) / (g + K1 * (1.0 - B + B * sl / avg_session));
            }
        }
        give_back(tf);
        scores
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// BM25's saturation written as the textbook has it, for a term of weight `idf`.
    fn bm25(idf: f64, avgdl: f64, f: f64, dl: f64) -> f64 {
        idf * f * (K1 + 1.0) / (f + K1 * (1.0 - B + B * dl / avgdl))
    }

    #[test]
    fn a_record_too_long_for_its_posting_scores_by_its_full_length() {
        let long = format!("qwzx {}", "filler ".repeat(70_000));
        let mut index = LexicalIndex::default();
        index.set(0, 1, &long, None);
        index.set(1, 2, "qwzx once", None);
        let scores = index.score(&["qwzx".into()], &[]);
        let (n, df) = (2.0, 2.0);
        let idf = ((n + BACKGROUND_DOCS - df + 0.5) / (df + 0.5)).ln();
        let avgdl = (70_001.0 + 2.0) / n;
        let once_in = |dl: f64| bm25(idf, avgdl, 1.0, dl);
        assert!((scores.turns[0] - once_in(70_001.0)).abs() < 1e-12, "{:?}", scores.turns);
        assert!((scores.turns[1] - once_in(2.0)).abs() < 1e-12, "{:?}", scores.turns);
    }

    #[test]
    fn saturation_is_bm25s_with_or_without_its_table() {
        let (idf, avgdl) = (2.3, 7.5);
        let tabled = Saturation::new(idf, avgdl, ONCE_TABLE_FROM);
        let plain = Saturation::new(idf, avgdl, ONCE_TABLE_FROM - 1);
        assert!(tabled.once.is_some() && plain.once.is_none());
        for count in [1_u16, 2, 5] {
            for len in [0_u32, 1, 9, 63, 64, 300] {
                let expected = bm25(idf, avgdl, f64::from(count), f64::from(len));
                for saturation in [&tabled, &plain] {
                    let got = saturation.of_count(count, len);
                    assert!(
                        (got - expected).abs() < 1e-12,
                        "{count} in {len}: {got} vs {expected}"
                    );
                }
            }
        }
    }

    #[test]
    fn context_and_sessions_score_and_removal_forgets() {
        let mut index = LexicalIndex::default();
        index.set(0, 1, "Did you name the boat?", Some(0));
        index.set(1, 2, "Yes, we called her Quillback", Some(0));
        index.set(2, 3, "I like pizza", None);
        let scores = index.score(&["boat".into()], &[]);
        // The answer is found through the question before it.
        assert!(scores.turns[1] > 0.0);
        assert!(scores.turns[0] > scores.turns[1]);
        assert_eq!(scores.turns[2], 0.0);
        assert!(scores.sessions[0] > 0.0);
        // Removing slot 0 moves rowid 3 ("pizza") into it.
        index.swap_remove(0);
        let scores = index.score(&["boat".into()], &[]);
        assert!(scores.turns.iter().all(|s| *s == 0.0));
        assert!(index.score(&["pizza".into()], &[]).turns[0] > 0.0);
        assert_eq!(terms("Running runs RAN"), ["run", "run", "ran"]);
    }

    #[test]
    fn kept_arrays_come_back_zeroed_and_scores_do_not_leak_between_searches() {
        let mut index = LexicalIndex::default();
        for slot in 0..300u32 {
            let session = (slot % 3 == 0).then_some(slot / 30);
            index.set(slot, i64::from(slot), &format!("word{} common", slot % 7), session);
        }
        let first = index.score(&["word3".into(), "common".into()], &[]);
        let (turns, sessions) = (first.turns.clone(), first.sessions.clone());
        drop(first);
        for _ in 0..3 {
            let narrow = index.score(&["word5".into()], &[]);
            for (slot, score) in narrow.turns.iter().enumerate() {
                assert_eq!(*score > 0.0, narrow.matched.contains(&(slot as u32)), "slot {slot}");
            }
        }
        // The same query gives the same scores with arrays that were used before.
        let again = index.score(&["word3".into(), "common".into()], &[]);
        assert_eq!(again.turns, turns);
        assert_eq!(again.sessions, sessions);
        drop(again);
        assert!(zeros(1_000).iter().all(|cell| *cell == 0.0));
    }

    #[test]
    fn a_shared_everyday_word_weighs_less_than_a_shared_name() {
        assert_eq!(general_weight("the"), 0.0);
        let team = general_weight("team");
        assert!(team > 0.3 && team < 0.7, "{team}");
        assert!(general_weight("greyhound") > team);
        assert_eq!(general_weight("Biscuit"), 1.0);
        let mut index = LexicalIndex::default();
        index.set(0, 1, "the team lunch got cancelled", None);
        index.set(1, 2, "we adopted a greyhound called Biscuit", None);
        let scores = index.score(&["team".into(), "biscuit".into()], &[]);
        assert!(scores.turns[1] > 1.5 * scores.turns[0], "{:?}", scores.turns);
        // A query of nothing but the commonest word matches nothing.
        assert!(index.score(&["the".into()], &[]).matched.is_empty());
    }

    #[test]
    fn a_modifier_without_its_noun_weighs_less() {
        let mut index = LexicalIndex::default();
        index.set(0, 1, "I keep a spare key under the mat", None);
        index.set(1, 2, "In my spare time I paint", None);
        // In a session the word is scored with its context, and shared the same way.
        index.set(2, 3, "a spare toothbrush lives in my bag", Some(1));
        index.set(3, 4, "spare time goes on the allotment", Some(2));
        let terms = ["spare".to_owned(), "time".to_owned()];
        let pairs = [("spare".to_owned(), "time".to_owned())];
        let (plain, modified) = (index.score(&terms, &[]), index.score(&terms, &pairs));
        for alone in [0, 2] {
            let share = modified.turns[alone] / plain.turns[alone];
            assert!((share - MODIFIER_ALONE).abs() < 1e-9, "{alone}: {share}");
        }
        for beside in [1, 3] {
            assert_eq!(modified.turns[beside], plain.turns[beside]);
        }
    }

    #[test]
    fn moved_records_keep_their_postings_and_neighbours() {
        let mut index = LexicalIndex::default();
        for (slot, rowid) in (0..4).zip(10..) {
            index.set(slot, rowid, &format!("turn{rowid} shared"), Some(1));
        }
        // Rowid 13 moves from slot 3 to slot 1; rowid 12's previous turn is now rowid 10.
        index.swap_remove(1);
        let scores = index.score(&["turn13".into()], &[]);
        assert!(scores.turns[1] > 0.0, "{:?}", scores.turns);
        let scores = index.score(&["turn10".into()], &[]);
        // Rowid 12 (slot 2) sees rowid 10 as its previous turn.
        assert!(scores.turns[2] > 0.0 && scores.turns[0] > scores.turns[2]);
        // Replacing a record's text in place drops its old terms.
        index.set(0, 10, "something else", Some(1));
        assert!(index.score(&["turn10".into()], &[]).turns.iter().all(|s| *s == 0.0));
        assert_eq!(index.total_len, 2 + 2 + 2);
    }
}
