//! Real tokenizers for token budgets: OpenAI's `cl100k_base` and `o200k_base` BPE encodings
//! (tiktoken), loaded once per process.

use std::str::FromStr;
use std::sync::OnceLock;

use mnemo_core::context::TokenCounter;
use mnemo_core::error::InvalidInput;
use tiktoken_rs::CoreBPE;

/// Which encoding to count with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenizerName {
    /// GPT-4 / GPT-3.5 encoding.
    Cl100k,
    /// GPT-4o and later encoding.
    O200k,
}

impl FromStr for TokenizerName {
    type Err = InvalidInput;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim() {
            "cl100k" | "cl100k_base" => Ok(Self::Cl100k),
            "o200k" | "o200k_base" => Ok(Self::O200k),
            other => Err(InvalidInput::new(
                "tokenizer",
                format!("unknown tokenizer `{other}` (expected cl100k or o200k)"),
            )),
        }
    }
}

/// A tiktoken encoding used as a [`TokenCounter`].
pub struct Tokenizer {
    name: TokenizerName,
    bpe: &'static CoreBPE,
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokenizer").field("name", &self.name).finish()
    }
}

impl Tokenizer {
    /// Loads (once per process) the named encoding.
    pub fn new(name: TokenizerName) -> Result<Self, crate::Error> {
        static CL100K: OnceLock<Option<CoreBPE>> = OnceLock::new();
        static O200K: OnceLock<Option<CoreBPE>> = OnceLock::new();
        let slot = match name {
            TokenizerName::Cl100k => CL100K.get_or_init(|| tiktoken_rs::cl100k_base().ok()),
            TokenizerName::O200k => O200K.get_or_init(|| tiktoken_rs::o200k_base().ok()),
        };
        let bpe = slot.as_ref().ok_or_else(|| {
            crate::Error::Port(mnemo_core::ports::PortError::new(
                mnemo_core::ErrorKind::Internal,
                format!("tokenizer {name:?} failed to load"),
            ))
        })?;
        Ok(Self { name, bpe })
    }
}

impl TokenCounter for Tokenizer {
    fn count(&self, text: &str) -> usize {
        self.bpe.encode_ordinary(text).len()
    }

    fn name(&self) -> &str {
        match self.name {
            TokenizerName::Cl100k => "cl100k_base",
            TokenizerName::O200k => "o200k_base",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_like_tiktoken() {
        let cl = Tokenizer::new(TokenizerName::Cl100k).unwrap();
        assert_eq!(cl.count("hello world"), 2);
        assert_eq!(cl.count(""), 0);
        let o = Tokenizer::new(TokenizerName::O200k).unwrap();
        assert_eq!(o.count("hello world"), 2);
        assert!("gpt2".parse::<TokenizerName>().is_err());
    }
}
