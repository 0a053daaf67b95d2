//! Sentence embeddings and per-token states, read back to the host.
//!
//! Every read-back is `async`: on WebGPU a synchronous read would block the browser's only
//! thread. Natively, drive these futures with any executor (`pollster::block_on`).

use burn::prelude::*;
use serde::Serialize;

use crate::checkpoint::Bert;
use crate::error::{Error, Result};
use crate::model::{BertInput, ForwardOptions};
use crate::pooling::{Pooling, l2_normalize};
use crate::tokenizer::{Batch, Encoded};

/// Reads a float tensor back to the host, row-major.
pub async fn read_f32<const D: usize>(tensor: Tensor<D>) -> Result<Vec<f32>> {
    let data = tensor
        .into_data_async()
        .await
        .map_err(|e| Error::Device(format!("{e:?}")))?;
    data.try_to_vec::<f32>().map_err(|e| Error::Device(format!("{e:?}")))
}

/// Sentence vectors for a list of texts.
#[derive(Debug, Clone, Serialize)]
pub struct SentenceEmbeddings {
    /// The tokenization of each text.
    pub encoded: Vec<Encoded>,
    /// One vector per text, `hidden_size` long.
    pub vectors: Vec<Vec<f32>>,
}

/// How to embed.
#[derive(Debug, Clone, Copy)]
pub struct EmbedOptions {
    /// `[CLS]` or mean pooling of the last layer.
    pub pooling: Pooling,
    /// Scale each vector to unit length (sentence-transformers does for MiniLM).
    pub normalize: bool,
    /// Texts per forward pass.
    pub batch_size: usize,
}

impl Default for EmbedOptions {
    fn default() -> Self {
        Self { pooling: Pooling::Mean, normalize: false, batch_size: 32 }
    }
}

impl Bert {
    /// Tokenizes each text; the first failure names the text's position.
    pub fn encode_all(&self, texts: &[String]) -> Result<Vec<Encoded>> {
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                self.tokenizer.encode(t).map_err(|e| match e {
                    Error::Input(m) if texts.len() > 1 => Error::Input(format!("text {}: {m}", i + 1)),
                    other => other,
                })
            })
            .collect()
    }

    /// Embeds texts, `options.batch_size` at a time.
    pub async fn embed(&self, texts: &[String], options: EmbedOptions, device: &Device) -> Result<SentenceEmbeddings> {
        let encoded = self.encode_all(texts)?;
        let mut vectors = Vec::with_capacity(texts.len());
        let hidden = self.config.hidden_size;
        for chunk in encoded.chunks(options.batch_size.max(1)) {
            let batch = Batch::from_encoded(chunk, self.tokenizer.pad_id);
            let input = BertInput::from_batch(&batch, device);
            let mask = input.attention_mask.clone();
            let out = self.model.forward(input, ForwardOptions::default());
            let mut pooled = options.pooling.apply(&out, mask)?;
            if options.normalize {
                pooled = l2_normalize(pooled);
            }
            let flat = read_f32(pooled).await?;
            if flat.iter().any(|x| !x.is_finite()) {
                return Err(Error::Device("the model produced NaN or infinite values".into()));
            }
            vectors.extend(flat.chunks(hidden).map(<[f32]>::to_vec));
        }
        Ok(SentenceEmbeddings { encoded, vectors })
    }
}
