//! The read path's pure part (SPEC §4): query analysis (terms, named speakers, dates), fusion
//! of the stores' per-record signals into one score, the relevance gate, and the blended
//! ranking.
//!
//! Fusion works on every retrievable record of the user at once. Each signal is put in
//! standard units so lexical (BM25F over a turn and its neighbours), semantic (cosine) and
//! session-level evidence add up on one scale: the cosine as a z-score over those records,
//! BM25F and session BM25 in fixed units (their IDF already weighs rarity among the records).
//! Three bonuses (a speaker the query names, a date it mentions, a record in which the user
//! speaks of themselves when the query asks about the user) and a penalty for records that
//! state nothing are in the same units. The gate, by
//! contrast, is absolute: a record must show real lexical or semantic evidence, so a query
//! about nothing stored returns nothing rather than the least-bad records.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashSet};

use crate::answer::AnswerKinds;
use crate::calibration::Calibration;
use crate::clock::Timestamp;
use crate::record::Memory;
use crate::scoring::{ScoreParts, ScoreWeights};

/// Words dropped from queries: they carry no topic (question words included).
const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "me",
    "more",
    "most",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "s",
    "t",
    "ll",
    "ve",
    "re",
    "d",
    "m",
];

/// English month names, lowercase, January first.
pub const MONTH_NAMES: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// English weekday names, lowercase, Monday first.
pub const WEEKDAY_NAMES: [&str; 7] =
    ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];

/// Whether a lowercase word is a stopword of the lexical index.
pub(crate) fn is_stopword(word: &str) -> bool {
    STOPWORDS.contains(&word)
}

/// Lowercase word tokens: maximal runs of letters and digits.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Query terms with each noun's synonyms added after them ("movies" also finds "film"),
/// each word once: a user's records name things in their own words.
pub fn with_synonyms(mut terms: Vec<String>) -> Vec<String> {
    let mut seen: HashSet<String> = terms.iter().cloned().collect();
    let asked = terms.len();
    for at in 0..asked {
        for synonym in crate::lexicon::synonyms(&terms[at]).unwrap_or_default() {
            if seen.insert((*synonym).to_owned()) {
                terms.push((*synonym).to_owned());
            }
        }
    }
    terms
}

/// The lexical terms of a query: lowercase words and numbers, stopwords and words of no topic
/// ([`VAGUE_WORDS`], a classifier before "of") removed, each once.
/// When every word is a stopword, all words are kept.
pub fn query_terms(query: &str) -> Vec<String> {
    let all = words(query);
    let mut terms: Vec<String> = all
        .iter()
        .enumerate()
        .filter(|(at, w)| {
            let classifier = CLASSIFIERS.contains(&w.as_str())
                && all.get(at + 1).is_some_and(|next| next == "of");
            !STOPWORDS.contains(&w.as_str()) && !VAGUE_WORDS.contains(&w.as_str()) && !classifier
        })
        .map(|(_, w)| w.clone())
        .collect();
    if terms.is_empty() {
        terms = all;
    }
    let mut seen = HashSet::new();
    terms.retain(|t| seen.insert(t.clone()));
    terms
}

/// The words of a query that modify a noun after them, each paired with that noun and with
/// each of its synonyms: in a run of words with no stopword or punctuation between them, every
/// word before the last modifies the last ("spare" and "time" in "my spare time", "video"
/// and "current" in "current video game"). A record that shares only a modifier ("a spare
/// key", "a viral video") shares a word, not what the query asks about; the lexical index
/// weighs such a match at [`MODIFIER_ALONE`]. A capitalised word (a name, or a request's
/// first word) modifies nothing, nor does a number; a run ending in an adverb ("paint recently")
/// or a number has no noun to modify.
pub fn modifiers(query: &str) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut run: Vec<(String, bool)> = Vec::new();
    let mut close_run = |run: &mut Vec<(String, bool)>| {
        if let Some(((head, _), before)) = run.split_last()
            && !head.ends_with("ly")
            && !head.starts_with(|c: char| c.is_ascii_digit())
        {
            let heads: Vec<String> = std::iter::once(head.clone())
                .chain(
                    crate::lexicon::synonyms(head)
                        .unwrap_or_default()
                        .iter()
                        .map(|w| (*w).to_owned()),
                )
                .collect();
            for (modifier, named) in before {
                if *named || modifier.starts_with(|c: char| c.is_ascii_digit()) {
                    continue;
                }
                for head in &heads {
                    let pair = (modifier.clone(), head.clone());
                    if *head != *modifier && !pairs.contains(&pair) {
                        pairs.push(pair);
                    }
                }
            }
        }
        run.clear();
    };
    let mut words: Vec<(usize, &str)> = Vec::new();
    let mut start = None;
    for (at, c) in query.char_indices() {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(at),
            (false, Some(from)) => {
                words.push((from, &query[from..at]));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(from) = start {
        words.push((from, &query[from..]));
    }
    let mut last_end = 0;
    for (start, word) in words {
        let lower = word.to_lowercase();
        let stopword = STOPWORDS.contains(&lower.as_str());
        if stopword || !query[last_end..start].chars().all(char::is_whitespace) {
            close_run(&mut run);
        }
        if !stopword {
            // Capitalised, it is a name, or the first word of a request ("Tell", "List").
            let named = word.starts_with(char::is_uppercase);
            run.push((lower, named));
        }
        last_end = start + word.len();
    }
    close_run(&mut run);
    pairs
}

/// Words that name no topic of their own: pro-forms ("something", "anyone") and, before
/// "of", the classifier nouns of "what kind of X". A record sharing only such a word with a
/// query shares nothing it asks about ("kind" also finds "sorted" through its synonym).
const VAGUE_WORDS: &[&str] = &[
    "something",
    "anything",
    "everything",
    "someone",
    "somebody",
    "anyone",
    "anybody",
    "everyone",
    "everybody",
    "thing",
    "things",
    "stuff",
];

/// Nouns that only classify the noun after "of" ("what kind of books").
const CLASSIFIERS: &[&str] = &["kind", "kinds", "sort", "sorts", "type", "types"];

/// How much of its weight a query word that modifies a noun ([`modifiers`]) carries in a
/// record that does not also hold that noun (or one of its synonyms).
pub const MODIFIER_ALONE: f64 = 0.5;

/// A calendar date (or month) mentioned in a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueryDate {
    /// The year, if given.
    pub year: Option<i32>,
    /// The month, 1..=12.
    pub month: u8,
    /// The day of the month, if given.
    pub day: Option<u8>,
}

fn day_number(word: &str) -> Option<u8> {
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &word[digits.len()..];
    if !matches!(suffix, "" | "st" | "nd" | "rd" | "th") {
        return None;
    }
    digits.parse::<u8>().ok().filter(|d| (1..=31).contains(d))
}

/// The year a four-digit word names (1900–2200).
pub(crate) fn year_number(word: &str) -> Option<i32> {
    (word.len() == 4)
        .then(|| word.parse::<i32>().ok())
        .flatten()
        .filter(|y| (1900..=2200).contains(y))
}

