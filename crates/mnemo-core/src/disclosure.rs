//! The self-disclosure selector: a small logistic model that decides whether a user's message
//! tells something about the user worth keeping (a fact, preference, plan, relationship or
//! event), from the message's distilled static embedding (`minilm-l6-m2v-256`, which the
//! built-in model was fitted from) and a few structural features
//! (first-person density, questions, declarative first-person sentences, length).
//!
//! The shipped weights (`models/extractor/disclosure.json`) are trained by
//! `cargo xtask train-disclosure` on the LoCoMo dev half's observations: a turn that an
//! annotator drew an observation from is a positive, every other turn a negative. Training is
//! plain full-batch gradient descent in `f64`, in a fixed order, so the same data gives the
//! same bytes.

use serde::{Deserialize, Serialize};

/// Number of structural features appended to the embedding.
pub const STRUCTURAL_FEATURES: usize = 17;

/// First-person singular words.
const FIRST_PERSON: &[&str] =
    &["i", "i'm", "i've", "i'd", "i'll", "im", "me", "my", "mine", "myself"];
/// First-person plural words (the user's team, family or company).
const FIRST_PLURAL: &[&str] = &["we", "we're", "we've", "we'll", "our", "ours", "us"];
/// Second-person words (talk about the listener rather than the speaker).
const SECOND_PERSON: &[&str] = &["you", "your", "you're", "you've", "yours", "u"];
/// Words that mark a past event or a change.
const EVENT_WORDS: &[&str] = &[
    "was", "went", "did", "got", "had", "made", "took", "started", "finished", "just", "been",
    "joined", "moved", "bought", "began", "became", "visited", "adopted", "signed",
];

/// Whether a text has a first-person word, singular or plural (it speaks of its author or
/// the author's team, family or company).
pub(crate) fn speaks_of_self(text: &str) -> bool {
    words(text)
        .iter()
        .any(|w| FIRST_PERSON.contains(&w.as_str()) || FIRST_PLURAL.contains(&w.as_str()))
}

/// Whether a text has a second-person word: it speaks to the listener ("your answer is my
/// favourite"), not of a thing of the speaker's.
pub(crate) fn addresses_the_listener(text: &str) -> bool {
    words(text).iter().any(|w| SECOND_PERSON.contains(&w.as_str()))
}

/// Lower-cased words of a text (letters, digits and apostrophes; typographic apostrophes
/// folded to `'`).
pub(crate) fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '\u{2019}'))
        .filter(|w| !w.is_empty())
        .map(|w| w.replace('\u{2019}', "'").to_lowercase())
        .collect()
}

/// Structural features of a message, each scaled to about 0..1.
pub fn structural_features(text: &str) -> [f32; STRUCTURAL_FEATURES] {
    let all = words(text);
    let n = all.len().max(1) as f32;
    let count =
        |list: &[&str], ws: &[String]| ws.iter().filter(|w| list.contains(&w.as_str())).count();
    let first = count(FIRST_PERSON, &all) as f32;
    let plural = count(FIRST_PLURAL, &all) as f32;
    let second = count(SECOND_PERSON, &all) as f32;
    let events = count(EVENT_WORDS, &all) as f32;
    let sentences = crate::extract::sentences(text);
    let total = sentences.len().max(1) as f32;
    let declarative: Vec<&(String, bool)> = sentences.iter().filter(|(_, q)| !q).collect();
    let about_self: Vec<usize> = declarative
        .iter()
        .map(|(s, _)| words(s))
        .filter(|ws| count(FIRST_PERSON, ws) + count(FIRST_PLURAL, ws) > 0)
        .map(|ws| ws.len())
        .collect();
    let self_words: usize = about_self.iter().sum();
    let longest_self = about_self.iter().copied().max().unwrap_or(0) as f32;
    let flag = |b: bool| if b { 1.0 } else { 0.0 };
    let trimmed = text.trim_end();
    [
        first / n,
        first.min(5.0) / 5.0,
        plural / n,
        second / n,
        second.min(5.0) / 5.0,
        flag(text.contains('?')),
        flag(trimmed.ends_with('?')),
        (text.matches('!').count() as f32).min(3.0) / 3.0,
        (1.0 + n).ln() / 4.0,
        flag(all.len() < 6),
        events / n,
        declarative.len() as f32 / total,
        about_self.len() as f32 / total,
        (about_self.len() as f32).min(4.0) / 4.0,
        (1.0 + self_words as f32).ln() / 4.0,
        (longest_self / 20.0).min(2.0),
        flag(declarative.len() == sentences.len()),
    ]
}

