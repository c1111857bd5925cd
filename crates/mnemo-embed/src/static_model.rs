//! A static embedding model: one int8-quantised vector per WordPiece token (with a per-row
//! scale); a text's vector is the mean of its tokens' vectors, L2-normalised.
//!
//! File format (`embeddings.bin`): ASCII `M2V1`, u32 LE vocabulary size, u32 LE dimensions,
//! then per token id: f32 LE scale and `dims` int8 values (value = int8 × scale).

use std::sync::{Arc, OnceLock};

use mnemo_core::ErrorKind;
use mnemo_core::calibration::{Calibration, calibrate_embedder};
use mnemo_core::ports::{Embedder, PortError};

use crate::wordpiece::WordPiece;

/// Token ids never pooled: `[PAD]`, `[UNK]`, `[CLS]`, `[SEP]`, `[MASK]`.
const SKIP_IDS: [u32; 5] = [0, 100, 101, 102, 103];

/// Why a model file could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The embeddings file is malformed.
    #[error("embeddings file: {0}")]
    BadEmbeddings(&'static str),
    /// The vocabulary does not match the embeddings.
    #[error("vocabulary: {0}")]
    BadVocabulary(String),
}

/// A loaded static embedding model.
#[derive(Debug)]
pub struct StaticModel {
    id: String,
    tokenizer: WordPiece,
    dims: usize,
    /// Rows of `4 + dims` bytes: f32 scale, then int8 values.
    rows: &'static [u8],
    /// Its calibration, from its vectors of the calibration sentences.
    calibration: Option<Calibration>,
}

impl StaticModel {
    /// Loads a model from its embeddings and vocabulary. `id` names model and version.
    pub fn load(id: &str, embeddings: &'static [u8], vocab: &str) -> Result<Self, ModelError> {
        let header = embeddings.get(..12).ok_or(ModelError::BadEmbeddings("truncated header"))?;
        if &header[..4] != b"M2V1" {
            return Err(ModelError::BadEmbeddings("bad magic"));
        }
        let word = |at: usize| {
            u32::from_le_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
        };
        let (vocab_size, dims) = (word(4) as usize, word(8) as usize);
        let rows = &embeddings[12..];
        if dims == 0 || rows.len() != vocab_size * (4 + dims) {
            return Err(ModelError::BadEmbeddings("size does not match header"));
        }
        let tokenizer = WordPiece::from_vocab(vocab, "[UNK]")
            .ok_or_else(|| ModelError::BadVocabulary("no [UNK] token".into()))?;
        if tokenizer.len() != vocab_size {
            return Err(ModelError::BadVocabulary(format!(
                "{} tokens for {vocab_size} embedding rows",
                tokenizer.len()
            )));
        }
        let mut model = Self { id: id.to_owned(), tokenizer, dims, rows, calibration: None };
        model.calibration =
            calibrate_embedder(|texts| texts.iter().map(|t| model.embed_text(t)).collect());
        Ok(model)
    }

    /// The built-in model, compiled into the binary; loaded once per process.
    #[cfg(feature = "builtin")]
    pub fn builtin() -> Result<Arc<Self>, PortError> {
        static MODEL: OnceLock<Result<Arc<StaticModel>, String>> = OnceLock::new();
        Self::compiled_in(
            &MODEL,
            "minilm-l6-fit-256",
            include_bytes!("../../../models/minilm-l6-fit-256/embeddings.bin"),
            include_str!("../../../models/minilm-l6-fit-256/vocab.txt"),
        )
    }

    /// The distilled table the built-in model was fitted from (`minilm-l6-m2v-256`: each
    /// token's row is what all-MiniLM-L6-v2 says of the token alone), compiled into the
    /// binary; loaded once per process. The self-disclosure selector was trained on its
    /// vectors and reads them, whatever embedder a notebook searches with.
    #[cfg(feature = "builtin")]
    pub fn distilled() -> Result<Arc<Self>, PortError> {
        static MODEL: OnceLock<Result<Arc<StaticModel>, String>> = OnceLock::new();
        Self::compiled_in(
            &MODEL,
            "minilm-l6-m2v-256",
            include_bytes!("../../../models/minilm-l6-m2v-256/embeddings.bin"),
            include_str!("../../../models/minilm-l6-m2v-256/vocab.txt"),
        )
    }

    /// A model compiled into the binary, loaded into `cell` on first use.
    #[cfg(feature = "builtin")]
    fn compiled_in(
        cell: &'static OnceLock<Result<Arc<StaticModel>, String>>,
        id: &str,
        embeddings: &'static [u8],
        vocab: &str,
    ) -> Result<Arc<Self>, PortError> {
        cell.get_or_init(|| {
            StaticModel::load(id, embeddings, vocab).map(Arc::new).map_err(|e| e.to_string())
        })
        .clone()
        .map_err(|message| PortError::new(ErrorKind::Internal, format!("model {id}: {message}")))
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &WordPiece {
        &self.tokenizer
    }

    /// Adds token `id`'s vector to `sum`.
    fn accumulate(&self, id: u32, sum: &mut [f32]) {
        let width = 4 + self.dims;
        let start = id as usize * width;
        let Some(row) = self.rows.get(start..start + width) else { return };
        let scale = f32::from_le_bytes([row[0], row[1], row[2], row[3]]);
        for (acc, &q) in sum.iter_mut().zip(&row[4..]) {
            *acc += f32::from(q as i8) * scale;
        }
    }

    /// Embeds one text: mean of its pooled tokens' vectors, L2-normalised (zeros when no
    /// token is left).
    pub fn embed_text(&self, text: &str) -> Vec<f32> {
        let mut sum = vec![0.0_f32; self.dims];
        let mut count = 0usize;
        for id in self.tokenizer.encode(text) {
            if SKIP_IDS.contains(&id) {
                continue;
            }
            self.accumulate(id, &mut sum);
            count += 1;
        }
        if count == 0 {
            return sum;
        }
        let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            sum.iter_mut().for_each(|x| *x /= norm);
        }
        sum
    }
}