/// Dates mentioned in a query: `16 June, 2023`, `June 16 2023`, `June 2023`, `16 June`,
/// `June 16th`, and ISO `2023-06-16`.
pub fn query_dates(query: &str) -> Vec<QueryDate> {
    let tokens = words(query);
    let mut dates = Vec::new();
    let mut used = vec![false; tokens.len()];
    for (i, token) in tokens.iter().enumerate() {
        let Some(month) = MONTH_NAMES.iter().position(|m| m == token) else { continue };
        let month = month as u8 + 1;
        let before = i
            .checked_sub(1)
            .filter(|&j| !used[j])
            .and_then(|j| day_number(&tokens[j]).map(|d| (j, d)));
        let after = tokens.get(i + 1).and_then(|w| day_number(w)).map(|d| (i + 1, d));
        let (day, last) = match (before, after) {
            (Some((j, d)), _) => {
                used[j] = true;
                (Some(d), i)
            }
            (None, Some((j, d))) if tokens.get(j).and_then(|w| year_number(w)).is_none() => {
                (Some(d), j)
            }
            _ => (None, i),
        };
        let year = tokens.get(last + 1).and_then(|w| year_number(w));
        if day.is_none() && year.is_none() {
            continue;
        }
        used[i] = true;
        dates.push(QueryDate { year, month, day });
    }
    for window in tokens.windows(3) {
        if let (Some(year), Ok(month), Some(day)) =
            (year_number(&window[0]), window[1].parse::<u8>(), day_number(&window[2]))
            && (1..=12).contains(&month)
            && window[1].len() == 2
        {
            dates.push(QueryDate { year: Some(year), month, day: Some(day) });
        }
    }
    dates
}

/// Tuning of the read path.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetrievalConfig {
    /// Minimum evidence (0..1) a memory needs before blending: the stronger of its scaled
    /// cosine and scaled BM25.
    pub min_relevance: f64,
    /// Records fused per result asked for, so results filtered out after fusion (another
    /// session's incognito turns) are made up from the next most relevant.
    pub candidates_per_result: usize,
    /// Blending weights and half-life.
    pub weights: ScoreWeights,
    /// Cosine at or below which semantic evidence is 0.
    pub cosine_floor: f64,
    /// Cosine at or above which semantic evidence is 1.
    pub cosine_ceiling: f64,
    /// BM25 score at which lexical evidence reaches 1.
    pub bm25_saturation: f64,
    /// Weight of the lexical score (BM25F in [`Self::lexical_unit`]s) in fusion.
    pub lexical_weight: f64,
    /// Weight of the semantic z-score (the cosine's, over the user's records).
    pub semantic_weight: f64,
    /// Weight of the session score (BM25 of the record's session as one document, in
    /// [`Self::session_unit`]s).
    pub session_weight: f64,
    /// Bonus, in z units, for records by a speaker the query names.
    pub speaker_bonus: f64,
    /// Bonus, in z units, for records from a date the query mentions.
    pub date_bonus: f64,
    /// Days over which the date bonus decays (`exp(-Δdays / tau)`).
    pub date_tau_days: f64,
    /// Penalty, in z units, for a record that only asks or requests something ("how does a
    /// heat pump work", "what's the square root of 729", "write me a haiku about autumn"): it
    /// shares a question's words without stating anything that answers it.
    pub question_penalty: f64,
    /// Bonus, in z units, for a record whose author speaks of themselves
    /// ([`speaks_of_self`]) when the query asks about the user: the same weight as the
    /// question penalty, a record's relation to the question rather than its words.
    pub self_bonus: f64,
    /// Bonus, in z units, for a record that holds the kind of answer the query asks for
    /// ([`crate::answer::asked_for`]: a time for "when", a name for "who" or "where", an
    /// amount for "how many"): a relation to the question, like the self bonus.
    pub answer_kind_bonus: f64,
    /// Fused score that maps to relevance 1 − 1/e in the blend.
    pub fused_scale: f64,
    /// Fused scores (z units) this close are equally relevant as far as the evidence can
    /// tell: the blend orders records within this distance of the most relevant one not yet
    /// placed; a record further below it comes after them whatever its recency.
    pub relevance_tie: f64,
    /// Pseudo-records of typical cosines ([`Self::cosine_prior`]) added to every user's cosine
    /// statistics, so its z-score means the same for a notebook of one record as for a large
    /// one (below a few dozen records the prior dominates; above, the user's own records do).
    pub prior_records: f64,
    /// Mean and standard deviation of the cosine between unrelated texts (the embedder's; by
    /// default the raw cosines of the calibration sentences under the distilled table the
    /// gate was set with, so a calibrated embedder's gate sits at the same standard scores).
    pub cosine_prior: (f64, f64),
    /// BM25F per unit of lexical standard score. Lexical evidence is on this fixed scale, not
    /// standardized over the notebook: BM25's IDF already weighs a term by how rare it is
    /// among the user's records, and a standard score over them would grow with the notebook
    /// (a word shared by 5 records of 1,000 would stand 14 standard deviations out), so one
    /// shared word would outweigh any semantic evidence in a large notebook.
    pub lexical_unit: f64,
    /// Session BM25 per unit of session standard score, fixed for the same reason.
    pub session_unit: f64,
}

impl Default for RetrievalConfig {
    fn default() -> Self {
        Self {
            min_relevance: 0.3,
            candidates_per_result: 4,
            weights: ScoreWeights::default(),
            cosine_floor: 0.1,
            cosine_ceiling: 0.7,
            bm25_saturation: 10.0,
            lexical_weight: 0.6,
            semantic_weight: 0.4,
            session_weight: 0.4,
            speaker_bonus: 1.5,
            date_bonus: 1.5,
            date_tau_days: 3.0,
            question_penalty: 1.0,
            self_bonus: 1.0,
            answer_kind_bonus: 1.0,
            fused_scale: 3.0,
            relevance_tie: 1.0,
            prior_records: 30.0,
            cosine_prior: (0.189, 0.104),
            lexical_unit: 1.5,
            session_unit: 1.5,
        }
    }
}

/// The answer separation ([`Calibration::answer_separation`]) of the model the default
/// fusion weights were set for (the distilled table `minilm-l6-m2v-256`, which the built-in
/// model was fitted from); an embedder that separates answers better gets a larger semantic
/// share.
pub const REFERENCE_ANSWER_SEPARATION: f64 = 2.3595;

impl RetrievalConfig {
    /// This configuration for an embedder whose unrelated texts have cosine `mean` ±
    /// `std`: the cosine prior is theirs, and the semantic evidence floor and ceiling sit at
    /// the same standard scores as in the default configuration, so the relevance gate
    /// admits what it admits with the built-in model.
    pub fn for_cosine_prior(self, mean: f64, std: f64) -> Self {
        let default = Self::default();
        let (m0, s0) = default.cosine_prior;
        let z = |cosine: f64| (cosine - m0) / s0;
        Self {
            cosine_prior: (mean, std),
            cosine_floor: mean + z(default.cosine_floor) * std,
            cosine_ceiling: mean + z(default.cosine_ceiling) * std,
            ..self
        }
    }

    /// This configuration for a calibrated embedder: the relevance gate on its raw cosine
    /// scale (see [`Self::for_cosine_prior`]), ranking's standard scores on the scale of
    /// cosines without the common direction, and the semantic share of fusion by how well it
    /// tells answers apart ([`Self::for_answer_separation`]).
    pub fn for_calibration(self, calibration: &Calibration) -> Self {
        let (mean, std) = calibration.raw_cosine_prior;
        let config =
            Self { cosine_prior: calibration.cosine_prior, ..self.for_cosine_prior(mean, std) };
        match calibration.answer_separation {
            Some(separation) => config.for_answer_separation(separation),
            None => config,
        }
    }

    /// This configuration for an embedder whose answer separation
    /// ([`Calibration::answer_separation`]) is `separation`. For independent evidence of equal
    /// spread, the best linear fusion weighs each signal by how far it moves a relevant
    /// record; the default weights are set for a separation of
    /// [`REFERENCE_ANSWER_SEPARATION`], so the semantic weight grows (or shrinks) with the
    /// ratio, within a factor of four, and the lexical and semantic weights keep their sum.
    pub fn for_answer_separation(self, separation: f64) -> Self {
        if !separation.is_finite() || separation <= 0.0 {
            return self;
        }
        let ratio = (separation / REFERENCE_ANSWER_SEPARATION).clamp(0.25, 4.0);
        let total = self.lexical_weight + self.semantic_weight;
        let semantic = self.semantic_weight * ratio;
        let share = total / (self.lexical_weight + semantic);
        Self {
            lexical_weight: self.lexical_weight * share,
            semantic_weight: semantic * share,
            ..self
        }
    }