/// A trained selector: standardisation, weights and the decision threshold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Selector {
    /// Name and version of the weights.
    pub version: String,
    /// Embedding width the weights expect (the structural features follow it).
    pub embedding_dims: usize,
    /// Per-feature mean over the training set.
    pub mean: Vec<f32>,
    /// Per-feature standard deviation over the training set.
    pub scale: Vec<f32>,
    /// Per-feature weight (on standardised features).
    pub weights: Vec<f32>,
    /// Intercept.
    pub bias: f32,
    /// Probability at or above which a message is selected.
    pub threshold: f32,
}

/// Why weights could not be used.
#[derive(Debug, thiserror::Error)]
pub enum SelectorError {
    /// The weights file is not valid JSON of the expected shape.
    #[error("disclosure weights: {0}")]
    Parse(#[from] serde_json::Error),
    /// The vectors' lengths disagree with the declared widths.
    #[error("disclosure weights: expected {expected} features, found {found}")]
    Shape {
        /// Embedding width plus the structural features.
        expected: usize,
        /// The length found.
        found: usize,
    },
}

/// How to train a selector.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrainConfig {
    /// L2 penalty on the weights (not the bias).
    pub l2: f64,
    /// Gradient-descent step.
    pub learning_rate: f64,
    /// Full-batch steps.
    pub steps: usize,
    /// Decision threshold stored with the weights.
    pub threshold: f32,
}

impl Default for TrainConfig {
    fn default() -> Self {
        Self { l2: 0.3, learning_rate: 0.1, steps: 300, threshold: 0.42 }
    }
}

