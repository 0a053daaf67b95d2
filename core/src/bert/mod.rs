//! BERT itself, one file per module of a Hugging Face checkpoint: configuration, the families
//! that share its architecture (RoBERTa, DistilBERT, ALBERT, MPNet...), embeddings,
//! self-attention, relative position bias, DeBERTa's disentangled attention and convolution, rotary positions, ModernBERT's layer, the encoder stack, the model with its pooler, pooling, and loading and saving
//! checkpoints. Built from [`crate::nn`]; knows nothing of tasks or training.

pub mod attention;
pub mod checkpoint;
pub mod config;
pub mod deberta_conv;
pub mod disentangled_attention;
pub mod embeddings;
pub mod encoder;
pub mod folder;
pub mod family;
pub mod model;
pub mod modernbert_layer;
pub mod pooling;
pub mod quantized;
pub mod relative_bias;
pub mod rotary;