    /// How many records to fuse when `k` results are asked for.
    pub fn candidates_for(&self, k: usize) -> usize {
        k.saturating_mul(self.candidates_per_result)
    }

    /// Absolute evidence of relevance, 0..1: the stronger of scaled cosine and scaled BM25.
    pub fn evidence(&self, bm25: f64, cosine: f64) -> f64 {
        let semantic = ((cosine - self.cosine_floor) / (self.cosine_ceiling - self.cosine_floor))
            .clamp(0.0, 1.0);
        let lexical = (bm25 / self.bm25_saturation).clamp(0.0, 1.0);
        semantic.max(lexical)
    }

    /// Maps a fused score to a relevance in 0..1 for the blend (monotone).
    pub fn relevance(&self, fused: f64) -> f64 {
        1.0 - (-fused.max(0.0) / self.fused_scale).exp()
    }
}

/// What a store reports about one retrievable record for one query.
#[derive(Debug, Clone, PartialEq)]
pub struct RowSignal {
    /// BM25F of the record with its neighbouring turns (0 when no term matches).
    pub bm25: f64,
    /// Cosine similarity of its vector to the query's, as ranking sees it (without the
    /// notebook's common direction when the embedder is calibrated; 0 without vectors).
    pub cosine: f64,
    /// The raw cosine, which the relevance gate judges on the embedder's raw scale.
    pub gate_cosine: f64,
    /// BM25 of its session as one document (0 without a session or match).
    pub session_bm25: f64,
    /// Who said it, for conversation turns: an index into [`Signals::speakers`].
    pub speaker: Option<u32>,
    /// From when the statement holds (a turn's session date).
    pub valid_from: Timestamp,
    /// Whether the record only asks or requests something ([`states_nothing`]): nothing in
    /// it could answer a question.
    pub asks: bool,
    /// Whether its author speaks of themselves in it ([`speaks_of_self`]).
    pub of_self: bool,
    /// The kinds of answer it holds ([`crate::answer::answer_kinds`]).
    pub answers: AnswerKinds,
}

/// Whether a text states nothing that could answer a question: it only asks something
/// ([`only_asks`]) or only asks the assistant to do something once
/// ([`crate::extract::only_requests`]: "sort these names alphabetically", "help me plan a
/// route"). Such a record shares a question's words without answering it.
pub fn states_nothing(text: &str) -> bool {
    only_asks(text) || crate::extract::only_requests(text)
}

/// Words in which people speak of themselves.
const SELF_WORDS: &[&str] = &[
    "i",
    "me",
    "my",
    "mine",
    "myself",
    "i'm",
    "i've",
    "i'd",
    "i'll",
    "we",
    "us",
    "our",
    "ours",
    "ourselves",
    "we're",
    "we've",
    "we'd",
    "we'll",
];

/// The letters every [`SELF_WORDS`] word and "user" open with (a test holds them to it).
const SELF_INITIALS: &[u8] = b"imwou";

/// Whether a text speaks of its author (or, written by an agent, of its user): it holds a
/// first-person word ("I", "my", "we", "our"...), or "the user" ("user" opening the text).
/// A question about the user is answered by what the user said of themselves ("I'm learning
/// Polish"), not by a note about someone else that shares its words ("Ines booked a language
/// course").
pub fn speaks_of_self(text: &str) -> bool {
    // Case-insensitive, and a typographic apostrophe read as a plain one.
    let one_of = |word: &str, set: &[&str]| {
        if word.contains('\u{2019}') {
            let plain = word.replace('\u{2019}', "'");
            set.iter().any(|s| s.eq_ignore_ascii_case(&plain))
        } else {
            set.iter().any(|s| s.eq_ignore_ascii_case(word))
        }
    };
    let words = text
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '\u{2019}'))
        .filter(|w| !w.is_empty());
    let mut after_the = false;
    for (i, word) in words.enumerate() {
        // Words that cannot open a self word, nor "user", are passed over after one lookup.
        if !SELF_INITIALS.contains(&word.as_bytes()[0].to_ascii_lowercase()) {
            after_the = word.eq_ignore_ascii_case("the");
            continue;
        }
        // Only a word opening with "user" is normalised, so most words cost no allocation.
        let user = || {
            word.get(..4).is_some_and(|head| head.eq_ignore_ascii_case("user"))
                && names_the_user(&word.to_lowercase().replace('\u{2019}', "'"), i == 0, after_the)
        };
        if one_of(word, SELF_WORDS) || user() {
            return true;
        }
        after_the = word.eq_ignore_ascii_case("the");
    }
    false
}

/// Whether a lowercase word names an agent's user: "user" or "user's" after "the", or
/// opening a text ("user home city"), but not "a user password".
fn names_the_user(word: &str, first: bool, after_the: bool) -> bool {
    matches!(word, "user" | "user's") && (first || after_the)
}

/// Interrogatives that open a question when an auxiliary follows them (or is contracted).
const QUESTION_OPENERS: &[&str] = &[
    "what", "what's", "whats", "how", "how's", "why", "when", "where", "where's", "who", "who's",
    "whose", "which", "whom",
];

/// Auxiliary verbs that open a yes-no question when a pronoun or `there` follows.
const QUESTION_AUXILIARIES: &[&str] = &[
    "can", "could", "would", "will", "do", "does", "did", "is", "are", "was", "were", "should",
    "shall", "may", "might", "have", "has",
];

/// Whether a text only asks something: each of its sentences ends with a question mark, or
/// opens with an interrogative and an auxiliary ("how does a heat pump work", "what's the
/// time") or an auxiliary before a pronoun ("can you make phone calls"), and none ends with
/// an exclamation mark ("what a day!"). A text with any statement in it ("Where's my
/// hometown? I grew up in Cork") does not, nor does a statement that opens like a question
/// ("When I'm thirsty I reach for water").
pub fn only_asks(text: &str) -> bool {
    let mut sentences = 0;
    let mut start = 0;
    // Whether the sentence `from..to`, ended by `end`, leaves the text asking only: `false`
    // for one that states or exclaims something.
    let mut asks_only = |from: usize, to: usize, end: char| {
        let sentence = text[from..to].trim();
        if sentence.chars().filter(|c| c.is_alphanumeric()).take(2).count() < 2 {
            return true;
        }
        sentences += 1;
        if end == '?' {
            return true;
        }
        if end == '!' {
            return false;
        }
        let mut words = sentence
            .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '\u{2019}'))
            .filter(|w| !w.is_empty())
            .map(plain_lowercase);
        let first = words.next().unwrap_or_default();
        let second = words.next().unwrap_or_default();
        let (first, second) = (first.as_ref(), second.as_ref());
        // "how does it work", "what's the time", "can you help": a statement may open with
        // the same words ("when I'm thirsty I reach for water", "what I love is hiking").
        (QUESTION_OPENERS.contains(&first)
            && (first.contains('\'') || QUESTION_AUXILIARIES.contains(&second)))
            || (QUESTION_AUXILIARIES.contains(&first)
                && matches!(second, "you" | "i" | "it" | "there" | "we" | "they" | "he" | "she"))
    };
    for (at, c) in text.char_indices() {
        if matches!(c, '.' | '!' | '?' | '\n') {
            if !asks_only(start, at, c) {
                return false;
            }
            start = at + c.len_utf8();
        }
    }
    if start < text.len() && !asks_only(start, text.len(), ' ') {
        return false;
    }
    sentences > 0
}

