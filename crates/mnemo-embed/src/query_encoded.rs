//! An embedder whose queries are encoded by all-MiniLM-L6-v2 and whose records by the static
//! model fitted to it.
//!
//! Records are embedded on the write path, thousands a second, where only a static model's
//! cost fits; a search embeds one short query, where a transformer's few milliseconds do.
//! The static model `minilm-l6-fit-256` is fitted so that the mean of a sentence's token rows
//! approximates MiniLM's vector of the sentence, so the two live in nearly one space: a
//! linear map (`models/fit_query_map.py`, least squares over the fit's corpus) takes MiniLM's
//! 384 dimensions onto the static model's 256. A query then carries MiniLM's reading of the
//! whole question (word order, which word the question is about) against records as stored.
//!
//! The same encoder refines records after they are written ([`Embedder::refine`]): off the
//! write path, a stored record's static vector is replaced by MiniLM's, mapped like a query's.
//!
//! The query encoder is loaded, and the pair calibrated, when first needed: writing and
//! listing never pay for it.

use std::sync::{Arc, OnceLock};

use mnemo_core::ErrorKind;
use mnemo_core::calibration::{Calibration, calibrate_embedder_with_queries};
use mnemo_core::ports::{Embedder, PortError};

use crate::{MiniLm, StaticModel};

/// Loads the query encoder.
type LoadQueries = fn() -> Result<Arc<MiniLm>, PortError>;

/// Static records, MiniLM queries mapped into the records' space.
#[derive(Debug)]
pub struct QueryEncoded {
    records: Arc<StaticModel>,
    queries: OnceLock<Result<Arc<MiniLm>, String>>,
    load_queries: LoadQueries,
    /// Row-major `query dims × record dims`.
    map: Vec<f32>,
    map_rows: usize,
    calibration: OnceLock<Option<Calibration>>,
}

/// The built-in pair's calibration as [`QueryEncoded::computed_calibration`] gives it,
/// written by `cargo xtask codegen` (which checks it is current): shipped so that a process's
/// first search does not encode the 132 calibration texts with MiniLM first.
#[cfg(feature = "builtin-queries")]
const BUILTIN_CALIBRATION: &[u8] =
    include_bytes!("../../../models/minilm-l6-fit-256/query_calibration.bin");

impl QueryEncoded {
    /// A record model, the map between the models (`QMP1` file: magic, u32 LE rows and
    /// columns, then f32 LE rows), and a query model loaded by `load_queries` when a query is
    /// first embedded or the calibration first asked for.
    fn lazy(
        records: Arc<StaticModel>,
        load_queries: LoadQueries,
        map: &[u8],
    ) -> Result<Self, PortError> {
        let bad = |why: &str| PortError::new(ErrorKind::Internal, format!("query map: {why}"));
        if map.len() < 12 || &map[..4] != b"QMP1" {
            return Err(bad("bad magic"));
        }
        let word = |at: usize| u32::from_le_bytes([map[at], map[at + 1], map[at + 2], map[at + 3]]);
        let (rows, columns) = (word(4) as usize, word(8) as usize);
        if columns != records.dims() {
            return Err(bad(&format!(
                "{columns} columns for {} record dimensions",
                records.dims()
            )));
        }
        if map.len() != 12 + rows * columns * 4 {
            return Err(bad("size does not match header"));
        }
        let map = map[12..]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        Ok(Self {
            records,
            queries: OnceLock::new(),
            load_queries,
            map,
            map_rows: rows,
            calibration: OnceLock::new(),
        })
    }

    /// The built-in embedder: the built-in static model for records, the built-in int8
    /// all-MiniLM-L6-v2 for queries (loaded at the first query), and the map fitted between
    /// them (`models/minilm-l6-fit-256/query_map.bin`).
    #[cfg(feature = "builtin-queries")]
    pub fn builtin() -> Result<Arc<Self>, PortError> {
        static MODEL: OnceLock<Result<Arc<QueryEncoded>, String>> = OnceLock::new();
        MODEL
            .get_or_init(|| Self::builtin_unshared().map(Arc::new))
            .clone()
            .map_err(|message| PortError::new(ErrorKind::Internal, message))
    }

