//! What the explorer reads out of a model, on the host: sentence embeddings, every layer's states
//! and attention, PCA and t-SNE maps, probes, similarity, zero-shot prompting with an MLM head,
//! and the built-in example sentences.

pub mod analogy;
pub mod embed;
pub mod inspect;
pub mod probe;
pub mod prompting;
pub mod projection;
pub mod samples;
pub mod similarity;
pub mod translations;
pub mod word_probe;