/// The full feature vector: the embedding followed by the structural features.
pub fn features(text: &str, embedding: &[f32]) -> Vec<f32> {
    let mut all = embedding.to_vec();
    all.extend_from_slice(&structural_features(text));
    all
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

impl Selector {
    /// The shipped weights.
    pub fn builtin() -> &'static Selector {
        static BUILTIN: std::sync::OnceLock<Selector> = std::sync::OnceLock::new();
        BUILTIN.get_or_init(|| {
            // The file is part of the build; a malformed one fails the unit tests below.
            Selector::from_json(include_str!("../../../models/extractor/disclosure.json"))
                .unwrap_or_else(|_| Selector::never())
        })
    }

    /// A selector that selects nothing (what a build without usable weights falls back to).
    pub fn never() -> Selector {
        Selector {
            version: "none".into(),
            embedding_dims: 0,
            mean: vec![0.0; STRUCTURAL_FEATURES],
            scale: vec![1.0; STRUCTURAL_FEATURES],
            weights: vec![0.0; STRUCTURAL_FEATURES],
            bias: -1.0,
            threshold: 1.0,
        }
    }

    /// Reads weights from JSON, checking their shape.
    pub fn from_json(text: &str) -> Result<Selector, SelectorError> {
        let s: Selector = serde_json::from_str(text)?;
        let expected = s.embedding_dims + STRUCTURAL_FEATURES;
        for found in [s.mean.len(), s.scale.len(), s.weights.len()] {
            if found != expected {
                return Err(SelectorError::Shape { expected, found });
            }
        }
        Ok(s)
    }

    /// The weights as pretty JSON with a trailing newline (the shipped file's format).
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Probability that a message discloses something about its author, from its text and
    /// its distilled static embedding. An embedding of the wrong width counts as zeros.
    pub fn probability(&self, text: &str, embedding: &[f32]) -> f32 {
        let structural = structural_features(text);
        let embedding = if embedding.len() == self.embedding_dims { embedding } else { &[] };
        let mut z = f64::from(self.bias);
        for (i, w) in self.weights.iter().enumerate() {
            let x = if i < self.embedding_dims {
                embedding.get(i).copied().unwrap_or(0.0)
            } else {
                structural[i - self.embedding_dims]
            };
            z +=
                f64::from(*w) * (f64::from(x) - f64::from(self.mean[i])) / f64::from(self.scale[i]);
        }
        sigmoid(z) as f32
    }

    /// Whether a probability clears the threshold.
    pub fn selects(&self, probability: f32) -> bool {
        probability >= self.threshold
    }

    /// Trains a selector on feature vectors (from [`features`]) with 0/1 labels.
    pub fn train(
        version: &str,
        embedding_dims: usize,
        examples: &[(Vec<f32>, bool)],
        config: TrainConfig,
    ) -> Selector {
        let width = embedding_dims + STRUCTURAL_FEATURES;
        let n = examples.len().max(1) as f64;
        let mut mean = vec![0.0_f64; width];
        for (x, _) in examples {
            for (m, v) in mean.iter_mut().zip(x) {
                *m += f64::from(*v) / n;
            }
        }
        let mut var = vec![0.0_f64; width];
        for (x, _) in examples {
            for ((s, v), m) in var.iter_mut().zip(x).zip(&mean) {
                *s += (f64::from(*v) - m).powi(2) / n;
            }
        }
        let scale: Vec<f64> = var.iter().map(|v| v.sqrt() + 1e-6).collect();
        let standard: Vec<Vec<f64>> = examples
            .iter()
            .map(|(x, _)| {
                x.iter().zip(&mean).zip(&scale).map(|((v, m), s)| (f64::from(*v) - m) / s).collect()
            })
            .collect();
        let mut weights = vec![0.0_f64; width];
        let mut bias = 0.0_f64;
        for _ in 0..config.steps {
            let mut grad = vec![0.0_f64; width];
            let mut grad_bias = 0.0;
            for (x, (_, label)) in standard.iter().zip(examples) {
                let z = bias + x.iter().zip(&weights).map(|(a, b)| a * b).sum::<f64>();
                let error = sigmoid(z) - if *label { 1.0 } else { 0.0 };
                for (g, v) in grad.iter_mut().zip(x) {
                    *g += error * v;
                }
                grad_bias += error;
            }
            for (w, g) in weights.iter_mut().zip(&grad) {
                *w -= config.learning_rate * (g / n + config.l2 * *w);
            }
            bias -= config.learning_rate * grad_bias / n;
        }
        Selector {
            version: version.to_owned(),
            embedding_dims,
            mean: mean.iter().map(|v| *v as f32).collect(),
            scale: scale.iter().map(|v| *v as f32).collect(),
            weights: weights.iter().map(|v| *v as f32).collect(),
            bias: bias as f32,
            threshold: config.threshold,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_weights_load_and_have_the_declared_shape() {
        let text = include_str!("../../../models/extractor/disclosure.json");
        let s = Selector::from_json(text).unwrap();
        assert_eq!(s.weights.len(), s.embedding_dims + STRUCTURAL_FEATURES);
        assert_eq!(Selector::builtin(), &s);
        assert!(s.threshold > 0.0 && s.threshold < 1.0);
    }

    #[test]
    fn a_wrong_shape_is_an_error_naming_the_widths() {
        let mut s = Selector::never();
        s.weights.pop();
        let err = Selector::from_json(&s.to_json()).unwrap_err();
        assert_eq!(err.to_string(), "disclosure weights: expected 17 features, found 16");
    }

    #[test]
    fn training_separates_a_separable_set_and_is_deterministic() {
        let examples: Vec<(Vec<f32>, bool)> = [
            ("I work as a nurse in Oslo and I love chess.", true),
            ("My daughter's name is Maya.", true),
            ("We moved to Kraków last year, I teach maths there.", true),
            ("What do you think about that?", false),
            ("Wow, that's amazing!", false),
            ("How are you?", false),
        ]
        .iter()
        .map(|(t, y)| (features(t, &[]), *y))
        .collect();
        let config = TrainConfig { steps: 200, ..TrainConfig::default() };
        let a = Selector::train("t", 0, &examples, config);
        let b = Selector::train("t", 0, &examples, config);
        assert_eq!(a.to_json(), b.to_json());
        assert!(a.probability("I live in Leeds and I work at the hospital.", &[]) > 0.5);
        assert!(a.probability("Are you sure?", &[]) < 0.5);
    }

    #[test]
    fn features_never_panic_on_odd_text() {
        for text in ["", "?", "İ i teach ömath", "\u{200b}\u{0}", "مرحبا أنا", "👍👍", "é\u{301}"]
        {
            let f = structural_features(text);
            assert!(f.iter().all(|v| v.is_finite()), "{text:?}: {f:?}");
        }
    }
}
