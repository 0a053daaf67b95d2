//! Sentence embeddings and per-token states, read back to the host.
//!
//! Every read-back is `async`: on WebGPU a synchronous read would block the browser's only
//! thread. Natively, drive these futures with any executor (`pollster::block_on`).

use burn::prelude::*;

use crate::bert::checkpoint::LoadedModel;
use crate::error::{Error, Result};
use crate::bert::model::{ForwardOptions, rows_by_length};
use crate::bert::pooling::{Pooling, l2_normalize};
use crate::tokenizer::Encoded;

/// Sentence vectors for a list of texts.
#[derive(Debug, Clone)]
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

impl LoadedModel {
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

    /// Embeds texts, `options.batch_size` at a time. Texts are batched in order of length, so
    /// each batch pads to a length close to its texts' own (a text's vector does not depend on
    /// its batch: padding is masked); vectors come back in the order of `texts`.
    pub async fn embed(&self, texts: &[String], options: EmbedOptions, device: &Device) -> Result<SentenceEmbeddings> {
        let encoded = self.encode_all(texts)?;
        let vectors = rows_by_length(&encoded, self.tokenizer.pad_id, options.batch_size, device, |input| {
            let mask = input.attention_mask.clone();
            let out = self.model.forward(input, ForwardOptions::default());
            let pooled = options.pooling.apply(&out, mask)?;
            Ok(if options.normalize { l2_normalize(pooled) } else { pooled })
        })
        .await?;
        Ok(SentenceEmbeddings { encoded, vectors })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::tiny_bert;
    use crate::tokenizer::by_length;

    #[test]
    fn batches_by_length_and_returns_vectors_in_input_order() {
        let (bert, device) = tiny_bert();
        let texts: Vec<String> = ["the river bank . the money . a loan", "money", "the river bank", "a loan"].map(String::from).to_vec();
        let options = EmbedOptions { batch_size: 2, ..Default::default() };
        let together = pollster::block_on(bert.embed(&texts, options, &device)).unwrap();
        let encoded = bert.encode_all(&texts).unwrap();
        let order = by_length(&encoded);
        assert_eq!(order, vec![1, 3, 2, 0]);
        for (i, text) in texts.iter().enumerate() {
            let alone = pollster::block_on(bert.embed(std::slice::from_ref(text), options, &device)).unwrap();
            let diff = alone.vectors[0].iter().zip(&together.vectors[i]).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
            assert!(diff < 1e-5, "text {i}: {diff}");
            assert_eq!(together.encoded[i].tokens.len(), encoded[i].tokens.len());
        }
    }
}
