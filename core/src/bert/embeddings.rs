//! Input representation: token + segment + position embeddings, then LayerNorm and dropout.
//! DistilBERT has no segment table; RoBERTa's positions start after its padding id; ModernBERT
//! has neither segments nor a position table (its positions are rotary, in attention) and its
//! LayerNorm no bias.

use burn::nn::{Dropout, DropoutConfig, Embedding, EmbeddingConfig, Initializer};
use burn::prelude::*;

use crate::bert::config::BertConfig;
use crate::nn::dropout;
use crate::nn::layer_norm::LayerNorm;

/// Configuration of [`BertEmbeddings`].
#[derive(Config, Debug)]
pub struct BertEmbeddingsConfig {
    /// Vocabulary size.
    pub vocab_size: usize,
    /// Longest sequence (number of learned positions).
    pub max_position_embeddings: usize,
    /// Number of segments (0: no segment table, as DistilBERT).
    pub type_vocab_size: usize,
    /// Width of the embeddings (`embedding_size` where it is narrower than the encoder).
    pub hidden_size: usize,
    /// LayerNorm epsilon.
    #[config(default = 1e-12)]
    pub layer_norm_eps: f64,
    /// Dropout after the LayerNorm.
    #[config(default = 0.1)]
    pub dropout: f64,
    /// Standard deviation of the normal initialiser.
    #[config(default = 0.02)]
    pub initializer_range: f64,
    /// The first position id (RoBERTa: `pad_token_id + 1`).
    #[config(default = 0)]
    pub position_offset: usize,
    /// Whether there is a learned position table (not where positions are rotary).
    #[config(default = true)]
    pub position_table: bool,
    /// Whether the LayerNorm has a bias.
    #[config(default = true)]
    pub norm_bias: bool,
    /// Whether the position table is added to the input: not under BERT's relative distances,
    /// whose checkpoints keep the table, unused (see [`BertConfig::adds_positions`]).
    #[config(default = true)]
    pub adds_positions: bool,
}

impl BertEmbeddingsConfig {
    /// The embeddings part of a model configuration.
    pub fn from_model(config: &BertConfig) -> Self {
        Self::new(
            config.vocab_size,
            config.max_position_embeddings,
            config.type_vocab_size,
            config.embedding_width(),
        )
        .with_layer_norm_eps(config.layer_norm_eps)
        .with_dropout(config.hidden_dropout_prob)
        .with_initializer_range(config.initializer_range)
        .with_position_offset(config.model_type.position_offset(config.pad_token_id))
        .with_position_table(config.position_table())
        .with_norm_bias(config.norm_bias())
        .with_adds_positions(config.adds_positions())
    }

    /// Creates the module with freshly initialised weights.
    pub fn init(&self, device: &Device) -> BertEmbeddings {
        let init = Initializer::Normal { mean: 0.0, std: self.initializer_range };
        let table = |rows: usize| {
            EmbeddingConfig::new(rows, self.hidden_size)
                .with_initializer(init.clone())
                .init(device)
        };
        BertEmbeddings {
            word_embeddings: table(self.vocab_size),
            position_embeddings: self.position_table.then(|| table(self.max_position_embeddings)),
            token_type_embeddings: (self.type_vocab_size > 0).then(|| table(self.type_vocab_size)),
            layer_norm: LayerNorm::with_bias(self.hidden_size, self.layer_norm_eps, self.norm_bias, device),
            dropout: DropoutConfig::new(self.dropout).init(),
            position_offset: self.position_offset,
            adds_positions: self.adds_positions,
        }
    }
}

/// The parts of the input representation, kept apart for the teaching views.
#[derive(Debug, Clone)]
pub struct EmbeddingParts {
    /// Token (WordPiece) embeddings, `[batch, seq, hidden]`.
    pub token: Tensor<3>,
    /// Segment embeddings, `[batch, seq, hidden]` (zeros for a family without segments).
    pub segment: Tensor<3>,
    /// Position embeddings, `[1, seq, hidden]` (the same for every row; zeros where positions
    /// are rotary, or relative, in attention).
    pub position: Tensor<3>,
}

/// BERT's embedding layer. Field names follow the Hugging Face checkpoint
/// (`embeddings.word_embeddings.weight`, ...; `LayerNorm` is `layer_norm` here).
#[derive(Module, Debug)]
pub struct BertEmbeddings {
    /// One row per WordPiece id.
    pub word_embeddings: Embedding,
    /// One row per position `0..max_position_embeddings`; none where positions are rotary.
    pub position_embeddings: Option<Embedding>,
    /// One row per segment (0 = sentence A, 1 = sentence B); none in DistilBERT.
    pub token_type_embeddings: Option<Embedding>,
    /// Normalises the sum.
    pub layer_norm: LayerNorm,
    /// Applied after the LayerNorm while training.
    pub dropout: Dropout,
    /// The first position id.
    #[module(skip)]
    position_offset: usize,
    /// Whether the position table is added (see [`BertEmbeddingsConfig::adds_positions`]).
    #[module(skip)]
    adds_positions: bool,
}