/// A word in lowercase with a typographic apostrophe read as a plain one, copied only when
/// that changes it.
pub(crate) fn plain_lowercase(word: &str) -> std::borrow::Cow<'_, str> {
    if word.bytes().all(|b| b.is_ascii() && !b.is_ascii_uppercase()) {
        std::borrow::Cow::Borrowed(word)
    } else {
        std::borrow::Cow::Owned(word.to_lowercase().replace('\u{2019}', "'"))
    }
}

/// A query as the user would say it: an agent asking about "the user" asks about what the
/// user said in the first person ("What city does the user live in?" reads "What city does
/// I live in?"; "the user's employer", and a keyword query opening "user employer", read "my
/// employer"), and in such a query "they", "their" and "them" are the user too. The rest is
/// kept as written; a query that does not speak of the user ("reset a user password") is
/// returned unchanged.
pub fn as_the_user_says_it(query: &str) -> String {
    let tokens: Vec<Token<'_>> =
        query.split_inclusive(char::is_whitespace).map(Token::new).collect();
    // "the user" or "the user's", or a query opening with "user": not "a user password".
    let refers =
        |i: usize| names_the_user(&tokens[i].word, i == 0, i > 0 && tokens[i - 1].word == "the");
    if !(0..tokens.len()).any(refers) {
        return query.to_owned();
    }
    let mut out = String::with_capacity(query.len());
    for (i, token) in tokens.iter().enumerate() {
        let next = tokens.get(i + 1).map(|t| t.word.as_str());
        if token.word == "the" && i + 1 < tokens.len() && refers(i + 1) {
            // "the user": the article goes with the noun.
            out.push_str(token.lead);
            continue;
        }
        let replacement = match token.word.as_str() {
            // A keyword query's first word qualifies the noun after it: "user home city".
            "user" if i == 0 && next.is_some() => Some("my"),
            "user" if refers(i) => Some("I"),
            "user's" if refers(i) => Some("my"),
            "they" => Some("I"),
            "their" => Some("my"),
            "theirs" => Some("mine"),
            "them" => Some("me"),
            "themselves" | "themself" => Some("myself"),
            _ => None,
        };
        match replacement {
            Some(word) => {
                out.push_str(token.lead);
                out.push_str(word);
                out.push_str(token.trail);
            }
            None => out.push_str(token.text),
        }
    }
    out
}

/// A whitespace-separated token of a query: its text (with the whitespace after it), the
/// punctuation before its word, the word (lowercase, typographic apostrophes straightened)
/// and what follows the word.
struct Token<'a> {
    text: &'a str,
    lead: &'a str,
    word: String,
    trail: &'a str,
}

impl<'a> Token<'a> {
    fn new(text: &'a str) -> Self {
        let start = text.find(char::is_alphanumeric).unwrap_or(text.len());
        let end = text
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_alphanumeric())
            .map_or(start, |(at, c)| at + c.len_utf8())
            .max(start);
        let word = text[start..end].to_lowercase().replace('\u{2019}', "'");
        Self { text, lead: &text[..start], word, trail: &text[end..] }
    }
}

/// A query's words as the lexical index reads them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct QueryWords<'a> {
    /// Lexical terms (plain words; the index stems them).
    pub terms: &'a [String],
    /// Words that modify a noun, each with that noun ([`modifiers`]).
    pub modifiers: &'a [(String, String)],
}

/// The retrievable records' signals for one query, with the speaker names they refer to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Signals<'a> {
    /// One entry per retrievable record, or only per candidate among them (the best by
    /// lexical and by vector search, for a large user), in which case `population` is given.
    pub rows: Vec<RowSignal>,
    /// Speaker names, indexed by [`RowSignal::speaker`].
    pub speakers: Vec<&'a str>,
    /// Statistics over every retrievable record: required when `rows` holds only the
    /// candidates; when `rows` holds every record, [`fuse`] takes them from the rows if not
    /// given (the same figures, at the cost of two more passes over the rows).
    pub population: Option<Population>,
}

/// Statistics of the signals over every retrievable record, for standard scores (the
/// lexical signals have a fixed scale, [`RetrievalConfig::lexical_unit`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Population {
    /// Of the cosine.
    pub semantic: Moments,
    /// Which speakers (by index into [`Signals::speakers`]) have a retrievable record.
    pub speakers_present: Vec<bool>,
}

/// One record's fused score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fused {
    /// Index into the signals given to [`fuse`].
    pub index: usize,
    /// The fused score (z units).
    pub score: f64,
    /// Absolute evidence, 0..1, that the gate checked.
    pub evidence: f64,
}

/// Running sums of one signal, for its standard score.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Moments {
    n: f64,
    sum: f64,
    sum_sq: f64,
}

impl Moments {
    /// Adds one value.
    pub fn add(&mut self, v: f64) {
        self.n += 1.0;
        self.sum += v;
        self.sum_sq += v * v;
    }

    /// How many values were added (scaled by [`Self::scaled`]).
    pub fn count(&self) -> f64 {
        self.n
    }

    /// The mean of the values (0 for none).
    pub fn mean(&self) -> f64 {
        if self.n > 0.0 { self.sum / self.n } else { 0.0 }
    }

    /// These moments as if every value had been seen `factor` times: a sample's moments
    /// stood for the whole it was drawn from.
    pub fn scaled(self, factor: f64) -> Self {
        Self { n: self.n * factor, sum: self.sum * factor, sum_sq: self.sum_sq * factor }
    }

    /// These moments with `n` pseudo-values of mean `mean` and standard deviation `std`.
    pub fn with_prior(self, n: f64, (mean, std): (f64, f64)) -> Self {
        Self {
            n: self.n + n,
            sum: self.sum + n * mean,
            sum_sq: self.sum_sq + n * (std * std + mean * mean),
        }
    }

    /// The standard score as `(slope, offset)`: `z(v) = slope * v + offset`.
    fn z_scores(&self) -> (f64, f64) {
        let Self { n, sum, sum_sq } = *self;
        let mean = if n > 0.0 { sum / n } else { 0.0 };
        let std = if n > 0.0 { (sum_sq / n - mean * mean).max(0.0).sqrt() } else { 0.0 };
        let slope = 1.0 / (std + 1e-9);
        (slope, -mean * slope)
    }
}

fn civil_date(at: Timestamp) -> Option<(i32, u8, u8)> {
    let date = time::OffsetDateTime::from_unix_timestamp(at.as_millis().div_euclid(1000)).ok()?;
    Some((date.year(), u8::from(date.month()), date.day()))
}

fn date_match(dates: &[QueryDate], at: Timestamp, tau: f64) -> f64 {
    let Some((year, month, day)) = civil_date(at) else { return 0.0 };
    let score = |d: &QueryDate| -> Option<f64> {
        match (d.year, d.day) {
            (Some(y), Some(dd)) => {
                let date =
                    time::Date::from_calendar_date(y, time::Month::try_from(d.month).ok()?, dd)
                        .ok()?;
                let midnight = date.midnight().assume_utc().unix_timestamp() * 1000;
                let days = (at.as_millis() - midnight) as f64 / 86_400_000.0;
                // Whole days apart: any time on the named day is distance 0.
                let days = if days >= 0.0 { days.floor() } else { (-days).ceil() };
                Some((-days / tau).exp())
            }
            (Some(y), None) => Some(f64::from(u8::from(y == year && d.month == month))),
            (None, Some(dd)) => Some(f64::from(u8::from(d.month == month && dd == day))),
            (None, None) => None,
        }
    };
    dates.iter().filter_map(score).fold(0.0, f64::max)
}