    /// A new instance of the built-in embedder, its shipped calibration set.
    #[cfg(feature = "builtin-queries")]
    fn builtin_unshared() -> Result<Self, String> {
        let records = StaticModel::builtin().map_err(|e| e.to_string())?;
        let model = Self::lazy(
            records,
            MiniLm::builtin,
            include_bytes!("../../../models/minilm-l6-fit-256/query_map.bin"),
        )
        .map_err(|e| e.to_string())?;
        let shipped = Calibration::from_bytes(BUILTIN_CALIBRATION)
            .map_err(|e| format!("models/minilm-l6-fit-256/query_calibration.bin: {e}"))?;
        model.calibration.get_or_init(|| Some(shipped));
        Ok(model)
    }

    /// The query encoder, loaded on first use.
    fn query_model(&self) -> Result<&Arc<MiniLm>, PortError> {
        let loaded = self.queries.get_or_init(|| {
            let model = (self.load_queries)().map_err(|e| e.to_string())?;
            if model.dims() != self.map_rows {
                return Err(format!(
                    "query map: {} rows for {} query dimensions",
                    self.map_rows,
                    model.dims()
                ));
            }
            Ok(model)
        });
        loaded.as_ref().map_err(|message| PortError::new(ErrorKind::Internal, message.clone()))
    }

    fn encode_queries(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, PortError> {
        let columns = self.records.dims();
        let encoded = self.query_model()?.embed(texts)?;
        Ok(encoded
            .iter()
            .map(|q| {
                let mut out = vec![0.0_f32; columns];
                for (x, row) in q.iter().zip(self.map.chunks_exact(columns)) {
                    for (o, m) in out.iter_mut().zip(row) {
                        *o += x * m;
                    }
                }
                let norm = out.iter().map(|a| a * a).sum::<f32>().sqrt();
                if norm > 0.0 {
                    out.iter_mut().for_each(|a| *a /= norm);
                }
                out
            })
            .collect())
    }

    /// The pair's calibration computed from the encoder: queries against records as a refined
    /// notebook holds them (the encoder's vectors, as queries are). `None` when the query
    /// encoder cannot be loaded.
    pub fn computed_calibration(&self) -> Option<Calibration> {
        self.query_model().ok()?;
        let encoded = |texts: &[&str]| self.encode_queries(texts).unwrap_or_default();
        calibrate_embedder_with_queries(&encoded, Some(&encoded))
    }
}

impl Embedder for QueryEncoded {
    fn id(&self) -> &str {
        self.records.id()
    }

