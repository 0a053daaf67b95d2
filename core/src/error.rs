//! One error type for everything `core` can refuse. Every variant reads as a sentence a person
//! can act on: the page shows `to_string()` as it is.

use thiserror::Error;

/// Errors from loading checkpoints, tokenizing and running the model.
#[derive(Debug, Error)]
pub enum Error {
    /// `config.json` is not valid JSON or lacks a field BERT needs.
    #[error("config.json could not be read: {0}")]
    Config(String),

    /// The configuration is well-formed but describes something we cannot build.
    #[error("config.json describes an unsupported model: {0}")]
    UnsupportedConfig(String),

    /// The safetensors file is truncated, has a corrupt header, or is not safetensors at all.
    #[error("model.safetensors could not be read: {0}")]
    Weights(String),

    /// Tensors the model needs are not in the checkpoint.
    #[error("the checkpoint is missing {} tensor(s) the model needs: {}", .0.len(), list(.0))]
    MissingTensors(Vec<String>),

    /// The checkpoint has tensors this model does not know.
    #[error("the checkpoint has {} tensor(s) this BERT does not know: {}", .0.len(), list(.0))]
    UnknownTensors(Vec<String>),

    /// Tensors exist but their shapes (or dtypes) disagree with `config.json`.
    #[error("the checkpoint disagrees with config.json: {}", .0.join("; "))]
    ShapeMismatch(Vec<String>),

    /// `tokenizer.json` / `vocab.txt` is absent or malformed.
    #[error("the tokenizer could not be loaded: {0}")]
    Tokenizer(String),

    /// Input text that cannot be encoded (for example, empty after normalisation).
    #[error("{0}")]
    Input(String),

    /// Reading results back from the device failed (for example, a lost GPU device).
    #[error("the compute device failed: {0}")]
    Device(String),

    /// Training cannot start or had to stop (NaN loss, nothing to train on, ...).
    #[error("{0}")]
    Training(String),
}

fn list(names: &[String]) -> String {
    const SHOWN: usize = 8;
    let mut out = names.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > SHOWN {
        out.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    out
}

/// Shorthand for results in this crate.
pub type Result<T> = std::result::Result<T, Error>;
