//! # bertbench-core
//!
//! BERT in [burn], with no web types: the browser app (`app/`) and the command line both drive
//! this crate and get plain Rust values back. The crate is layered; each layer imports only the
//! ones above it in this list, never one below:
//!
//! - [`error`], [`rng`], [`cpu`]: errors, a seeded generator, helpers of the CPU kernels
//! - [`tokenizer`]: WordPiece through the `tokenizers` crate, padded batches, length order
//! - [`data`]: labeled text from CSV, TSV and JSON Lines; columns, validation, stratified splits
//! - [`nn`]: dense layers (a SIMD kernel in wasm, a tiled one on GPUs), GELU, LayerNorm,
//!   attention's masked softmax, dropout; tensor read-back
//! - [`bert`]: configuration, embeddings, attention, encoder, `BertModel`, pooling, checkpoints
//! - [`tasks`]: one module per task head (classification, MLM/NSP/SOP pretraining), with their
//!   losses, metrics and export names
//! - [`train`]: AdamW, schedules, clipping, snapshots, and the step-at-a-time runs (fine-tuning,
//!   pretraining)
//! - [`analysis`]: what the explorer reads out (embeddings, layer states, attention, maps,
//!   probes, similarity)
//! - [`device_check`]: the same tiny model on two devices, forward and one training step
//!
//! The compute device is chosen at run time (`burn::prelude::Device`): `Device::flex()` on the
//! CPU, a wgpu device for WebGPU/Vulkan/Metal.

pub mod analysis;
pub mod bert;
pub mod cpu;
pub mod data;
pub mod device_check;
pub mod error;
pub mod nn;
pub mod rng;
pub mod tasks;
#[cfg(test)]
mod test_util;
pub mod tokenizer;
pub mod train;

pub use burn;
pub use bert::checkpoint::{CheckpointFiles, LoadReport, LoadedModel};
pub use bert::config::{BertConfig, Preset};
pub use bert::pooling::Pooling;
pub use error::{Error, Result};