/// Which speakers (by index) the query names: every word of the name appears in the query.
/// A bonus applies only when some but not all speakers of the retrievable records are named.
fn named_speakers(query: &str, signals: &Signals<'_>) -> Vec<bool> {
    let present = match &signals.population {
        Some(population) => population.speakers_present.clone(),
        None => {
            let mut present = vec![false; signals.speakers.len()];
            for row in &signals.rows {
                if let Some(slot) = row.speaker.and_then(|s| present.get_mut(s as usize)) {
                    *slot = true;
                }
            }
            present
        }
    };
    let query_words: HashSet<String> = words(query).into_iter().collect();
    let named: Vec<bool> = signals
        .speakers
        .iter()
        .zip(&present)
        .map(|(name, &present)| {
            let name = words(name);
            present && !name.is_empty() && name.iter().all(|w| query_words.contains(w))
        })
        .collect();
    let named_count = named.iter().filter(|n| **n).count();
    let present_count = present.iter().filter(|p| **p).count();
    if named_count == present_count { vec![false; named.len()] } else { named }
}

/// Fuses every retrievable record's signals into one score, keeps those whose absolute
/// evidence passes the gate, and returns the best `limit`, best first.
pub fn fuse(
    query: &str,
    signals: &Signals<'_>,
    config: &RetrievalConfig,
    limit: usize,
) -> Vec<Fused> {
    let rows = &signals.rows;
    let semantic = match &signals.population {
        Some(p) => p.semantic,
        None => {
            let mut moments = Moments::default();
            rows.iter().for_each(|row| moments.add(row.cosine));
            moments
        }
    };
    let (semantic_slope, semantic_offset) =
        semantic.with_prior(config.prior_records, config.cosine_prior).z_scores();
    // Weighted standard scores folded into one linear form over the three signals.
    let (w_lexical, w_semantic, w_session) = (
        config.lexical_weight / config.lexical_unit,
        config.semantic_weight * semantic_slope,
        config.session_weight / config.session_unit,
    );
    let offset = config.semantic_weight * semantic_offset;
    let named = named_speakers(query, signals);
    let dates = query_dates(query);
    let about_self = speaks_of_self(query);
    let asked_for = crate::answer::asked_for(query);
    // The best `limit` so far, worst on top, so most rows are turned away by one comparison.
    let mut best: BinaryHeap<Ranked> = BinaryHeap::with_capacity(limit + 1);
    // The score of the worst kept row once `limit` are kept; a row scoring less cannot enter.
    let mut worst_kept = f64::NEG_INFINITY;
    let rows = if limit == 0 { &rows[..0] } else { &rows[..] };
    for (index, row) in rows.iter().enumerate() {
        // The score of every row, without branches on its signals (whether a row has any
        // evidence, or asks something, is as good as random from row to row).
        let mut score =
            offset + w_lexical * row.bm25 + w_semantic * row.cosine + w_session * row.session_bm25;
        let is_named = row.speaker.is_some_and(|s| named.get(s as usize).copied().unwrap_or(false));
        score += if is_named { config.speaker_bonus } else { 0.0 };
        if !dates.is_empty() {
            score += config.date_bonus * date_match(&dates, row.valid_from, config.date_tau_days);
        }
        score -= if row.asks { config.question_penalty } else { 0.0 };
        score += if about_self & row.of_self { config.self_bonus } else { 0.0 };
        score += if asked_for.is_some_and(|k| row.answers.has(k)) {
            config.answer_kind_bonus
        } else {
            0.0
        };
        // A row with no evidence at all never ranks; most other rows rank below the kept
        // ones: turn both away before the gate's arithmetic, in one test.
        let no_evidence = (row.bm25 <= 0.0) & (row.gate_cosine <= 0.0);
        if no_evidence | (score < worst_kept) {
            continue;
        }
        let candidate = Ranked(Fused { index, score, evidence: 0.0 });
        let full = best.len() == limit;
        if full && best.peek().is_some_and(|worst| candidate > *worst) {
            continue;
        }
        let evidence = config.evidence(row.bm25, row.gate_cosine);
        if evidence < config.min_relevance {
            continue;
        }
        if full {
            best.pop();
        }
        best.push(Ranked(Fused { evidence, ..candidate.0 }));
        if best.len() == limit {
            worst_kept = best.peek().map_or(f64::NEG_INFINITY, |worst| worst.0.score);
        }
    }
    let mut fused: Vec<Fused> = best.into_iter().map(|r| r.0).collect();
    fused.sort_by(Ranked::order);
    fused
}

/// A fused record ordered best first: higher score, then lower index (so a max-heap of
/// `Ranked` keeps its worst member on top).
#[derive(Debug, Clone, Copy)]
struct Ranked(Fused);

impl Ranked {
    fn order(a: &Fused, b: &Fused) -> Ordering {
        b.score.total_cmp(&a.score).then(a.index.cmp(&b.index))
    }
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Ranked {}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        Self::order(&self.0, &other.0)
    }
}

/// One ranked memory and why it ranked there.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The memory.
    pub memory: Memory,
    /// Relevance (from the fused score), recency, importance and blended score.
    pub parts: ScoreParts,
    /// The fused score and the evidence that passed the gate.
    pub fused: Fused,
    /// Its BM25F score.
    pub bm25: f64,
    /// Its cosine similarity.
    pub cosine: f64,
}

/// Blends the records relevance admitted with recency and importance (SPEC §4) and orders
/// them. Relevance has already decided which records are returned (those passing the gate,
/// the best `k` by fused score), and it decides their order too where the evidence tells
/// them apart: records are taken most relevant first in groups, each group the records whose
/// fused score lies within [`RetrievalConfig::relevance_tie`] of its most relevant member,
/// and the blended score orders each group. So among equally relevant records the newer and
/// the more important come first, and an old relevant fact still outranks recent chatter
/// that matched less. A transcript turn comes after a durable memory that stands for it
/// (drawn from it, or repeated by it) whatever their scores.
pub fn blend(
    candidates: Vec<(Memory, Fused, f64, f64)>,
    config: &RetrievalConfig,
    now: Timestamp,
) -> Vec<Hit> {
    let mut hits: Vec<Hit> = candidates
        .into_iter()
        .map(|(memory, fused, bm25, cosine)| {
            let last = memory.last_used_at.map_or(memory.updated_at, |u| u.max(memory.updated_at));
            let parts = config.weights.blend(
                config.relevance(fused.score),
                now.days_since(last),
                memory.importance,
            );
            Hit { memory, parts, fused, bm25, cosine }
        })
        .collect();
    hits.sort_by(|a, b| {
        b.fused.score.total_cmp(&a.fused.score).then_with(|| a.memory.id.cmp(&b.memory.id))
    });
    let mut start = 0;
    while start < hits.len() {
        let head = hits[start].fused.score;
        // The head is always in its group, so each pass places at least one record.
        let end = hits[start + 1..]
            .iter()
            .position(|h| head - h.fused.score >= config.relevance_tie)
            .map_or(hits.len(), |offset| start + 1 + offset);
        hits[start..end].sort_by(|a, b| {
            b.parts
                .score
                .total_cmp(&a.parts.score)
                .then(b.fused.score.total_cmp(&a.fused.score))
                .then_with(|| a.memory.id.cmp(&b.memory.id))
        });
        start = end;
    }
    turns_after_what_stands_for_them(hits)
}

/// Whether a durable memory stands for a transcript turn: it was drawn from the turn (the
/// same source reference), or the turn repeats it (every content word of the memory, `user`
/// aside, is among the turn's words; both compared by [`crate::claims::loose`] stems).
fn stands_for(memory: &Memory, terms: &[String], turn: &Memory, said: &HashSet<String>) -> bool {
    if memory.source.source_ref.is_some() && memory.source.source_ref == turn.source.source_ref {
        return true;
    }
    !terms.is_empty() && terms.iter().all(|t| said.contains(t))
}