impl Embedder for StaticModel {
    fn id(&self) -> &str {
        &self.id
    }

    fn dims(&self) -> usize {
        self.dims
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, PortError> {
        Ok(texts.iter().map(|t| self.embed_text(t)).collect())
    }

    fn calibration(&self) -> Option<&Calibration> {
        self.calibration.as_ref()
    }
}

#[cfg(all(test, feature = "builtin"))]
mod tests {
    use super::*;

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    proptest::proptest! {
        /// Any text (control and format characters, NUL, zero-width joiners, combining
        /// marks, right-to-left scripts and emoji included) tokenizes to ids inside the
        /// vocabulary and embeds to a finite vector of the model's width, unit length or all
        /// zeros.
        #[test]
        fn any_text_tokenizes_and_embeds(text in "(?s).{0,80}") {
            let model = StaticModel::builtin().unwrap();
            let ids = model.tokenizer().encode(&text);
            proptest::prop_assert!(ids.iter().all(|&id| (id as usize) < model.tokenizer().len()));
            let v = model.embed_text(&text);
            proptest::prop_assert_eq!(v.len(), model.dims);
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            proptest::prop_assert!(norm == 0.0 || (norm - 1.0).abs() < 1e-4, "norm {}", norm);
        }
    }

    /// The default fusion weights were set for the distilled table the built-in model was
    /// fitted from; the fitted model tells answers apart better, so it never gets less than
    /// the default semantic share.
    #[test]
    fn the_builtin_model_separates_answers_at_least_as_well_as_the_reference() {
        let model = StaticModel::builtin().unwrap();
        let separation = model.calibration().unwrap().answer_separation.unwrap();
        let reference = mnemo_core::retrieval::REFERENCE_ANSWER_SEPARATION;
        assert!(separation >= reference, "{separation} against {reference}");
    }

    /// The Rust tokenizer and pooling reproduce the reference implementation's fixtures.
    #[test]
    fn matches_reference_fixtures() {
        let model = StaticModel::builtin().unwrap();
        let fixtures: serde_json::Value =
            serde_json::from_str(include_str!("../../../models/minilm-l6-fit-256/fixtures.json"))
                .unwrap();
        let cases = fixtures["fixtures"].as_array().unwrap();
        assert!(cases.len() >= 8);
        for case in cases {
            let text = case["text"].as_str().unwrap();
            let ids: Vec<u32> = case["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap() as u32)
                .collect();
            assert_eq!(model.tokenizer().encode(text), ids, "token ids of {text:?}");
            let vector = model.embed_text(text);
            for (i, expected) in case["embedding_first8"].as_array().unwrap().iter().enumerate() {
                let expected = expected.as_f64().unwrap() as f32;
                assert!(
                    (vector[i] - expected).abs() < 1e-5,
                    "{text:?} dim {i}: {} vs {expected}",
                    vector[i]
                );
            }
            let sum: f32 = vector.iter().sum();
            let expected_sum = case["embedding_sum"].as_f64().unwrap() as f32;
            assert!((sum - expected_sum).abs() < 1e-3, "{text:?} sum {sum} vs {expected_sum}");
        }
    }

    /// Calibrating the built-in model puts its relevance gate at the standard scores of
    /// unrelated texts where the default configuration puts it.
    #[test]
    fn the_builtin_models_gate_sits_where_the_default_puts_it() {
        let model = StaticModel::builtin().unwrap();
        let default = mnemo_core::retrieval::RetrievalConfig::default();
        let config = default.for_calibration(model.calibration().unwrap());
        let (mean, std) = model.calibration().unwrap().raw_cosine_prior;
        let (m0, s0) = default.cosine_prior;
        let z = (config.cosine_floor - mean) / std;
        assert!((z - (default.cosine_floor - m0) / s0).abs() < 1e-9, "{z}");
    }

    #[test]
    fn similar_sentences_are_closer_than_unrelated_ones() {
        let model = StaticModel::builtin().unwrap();
        let tea = model.embed_text("I prefer green tea in the morning");
        let tea2 = model.embed_text("In the morning I like to drink green tea");
        let car = model.embed_text("The mechanic replaced the car's brake pads");
        assert!(cosine(&tea, &tea2) > cosine(&tea, &car) + 0.2);
        assert_eq!(model.dims(), 256);
        let norm: f32 = tea.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4);
        assert!(model.embed_text("").iter().all(|&x| x == 0.0));
    }
}