impl BertEmbeddings {
    /// Embeds a batch of token ids.
    ///
    /// # Shapes
    /// - `input_ids`: `[batch, seq]`
    /// - `token_type_ids`: `[batch, seq]`
    /// - output: `[batch, seq, hidden]`
    ///
    /// `seq` must not exceed the config's `max_len()`; the tokenizer truncates to it.
    pub fn forward(&self, input_ids: Tensor<2, Int>, token_type_ids: Tensor<2, Int>) -> Tensor<3> {
        let parts = self.parts(input_ids, token_type_ids);
        let summed = parts.token + parts.segment + parts.position;
        dropout::forward(&self.dropout, self.layer_norm.forward(summed))
    }

    /// The three embeddings before they are summed and normalised.
    ///
    /// # Shapes
    /// - `input_ids`, `token_type_ids`: `[batch, seq]`
    /// - output: see [`EmbeddingParts`]
    pub fn parts(&self, input_ids: Tensor<2, Int>, token_type_ids: Tensor<2, Int>) -> EmbeddingParts {
        let [batch, seq] = input_ids.dims();
        let device = input_ids.device();
        let start = self.position_offset as i64;
        let positions = Tensor::<1, Int>::arange(start..start + seq as i64, &device).reshape([1, seq]);
        let token = self.word_embeddings.forward(input_ids);
        // A one-row segment table (RoBERTa) has only segment 0, whatever ids a pair encoding
        // carries, as `transformers` gives it.
        let segment = match &self.token_type_embeddings {
            Some(table) if table.weight.dims()[0] == 1 => table.forward(token_type_ids.zeros_like()),
            Some(table) => table.forward(token_type_ids),
            None => Tensor::zeros([batch, seq, token.dims()[2]], &device),
        };
        let position = match &self.position_embeddings {
            Some(table) if self.adds_positions => table.forward(positions),
            _ => Tensor::zeros([1, seq, token.dims()[2]], &device),
        };
        EmbeddingParts { token, segment, position }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::TensorData;

    #[test]
    fn output_is_layer_normalised_sum_of_three_tables() {
        let device = Device::flex();
        let emb = BertEmbeddingsConfig::new(10, 8, 2, 4).with_dropout(0.0).init(&device);
        let ids = Tensor::<2, Int>::from_data(TensorData::new(vec![1i64, 5, 7], [1, 3]), &device);
        let types = Tensor::<2, Int>::from_data(TensorData::new(vec![0i64, 0, 1], [1, 3]), &device);
        let out = emb.forward(ids.clone(), types.clone());
        assert_eq!(out.dims(), [1, 3, 4]);

        // By hand: row 2 is word[7] + type[1] + position[2], normalised.
        let w = emb.word_embeddings.weight.val().into_data().try_to_vec::<f32>().unwrap();
        let t = emb.token_type_embeddings.as_ref().unwrap().weight.val().into_data().try_to_vec::<f32>().unwrap();
        let p = emb.position_embeddings.as_ref().unwrap().weight.val().into_data().try_to_vec::<f32>().unwrap();
        let sum: Vec<f32> = (0..4).map(|k| w[7 * 4 + k] + t[4 + k] + p[2 * 4 + k]).collect();
        let mean = sum.iter().sum::<f32>() / 4.0;
        let var = sum.iter().map(|x| (x - mean).powi(2)).sum::<f32>() / 4.0;
        let expected: Vec<f32> = sum.iter().map(|x| (x - mean) / (var + 1e-12).sqrt()).collect();
        let got = out.into_data().try_to_vec::<f32>().unwrap();
        for k in 0..4 {
            assert!((got[8 + k] - expected[k]).abs() < 1e-4, "{got:?} vs {expected:?}");
        }
    }

    #[test]
    fn positions_start_at_the_offset_and_a_missing_segment_table_adds_nothing() {
        let device = Device::flex();
        let emb = BertEmbeddingsConfig::new(10, 8, 0, 4).with_dropout(0.0).with_position_offset(2).init(&device);
        assert!(emb.token_type_embeddings.is_none());
        let ids = Tensor::<2, Int>::from_data(TensorData::new(vec![1i64, 5], [1, 2]), &device);
        let parts = emb.parts(ids.clone(), ids.zeros_like());
        let p = emb.position_embeddings.as_ref().unwrap().weight.val().into_data().try_to_vec::<f32>().unwrap();
        let got = parts.position.into_data().try_to_vec::<f32>().unwrap();
        assert_eq!(got, p[2 * 4..4 * 4].to_vec());
        assert!(parts.segment.into_data().try_to_vec::<f32>().unwrap().iter().all(|&v| v == 0.0));
    }
}