/// Moves each transcript turn to just after the first durable memory ranked below it that
/// stands for it, so a memory outranks the raw turn it was drawn from and turns that repeat
/// it; the order is otherwise kept.
fn turns_after_what_stands_for_them(hits: Vec<Hit>) -> Vec<Hit> {
    use crate::claims::loose;
    if !hits.iter().any(|h| h.memory.transcript) {
        return hits;
    }
    // Each record's stems once: a turn's words, a memory's content terms.
    let stems: Vec<Vec<String>> = hits
        .iter()
        .map(|h| {
            if h.memory.transcript {
                words(&h.memory.content).iter().map(|w| loose(w)).collect()
            } else {
                query_terms(&h.memory.content)
                    .iter()
                    .filter(|w| *w != "user")
                    .map(|w| loose(w))
                    .collect()
            }
        })
        .collect();
    let after: Vec<Option<usize>> = hits
        .iter()
        .enumerate()
        .map(|(i, turn)| {
            if !turn.memory.transcript {
                return None;
            }
            let said: HashSet<String> = stems[i].iter().cloned().collect();
            (i + 1..hits.len()).find(|&j| {
                !hits[j].memory.transcript
                    && stands_for(&hits[j].memory, &stems[j], &turn.memory, &said)
            })
        })
        .collect();
    if after.iter().all(Option::is_none) {
        return hits;
    }
    let mut deferred: Vec<(usize, Hit)> = Vec::new();
    let mut ordered = Vec::with_capacity(hits.len());
    for (i, hit) in hits.into_iter().enumerate() {
        if let Some(j) = after[i] {
            deferred.push((j, hit));
            continue;
        }
        ordered.push(hit);
        let (now, later): (Vec<_>, Vec<_>) = deferred.into_iter().partition(|(j, _)| *j == i);
        ordered.extend(now.into_iter().map(|(_, h)| h));
        deferred = later;
    }
    ordered.extend(deferred.into_iter().map(|(_, h)| h));
    ordered
}

#[cfg(test)]
mod question_tests {
    use super::only_asks;

    #[test]
    fn questions_are_told_from_statements() {
        for asks in [
            "how does a heat pump work",
            "what's the square root of 729",
            "Can you make phone calls?",
            "Where do I live?",
            "how do I write a good bug report",
            "is it going to rain? what should I wear",
        ] {
            assert!(only_asks(asks), "{asks}");
        }
        for states in [
            "When I'm thirsty I always reach for tea.",
            "What I love most is hiking.",
            "Where's my hometown? I grew up in Cork.",
            "What a day!",
            "I live in Leeds.",
            "Please keep answers short",
            "",
            "?",
        ] {
            assert!(!only_asks(states), "{states}");
        }
    }

    #[test]
    fn every_self_word_opens_with_a_self_initial() {
        for word in super::SELF_WORDS.iter().chain(&["user"]) {
            assert!(super::SELF_INITIALS.contains(&word.as_bytes()[0]), "{word}");
        }
    }

