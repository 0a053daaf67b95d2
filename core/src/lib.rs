//! # bertbench-core
//!
//! BERT in [burn], with no web types: the browser app (`app/`) and the command line both drive
//! this crate and get plain Rust values back. One file per idea of a BERT lecture:
//!
//! - [`config`]: hyper-parameters from `config.json`, size presets, parameter counts
//! - [`embeddings`]: token + segment + position embeddings
//! - [`dropout`]: dropout with masks from a per-thread seeded generator, for split batches
//! - [`linear`]: dense layers, their matrix product per backend (a SIMD kernel in wasm)
//! - [`activation`]: GELU, branch-free (SIMD) on the CPU
//! - [`layer_norm`]: LayerNorm, with a one-pass backward on the CPU
//! - [`softmax`]: attention's scaled, masked softmax, with a one-pass backward on the CPU
//! - [`attention`]: multi-head self-attention returning its weights; padding and causal masks
//! - [`encoder`]: the layer stack
//! - [`model`]: `BertModel` = embeddings → encoder → pooler
//! - [`pooling`]: `[CLS]` and mean pooling
//! - [`heads`]: task heads (classification, masked-language model with a tied decoder)
//! - [`classifier`]: BERT + features + head; Hugging Face classifier folders in and out
//! - [`train`]: fine-tuning (head-only, full, freeze-then-unfreeze), AdamW, schedules
//! - [`masking`]: MLM masking (15 %: 80/10/10) and NSP/SOP sentence pairs
//! - [`pretrain`]: `BertForPreTraining`, a step-at-a-time MLM (+ NSP/SOP) loop, fill-mask
//! - [`tokenizer`]: WordPiece through the `tokenizers` crate, padded batches
//! - [`checkpoint`]: Hugging Face checkpoints in and out, from bytes
//! - [`inference`]: sentence embeddings, read back asynchronously (WebGPU needs it)
//! - [`similarity`]: cosine similarity
//! - [`inspect`]: every layer's token vectors, attention maps, input-representation parts,
//!   static vectors
//! - [`projection`]: PCA and t-SNE maps; Embedding Projector TSV files
//! - [`probe`]: linear probes, nearest-centroid senses, anisotropy, linear CKA
//! - [`examples`]: the explorer's built-in sentences (word senses, topics) and sampling
//! - [`device_check`]: the same tiny model on two devices, forward and one training step
//! - [`data`]: labeled text from CSV, TSV and JSON Lines; column guessing, validation, stratified
//!   splits
//! - [`metrics`]: accuracy, per-class precision/recall/F1, macro-F1, confusion matrix
//! - [`rng`]: a small seeded random generator for splits, shuffles and masking
//!
//! The compute device is chosen at run time (`burn::prelude::Device`): `Device::flex()` on the
//! CPU, a wgpu device for WebGPU/Vulkan/Metal.

pub mod activation;
pub mod attention;
pub mod checkpoint;
pub mod classifier;
pub mod config;
pub mod data;
pub mod device_check;
pub mod dropout;
pub mod embeddings;
pub mod encoder;
pub mod error;
pub mod examples;
pub mod heads;
pub mod inference;
pub mod inspect;
pub mod layer_norm;
pub mod linear;
pub mod masking;
pub mod metrics;
pub mod model;
pub mod pooling;
pub mod pretrain;
pub mod probe;
pub mod projection;
pub mod rng;
pub mod similarity;
pub mod softmax;
pub mod tokenizer;
pub mod train;

pub use burn;
pub use checkpoint::{Bert, CheckpointFiles, LoadReport};
pub use config::{BertConfig, Preset};
pub use error::{Error, Result};
pub use pooling::Pooling;
