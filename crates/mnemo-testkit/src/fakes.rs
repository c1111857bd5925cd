//! Fakes for logic tests. They are deterministic and need no model; they say nothing about
//! retrieval quality.

use mnemo_core::ports::{Embedder, PortError};

/// A deterministic embedder for logic tests: hashes lowercase words into `dims` buckets.
/// Identical texts get identical vectors; texts sharing no word are orthogonal.
#[derive(Debug, Clone)]
pub struct FakeEmbedder {
    dims: usize,
}

impl FakeEmbedder {
    /// A fake of `dims` dimensions.
    pub fn new(dims: usize) -> Self {
        Self { dims }
    }
}

impl Embedder for FakeEmbedder {
    fn id(&self) -> &str {
        "fake-words"
    }

    fn dims(&self) -> usize {
        self.dims
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, PortError> {
        Ok(texts
            .iter()
            .map(|text| {
                let mut v = vec![0.0_f32; self.dims];
                for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
                    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
                    for b in word.to_lowercase().bytes() {
                        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
                    }
                    v[(h % self.dims as u64) as usize] += 1.0;
                }
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                if norm > 0.0 {
                    v.iter_mut().for_each(|x| *x /= norm);
                }
                v
            })
            .collect())
    }
}