    #[test]
    fn a_text_speaking_of_its_author_is_told_from_a_note_about_someone_else() {
        use super::speaks_of_self;
        for of_self in [
            "I'm learning Polish.",
            "My favourite drink is lemonade",
            "we\u{2019}re going to Japan in October",
            "Flat white with oat milk for me",
            "User prefers dark mode",
            "Remind the user's partner about the booking",
            "the user\u{2019}s sister lives in Porto",
            "What language am I learning?",
        ] {
            assert!(speaks_of_self(of_self), "{of_self}");
        }
        for of_another in [
            "Ines booked a language course two weeks ago",
            "The museum is closed on public holidays.",
            "She said it was fine",
            "Imagine a user interface",
            "",
        ] {
            assert!(!speaks_of_self(of_another), "{of_another}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 86_400_000;

    fn at(date: &str) -> Timestamp {
        Timestamp::parse(&format!("{date}T13:56:00Z"), "t").unwrap()
    }

    const SPEAKERS: [&str; 3] = ["Melanie", "Caroline", "Jon"];

    fn row(bm25: f64, cosine: f64, speaker: Option<&str>) -> RowSignal {
        let speaker = speaker.and_then(|s| SPEAKERS.iter().position(|n| *n == s)).map(|i| i as u32);
        RowSignal {
            asks: false,
            of_self: false,
            answers: AnswerKinds::default(),
            bm25,
            cosine,
            gate_cosine: cosine,
            session_bm25: 0.0,
            speaker,
            valid_from: at("2023-05-08"),
        }
    }

    fn signals(rows: impl Into<Vec<RowSignal>>) -> Signals<'static> {
        Signals { rows: rows.into(), speakers: SPEAKERS.to_vec(), population: None }
    }

    /// An active memory of user `u` with id `id`, written from `fields` at `at`.
    fn memory(id: &str, fields: crate::lifecycle::CandidateFields, at: Timestamp) -> Memory {
        crate::lifecycle::Candidate::validate(fields, at).unwrap().into_memory(
            crate::record::MemoryId(id.into()),
            "t",
            "u",
            crate::record::Status::Active,
            at,
        )
    }

    #[test]
    fn a_memory_ranks_above_the_turn_it_was_drawn_from_and_turns_that_repeat_it() {
        use crate::lifecycle::CandidateFields;
        let now = at("2023-05-08");
        let record = |id: &str, content: &str, reference: &str, transcript: bool| {
            let fields = CandidateFields {
                content: content.into(),
                source: Some(crate::record::Source {
                    source_type: crate::record::SourceType::UserStated,
                    source_ref: Some(reference.into()),
                    captured_at: now,
                    extractor: None,
                }),
                expires_at: transcript.then(|| Timestamp::from_millis(now.as_millis() + DAY)),
                transcript,
                ..Default::default()
            };
            memory(id, fields, now)
        };
        let hit = |memory: Memory, score: f64| Hit {
            memory,
            parts: ScoreParts { relevance: score, recency: 1.0, importance: 0.5, score },
            fused: Fused { index: 0, score, evidence: score },
            bm25: 0.0,
            cosine: 0.0,
        };
        let hits = vec![
            hit(record("turn-a", "Hi! I moved to Austin, Texas.", "s1:0", true), 0.9),
            hit(record("chatter", "The weather was lovely.", "s1:1", true), 0.8),
            hit(
                record("turn-b", "Did I say? I moved to Austin, Texas, in May.", "s2:4", true),
                0.7,
            ),
            hit(record("memory", "User moved to Austin, Texas", "s1:0", false), 0.6),
            hit(record("other", "User likes tea", "s1:7", false), 0.5),
        ];
        let ordered: Vec<String> =
            turns_after_what_stands_for_them(hits).into_iter().map(|h| h.memory.id.0).collect();
        assert_eq!(ordered, ["chatter", "memory", "turn-a", "turn-b", "other"]);
    }

    /// Relevance orders what it tells apart; recency and importance order what it does not.
    #[test]
    fn recency_orders_equally_relevant_records_and_never_passes_a_clearly_more_relevant_one() {
        use crate::lifecycle::CandidateFields;
        let now = at("2023-12-01");
        let record = |id: &str, said: &str, importance: f64| {
            let said = at(said);
            let fields = CandidateFields {
                content: format!("statement {id}"),
                importance: Some(importance),
                ..Default::default()
            };
            memory(id, fields, said)
        };
        let fused = |score: f64| Fused { index: 0, score, evidence: 0.5 };
        let candidates = vec![
            // Recent chatter that matched a little.
            (record("recent-chatter", "2023-11-30", 0.5), fused(4.0), 0.0, 0.0),
            // The fact asked about, said months ago.
            (record("old-fact", "2023-03-01", 0.5), fused(6.5), 0.0, 0.0),
            // As relevant as the old fact as far as the evidence can tell, said last week.
            (record("newer-fact", "2023-11-24", 0.5), fused(6.0), 0.0, 0.0),
            // As relevant as the chatter, old but important.
            (record("old-important", "2023-03-01", 1.0), fused(4.2), 0.0, 0.0),
        ];
        let config = RetrievalConfig::default();
        let ordered: Vec<String> =
            blend(candidates, &config, now).into_iter().map(|h| h.memory.id.0).collect();
        assert_eq!(ordered, ["newer-fact", "old-fact", "recent-chatter", "old-important"]);
        // The blended score alone would put the recent chatter above the old fact.
        let w = config.weights;
        let chatter = w.blend(config.relevance(4.0), 1.0, 0.5).score;
        let old = w.blend(config.relevance(6.5), 275.0, 0.5).score;
        assert!(chatter > old, "{chatter} <= {old}");
    }

    #[test]
    fn words_before_a_noun_modify_it() {
        let pairs = |query: &str| -> Vec<(String, String)> { modifiers(query) };
        let pair = |m: &str, n: &str| (m.to_owned(), n.to_owned());
        assert_eq!(pairs("What do I do in my spare time?"), [pair("spare", "time")]);
        assert_eq!(pairs("current video game"), [pair("current", "game"), pair("video", "game")]);
        // The noun's synonyms stand for it too.
        assert!(pairs("What's my favourite film?").contains(&pair("favourite", "movie")));
        // Stopwords, punctuation, names, numbers and adverbs break or end a run.
        assert!(pairs("Which city do I live in?").is_empty());
        assert!(pairs("tea, coffee").is_empty());
        assert!(pairs("What did Caroline research?").is_empty());
        assert_eq!(
            pairs("When did Caroline go to the LGBTQ support group?"),
            [pair("support", "group")]
        );
        assert!(pairs("What did Melanie paint recently?").is_empty());
        assert!(pairs("my 5 km run").iter().all(|(m, _)| m != "5"));
        assert!(pairs("").is_empty() && pairs("?!").is_empty());
    }

    #[test]
    fn a_query_also_finds_its_nouns_synonyms() {
        assert_eq!(
            with_synonyms(query_terms("What movies do I like?")),
            ["movies", "like", "film", "movie"]
        );
        assert_eq!(with_synonyms(query_terms("user car")), ["user", "car", "auto", "automobile"]);
        // Words without synonyms here, and repeats, add nothing.
        assert_eq!(with_synonyms(query_terms("breakfast lunch lunch")), ["breakfast", "lunch"]);
    }

    #[test]
    fn query_terms_drop_stopwords_and_repeats() {
        assert_eq!(
            query_terms("What did Caroline do with the Caroline painting?"),
            ["caroline", "painting"]
        );
        assert_eq!(query_terms("who is it"), ["who", "is", "it"]);
        // Pro-forms and the classifier of "what kind of X" name no topic ("kind" would find
        // "sorted" through its synonym); a type that is the topic stays.
        assert_eq!(query_terms("What kind of books should you recommend?"), ["books", "recommend"]);
        assert_eq!(query_terms("something to sip"), ["sip"]);
        assert_eq!(query_terms("What's my blood type?"), ["blood", "type"]);
        assert!(query_terms("  ?! ").is_empty());
    }

    #[test]
    fn dates_in_queries() {
        let full = |y, m, d| QueryDate { year: Some(y), month: m, day: Some(d) };
        assert_eq!(query_dates("What did Maria share on 16 June, 2023?"), [full(2023, 6, 16)]);
        assert_eq!(query_dates("plans for June 16th 2023"), [full(2023, 6, 16)]);
        assert_eq!(
            query_dates("learning in December 2023?"),
            [QueryDate { year: Some(2023), month: 12, day: None }]
        );
        assert_eq!(
            query_dates("party on 3 May"),
            [QueryDate { year: None, month: 5, day: Some(3) }]
        );
        assert_eq!(query_dates("deadline 2024-02-29"), [full(2024, 2, 29)]);
        assert!(query_dates("may I ask about march madness").is_empty());
    }

    #[test]
    fn date_match_decays_with_distance() {
        let q = query_dates("on 8 May 2023");
        assert_eq!(date_match(&q, at("2023-05-08"), 3.0), 1.0);
        assert!((date_match(&q, at("2023-05-11"), 3.0) - (-1.0_f64).exp()).abs() < 1e-9);
        let month = query_dates("in May 2023");
        assert_eq!(date_match(&month, at("2023-05-30"), 3.0), 1.0);
        assert_eq!(date_match(&month, at("2023-06-01"), 3.0), 0.0);
        let _ = DAY;
    }

    #[test]
    fn gate_is_absolute_no_least_bad_filler() {
        let config = RetrievalConfig::default();
        let rows = signals([row(0.0, 0.12, None), row(0.0, 0.2, None)]);
        assert!(fuse("quantum chromodynamics", &rows, &config, 10).is_empty());
        let rows = signals([row(0.0, 0.12, None), row(6.0, 0.7, None)]);
        let fused = fuse("green tea", &rows, &config, 10);
        assert_eq!(fused.iter().map(|f| f.index).collect::<Vec<_>>(), [1]);
    }

    #[test]
    fn named_speaker_and_agreement_rank_first() {
        let config = RetrievalConfig { min_relevance: 0.0, ..Default::default() };
        // "Jon" is known but has no retrievable record, so naming the other two is naming all.
        let rows = signals([
            row(5.0, 0.5, Some("Melanie")),
            row(5.0, 0.5, Some("Caroline")),
            row(5.0, 0.1, Some("Caroline")),
            row(0.5, 0.3, Some("Melanie")),
        ]);
        let fused = fuse("What did Caroline paint?", &rows, &config, 10);
        assert_eq!(fused[0].index, 1);
        assert_eq!(fused.iter().map(|f| f.index).collect::<Vec<_>>(), [1, 2, 0, 3]);
        // Naming every speaker gives no one a bonus.
        let both = fuse("Did Caroline and Melanie paint?", &rows, &config, 10);
        assert_eq!(both[0].index, 0);
    }

    #[test]
    fn best_few_are_the_head_of_the_full_ranking() {
        let config = RetrievalConfig { min_relevance: 0.0, ..Default::default() };
        // Deterministic pseudo-random signals with ties.
        let mut state = 7_u64;
        let mut next = move || {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (state >> 40) as f64 / f64::from(1 << 24)
        };
        let rows: Vec<RowSignal> = (0..500)
            .map(|i| {
                let speaker = if i % 3 == 0 { Some("Caroline") } else { Some("Melanie") };
                row((next() * 8.0).floor(), (next() * 10.0).floor() / 10.0, speaker)
            })
            .collect();
        let rows = signals(rows);
        let all = fuse("Caroline hiking", &rows, &config, rows.rows.len());
        assert!(all.windows(2).all(|w| w[0].score >= w[1].score));
        for limit in [0, 1, 7, 40, 499] {
            assert_eq!(fuse("Caroline hiking", &rows, &config, limit), all[..limit.min(all.len())]);
        }
    }

    #[test]
    fn a_shared_word_weighs_the_same_in_a_notebook_of_any_size() {
        // Among unrelated records that match no word: one sharing a word with the query (BM25
        // 3), the same record without it, and one that means what the query means (cosine
        // 0.7) with no word in common. What the word adds does not depend on how many records
        // there are, and the paraphrase ranks first at every size.
        let config = RetrievalConfig { min_relevance: 0.0, ..Default::default() };
        let scores = |unrelated: usize| {
            let mut rows = vec![row(3.0, 0.15, None), row(0.0, 0.15, None), row(0.0, 0.7, None)];
            // Unrelated cosines spread as the prior's (mean 0.189, standard deviation 0.104).
            let spread = |i: usize| 0.189 + 0.104 * 1.5f64.sqrt() * ((i % 3) as f64 - 1.0);
            rows.extend((0..unrelated).map(|i| row(0.0, spread(i), None)));
            let limit = rows.len();
            let fused = fuse("what do I drink", &signals(rows), &config, limit);
            let score = |index: usize| fused.iter().find(|f| f.index == index).unwrap().score;
            (score(0) - score(1), score(2) - score(0))
        };
        let (word, _) = scores(9);
        for unrelated in [9, 99, 999, 9_999] {
            let (added, lead) = scores(unrelated);
            assert!((added - word).abs() < 1e-9, "{unrelated}: the word adds {added}, not {word}");
            assert!(lead > 0.0, "{unrelated}: the paraphrase trails by {lead}");
        }
    }

    #[test]
    fn a_question_about_the_user_prefers_what_the_user_said_of_themselves() {
        // The same words and meaning, once in the user's own voice and once in a note about
        // someone else: asked about the user, the first ranks first; asked about Ines, the
        // bonus does not apply and the two tie.
        let config = RetrievalConfig { min_relevance: 0.0, ..Default::default() };
        let rows = vec![row(3.0, 0.5, None), RowSignal { of_self: true, ..row(3.0, 0.5, None) }];
        let fused = fuse("What language am I learning?", &signals(rows.clone()), &config, 2);
        assert_eq!(fused[0].index, 1);
        assert!((fused[0].score - fused[1].score - config.self_bonus).abs() < 1e-9);
        let fused = fuse("What language is Ines learning?", &signals(rows), &config, 2);
        assert!((fused[0].score - fused[1].score).abs() < 1e-9);
    }

    #[test]
    fn a_record_holding_the_kind_of_answer_asked_for_ranks_first() {
        // Both share the question's word "report" equally; only the second names someone,
        // which "who" asks for. A question that asks for no kind ranks them alike.
        let config = RetrievalConfig { min_relevance: 0.0, ..Default::default() };
        let texts = [
            "I need to get a quarterly report done by Friday soon",
            "My report goes to Dana Okafor, my manager",
        ];
        let rows: Vec<RowSignal> = texts
            .iter()
            .map(|t| RowSignal { answers: crate::answer::answer_kinds(t), ..row(3.0, 0.5, None) })
            .collect();
        let fused = fuse("Who do I report to?", &signals(rows.clone()), &config, 2);
        assert_eq!(fused[0].index, 1);
        assert!((fused[0].score - fused[1].score - config.answer_kind_bonus).abs() < 1e-9);
        let fused = fuse("What is my report about?", &signals(rows), &config, 2);
        assert!((fused[0].score - fused[1].score).abs() < 1e-9);
    }

    #[test]
    fn candidates_with_population_statistics_rank_as_all_rows() {
        let config = RetrievalConfig { min_relevance: 0.0, ..Default::default() };
        let all = signals([
            row(0.0, 0.1, Some("Jon")),
            row(4.0, 0.6, Some("Caroline")),
            row(0.0, 0.05, None),
            row(1.0, 0.7, Some("Melanie")),
            row(0.0, 0.0, Some("Melanie")),
        ]);
        let full = fuse("Did Caroline go?", &all, &config, 2);
        let mut population = Population { speakers_present: vec![true; 3], ..Default::default() };
        for r in &all.rows {
            population.semantic.add(r.cosine);
        }
        let candidates = Signals {
            rows: vec![all.rows[1].clone(), all.rows[3].clone()],
            speakers: SPEAKERS.to_vec(),
            population: Some(population),
        };
        let picked = fuse("Did Caroline go?", &candidates, &config, 2);
        assert_eq!(full.iter().map(|f| f.index).collect::<Vec<_>>(), [1, 3]);
        assert_eq!(picked.iter().map(|f| f.index).collect::<Vec<_>>(), [0, 1]);
        for (a, b) in full.iter().zip(&picked) {
            assert!((a.score - b.score).abs() < 1e-12);
        }
    }

    #[test]
    fn a_cosine_prior_moves_the_evidence_scale_with_it() {
        let default = RetrievalConfig::default();
        let (mean, std) = default.cosine_prior;
        assert_eq!(default.for_cosine_prior(mean, std), default);
        // A model whose unrelated texts score 0.05 ± 0.06: the same standard score passes.
        let other = default.for_cosine_prior(0.05, 0.06);
        let z = |c: f64, (m, s): (f64, f64)| (c - m) / s;
        for cosine in [0.1, 0.28, 0.5] {
            let same = 0.05 + z(cosine, (mean, std)) * 0.06;
            assert!((default.evidence(0.0, cosine) - other.evidence(0.0, same)).abs() < 1e-9);
        }
    }

    #[test]
    fn an_agents_question_about_the_user_reads_as_the_users_own() {
        let cases = [
            ("What city does the user live in?", "What city does I live in?"),
            ("Who is the user's employer?", "Who is my employer?"),
            ("How does the user take their coffee?", "How does I take my coffee?"),
            ("Does the user have allergies? Ask them.", "Does I have allergies? Ask me."),
            ("user home city", "my home city"),
            ("USER\u{2019}S  favourite band", "my  favourite band"),
            ("(the user)", "(I)"),
            ("user", "I"),
        ];
        for (query, read) in cases {
            assert_eq!(as_the_user_says_it(query), read, "{query}");
        }
        // A query that does not speak of the user is left as it is, "their" and all.
        for query in
            ["Where did Caroline and their friends go?", "reset a user's password", "", "?"]
        {
            assert_eq!(as_the_user_says_it(query), query);
        }
    }

    #[test]
    fn an_embedder_that_separates_answers_better_gets_a_larger_semantic_share() {
        let default = RetrievalConfig::default();
        let total = default.lexical_weight + default.semantic_weight;
        // The reference separation leaves the weights as they are.
        let same = default.for_answer_separation(REFERENCE_ANSWER_SEPARATION);
        assert!((same.semantic_weight - default.semantic_weight).abs() < 1e-12);
        // Twice the separation: semantic 0.4 × 2 against lexical 0.6, kept to their sum.
        let sharper = default.for_answer_separation(2.0 * REFERENCE_ANSWER_SEPARATION);
        assert!((sharper.semantic_weight - 0.8 / 1.4).abs() < 1e-12);
        assert!((sharper.lexical_weight + sharper.semantic_weight - total).abs() < 1e-12);
        // A weaker one leans on full text, never below a quarter of the ratio.
        let weaker = default.for_answer_separation(0.5 * REFERENCE_ANSWER_SEPARATION);
        assert!(weaker.semantic_weight < default.semantic_weight);
        let floor = default.for_answer_separation(0.25 * REFERENCE_ANSWER_SEPARATION);
        assert_eq!(default.for_answer_separation(0.01), floor);
        // A separation that says nothing changes nothing.
        for nothing in [0.0, -1.0, f64::NAN] {
            assert_eq!(default.for_answer_separation(nothing), default);
        }
    }

    #[test]
    fn relevance_mapping_is_monotone_in_unit_range() {
        let config = RetrievalConfig::default();
        let values: Vec<f64> =
            [-2.0, 0.0, 1.0, 3.0, 10.0].iter().map(|f| config.relevance(*f)).collect();
        assert!(values.windows(2).all(|w| w[0] <= w[1]));
        assert!(values.iter().all(|v| (0.0..1.0).contains(v)));
    }
}