    fn dims(&self) -> usize {
        self.records.dims()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, PortError> {
        self.records.embed(texts)
    }

    fn embed_queries(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, PortError> {
        self.encode_queries(texts)
    }

    /// Records again by the query encoder, mapped like queries: the static model's vector
    /// approximates this one, so both live in one space and a notebook may hold either.
    fn refine(&self, texts: &[&str]) -> Option<Result<Vec<Vec<f32>>, PortError>> {
        if texts.is_empty() {
            return Some(Ok(Vec::new()));
        }
        Some(self.encode_queries(texts))
    }

    /// The pair's calibration ([`QueryEncoded::computed_calibration`]; the built-in pair
    /// ships it, computed ahead); the records' own when the query encoder cannot be loaded,
    /// as searches then fail anyway.
    fn calibration(&self) -> Option<&Calibration> {
        self.calibration
            .get_or_init(|| {
                if self.query_model().is_err() {
                    return self.records.calibration().cloned();
                }
                self.computed_calibration()
            })
            .as_ref()
    }

    fn record_calibration(&self) -> Option<&Calibration> {
        self.records.calibration()
    }
}

#[cfg(all(test, feature = "builtin-queries"))]
mod tests {
    use super::*;

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn records_are_the_static_models_and_queries_load_only_when_asked() {
        let records = StaticModel::builtin().unwrap();
        let embedder = QueryEncoded::lazy(
            records.clone(),
            MiniLm::builtin,
            include_bytes!("../../../models/minilm-l6-fit-256/query_map.bin"),
        )
        .unwrap();
        let text = "On weekends I enjoy rock climbing.";
        assert_eq!(embedder.embed(&[text]).unwrap(), records.embed(&[text]).unwrap());
        assert_eq!(embedder.id(), records.id());
        assert_eq!(embedder.record_calibration(), records.calibration());
        assert!(embedder.queries.get().is_none(), "writing needs no query encoder");
        assert_eq!(embedder.refine(&[]).unwrap().unwrap(), Vec::<Vec<f32>>::new());
        assert!(embedder.queries.get().is_none(), "asking whether it refines loads nothing");
        let query = embedder.embed_queries(&["What hobbies do I have?"]).unwrap().remove(0);
        assert!(embedder.queries.get().is_some());
        let refined = embedder.refine(&[text]).unwrap().unwrap();
        assert_eq!(refined, embedder.embed_queries(&[text]).unwrap(), "a record as a query");
        assert_eq!(query.len(), records.dims());
        assert!((cosine(&query, &query) - 1.0).abs() < 1e-4);
        // Searches are calibrated against records as refined; writes against the static ones.
        let calibration = embedder.calibration().unwrap();
        assert_eq!(calibration.common.len(), records.dims());
        assert_ne!(calibration.common, records.calibration().unwrap().common);
        assert!(calibration.answer_separation.is_some());
    }

    #[test]
    fn the_shipped_calibration_is_the_encoders_and_loads_nothing() {
        let embedder = QueryEncoded::builtin_unshared().unwrap();
        let shipped = embedder.calibration().unwrap().clone();
        assert!(embedder.queries.get().is_none(), "the shipped calibration needs no encoder");
        let computed = embedder.computed_calibration().unwrap();
        assert!(
            shipped.agrees_with(&computed, 1e-4),
            "models/minilm-l6-fit-256/query_calibration.bin is out of date: run `cargo xtask codegen`"
        );
        assert_ne!(shipped.common, embedder.record_calibration().unwrap().common);
    }

    #[test]
    fn a_question_read_as_a_whole_finds_its_answer() {
        let embedder = QueryEncoded::builtin().unwrap();
        let statements = [
            "On weekends I enjoy rock climbing.",
            "My favourite food is tacos.",
            "I work as a pharmacist at the hospital.",
            "I'm allergic to peanuts.",
        ];
        let records = embedder.embed(&statements).unwrap();
        for (question, answer) in [
            ("What hobbies do I have?", 0),
            ("What do I like to eat?", 1),
            ("What is my job?", 2),
            ("user allergies", 3),
        ] {
            let query = embedder.embed_queries(&[question]).unwrap().remove(0);
            let best = (0..records.len())
                .max_by(|&a, &b| {
                    cosine(&query, &records[a]).total_cmp(&cosine(&query, &records[b]))
                })
                .unwrap();
            assert_eq!(best, answer, "{question}");
        }
    }

    #[test]
    fn a_map_of_the_wrong_shape_is_refused() {
        let records = StaticModel::builtin().unwrap();
        let mut map = b"QMP1".to_vec();
        map.extend_from_slice(&384u32.to_le_bytes());
        map.extend_from_slice(&128u32.to_le_bytes());
        map.extend(std::iter::repeat_n(0u8, 384 * 128 * 4));
        let message = QueryEncoded::lazy(records.clone(), MiniLm::builtin, &map).unwrap_err();
        assert!(message.to_string().contains("128 columns for 256 record dimensions"), "{message}");
        let message = QueryEncoded::lazy(records, MiniLm::builtin, b"QMP0").unwrap_err();
        assert!(message.to_string().contains("bad magic"), "{message}");
    }
}
