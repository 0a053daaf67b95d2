//! `BertModel`: embeddings → encoder → (optional) pooler, as Hugging Face's `BertModel`.

use burn::nn::Linear;
use burn::prelude::*;
use burn::tensor::TensorData;

use crate::nn::layer_norm::LayerNorm;
use crate::bert::attention::{AttentionMask, additive_mask};
use crate::nn::linear::init_linear;
use crate::nn::linear::linear;
use crate::bert::config::BertConfig;
use crate::bert::embeddings::{BertEmbeddings, BertEmbeddingsConfig};
use crate::bert::family::Family;
use crate::bert::encoder::{BertEncoder, BertEncoderConfig};
use crate::error::Error;
use crate::nn::read_f32;
use crate::tokenizer::{Batch, Encoded, by_length};

/// The HF pooler: `tanh(dense(h_[CLS]))`, trained by next-sentence prediction. A DistilBERT
/// classifier's `pre_classifier` is the same with ReLU; ModernBERT's classifier `head` pools the
/// first token or the mean of the tokens, and normalises after the activation.
#[derive(Module, Debug)]
pub struct BertPooler {
    /// `hidden → hidden`.
    pub dense: Linear,
    /// What follows the dense layer.
    #[module(skip)]
    pub activation: PoolerActivation,
    /// A LayerNorm after the activation (ModernBERT's `head.norm`).
    pub norm: Option<LayerNorm>,
    /// Whether it reads the mean of the real tokens rather than the first token (ModernBERT's
    /// `classifier_pooling: "mean"`).
    #[module(skip)]
    pub mean: bool,
}

pub use crate::bert::family::PoolerActivation;

impl BertPooler {
    /// A pooler with BERT's `tanh`.
    pub fn new(dense: Linear) -> Self {
        Self::with_activation(dense, PoolerActivation::Tanh)
    }

    /// `activation(dense(h_[CLS]))`.
    pub fn with_activation(dense: Linear, activation: PoolerActivation) -> Self {
        Self { dense, activation, norm: None, mean: false }
    }

    /// # Shapes
    /// - `hidden`: `[batch, seq, hidden]`; `attention_mask`: `[batch, seq]`, 1 for real tokens
    /// - output: `[batch, hidden]`
    pub fn forward(&self, hidden: Tensor<3>, attention_mask: Tensor<2, Int>) -> Tensor<2> {
        let [batch, seq, width] = hidden.dims();
        let pooled = if self.mean {
            let weights = attention_mask.float().reshape([batch, seq, 1]);
            let summed = (hidden * weights.clone()).sum_dim(1).reshape([batch, width]);
            summed / weights.sum_dim(1).reshape([batch, 1])
        } else {
            hidden.slice([0..batch, 0..1, 0..width]).reshape([batch, width])
        };
        let x = linear(&self.dense, pooled);
        let x = self.activation.apply(x);
        match &self.norm {
            Some(norm) => norm.forward(x),
            None => x,
        }
    }
}

/// Configuration of [`BertModel`].
#[derive(Config, Debug)]
pub struct BertModelConfig {
    /// Hyper-parameters, as in `config.json`.
    pub bert: BertConfig,
    /// Whether to build the pooler (checkpoints without `pooler.*` tensors have none).
    #[config(default = true)]
    pub with_pooler: bool,
}

impl BertModelConfig {
    /// Creates the model with freshly initialised weights (normal, std `initializer_range`;
    /// LayerNorm at identity), as BERT is initialised before pre-training.
    pub fn init(&self, device: &Device) -> BertModel {
        let c = &self.bert;
        BertModel {
            embeddings: BertEmbeddingsConfig::from_model(c).init(device),
            embeddings_project: c
                .projects_embeddings()
                .then(|| init_linear(c.embedding_width(), c.hidden_size, c.initializer_range, device)),
            encoder: BertEncoderConfig::new(c.clone()).init(device),
            pooler: self.with_pooler.then(|| BertPooler::new(init_linear(c.hidden_size, c.hidden_size, c.initializer_range, device))),
            family: c.model_type,
        }
    }
}

/// A tokenized batch on a device.
#[derive(Debug, Clone)]
pub struct BertInput {
    /// WordPiece ids, `[batch, seq]`.
    pub input_ids: Tensor<2, Int>,
    /// Segment ids, `[batch, seq]`.
    pub token_type_ids: Tensor<2, Int>,
    /// 1 for real tokens, 0 for padding, `[batch, seq]`.
    pub attention_mask: Tensor<2, Int>,
}

impl BertInput {
    /// Moves a host-side [`Batch`] onto `device`.
    pub fn from_batch(batch: &Batch, device: &Device) -> Self {
        let shape = [batch.batch_size, batch.seq_len];
        let tensor = |v: &[i64]| Tensor::<2, Int>::from_data(TensorData::new(v.to_vec(), shape), device);
        Self {
            input_ids: tensor(&batch.input_ids),
            token_type_ids: tensor(&batch.token_type_ids),
            attention_mask: tensor(&batch.attention_mask),
        }
    }
}

/// What to compute besides the last hidden state.
#[derive(Debug, Clone, Copy, Default)]
pub struct ForwardOptions {
    /// Keep every layer's hidden state.
    pub hidden_states: bool,
    /// Keep every layer's attention probabilities.
    pub attentions: bool,
    /// Bidirectional (BERT) or causal (teaching comparison) attention.
    pub mask: AttentionMask,
}

/// What [`BertModel::forward`] hands back.
#[derive(Debug, Clone)]
pub struct BertModelOutput {
    /// `[batch, seq, hidden]`.
    pub last_hidden_state: Tensor<3>,
    /// `tanh(dense([CLS]))`, `[batch, hidden]`, when the model has a pooler.
    pub pooler_output: Option<Tensor<2>>,
    /// Embedding output then each layer's output (`L + 1` tensors), if asked for.
    pub hidden_states: Vec<Tensor<3>>,
    /// Each layer's attention probabilities `[batch, heads, seq, seq]`, if asked for.
    pub attentions: Vec<Tensor<4>>,
}

/// BERT: embeddings, encoder and pooler, with Hugging Face module names. RoBERTa and
/// DistilBERT are this model too (see [`Family`]).
#[derive(Module, Debug)]
pub struct BertModel {
    /// Token + segment + position embeddings.
    pub embeddings: BertEmbeddings,
    /// `embedding_size → hidden_size`, where the embeddings are narrower than the encoder
    /// (ELECTRA's `embeddings_project`, ALBERT's `encoder.embedding_hidden_mapping_in`).
    pub embeddings_project: Option<Linear>,
    /// The encoder stack.
    pub encoder: BertEncoder,
    /// The NSP-trained pooler, if the checkpoint has one.
    pub pooler: Option<BertPooler>,
    /// Which family's checkpoint names it is saved under.
    #[module(skip)]
    family: Family,
}

/// Runs `forward` over `encoded` in batches of `batch_size` taken shortest first, so each
/// batch pads to about its own length, and gives each text's row of the output back in the order
/// of `encoded` (a text's row does not depend on its batch: padding is masked). Refuses output
/// that is not finite, which only a broken device gives.
///
/// # Shapes
/// - `forward`: a batch's input → `[batch, width]`
/// - output: `encoded.len()` rows of `width` values
pub async fn rows_by_length(
    encoded: &[Encoded],
    pad_id: u32,
    batch_size: usize,
    device: &Device,
    mut forward: impl FnMut(BertInput) -> crate::Result<Tensor<2>>,
) -> crate::Result<Vec<Vec<f32>>> {
    let mut rows = vec![Vec::new(); encoded.len()];
    for indices in by_length(encoded).chunks(batch_size.max(1)) {
        let chunk: Vec<Encoded> = indices.iter().map(|&i| encoded[i].clone()).collect();
        let batch = Batch::from_encoded(&chunk, pad_id);
        let out = forward(BertInput::from_batch(&batch, device))?;
        let width = out.dims()[1];
        let values = read_f32(out).await?;
        if values.iter().any(|v| !v.is_finite()) {
            return Err(Error::Device("the model produced NaN or infinite outputs".into()));
        }
        for (&i, row) in indices.iter().zip(values.chunks_exact(width.max(1))) {
            rows[i] = row.to_vec();
        }
    }
    Ok(rows)
}

impl BertModel {
    /// Encodes a batch.
    ///
    /// # Shapes
    /// - input: each tensor of [`BertInput`] is `[batch, seq]`
    /// - output: see [`BertModelOutput`]
    pub fn forward(&self, input: BertInput, options: ForwardOptions) -> BertModelOutput {
        let attention_mask = input.attention_mask.clone();
        let mask = additive_mask(input.attention_mask, options.mask);
        let embedded = self.embed(input.input_ids, input.token_type_ids);
        let out = self.encoder.forward(embedded, mask, options.hidden_states, options.attentions);
        let pooler_output = self
            .pooler
            .as_ref()
            .map(|p| p.forward(out.last_hidden_state.clone(), attention_mask));
        BertModelOutput {
            last_hidden_state: out.last_hidden_state,
            pooler_output,
            hidden_states: out.hidden_states,
            attentions: out.attentions,
        }
    }

    /// The encoder's input: the embeddings, projected up to the encoder's width where they are
    /// narrower (`hidden_states[0]` in `transformers`).
    ///
    /// # Shapes
    /// - `input_ids`, `token_type_ids`: `[batch, seq]`
    /// - output: `[batch, seq, hidden]`
    pub fn embed(&self, input_ids: Tensor<2, Int>, token_type_ids: Tensor<2, Int>) -> Tensor<3> {
        let embedded = self.embeddings.forward(input_ids, token_type_ids);
        match &self.embeddings_project {
            Some(project) => linear(project, embedded),
            None => embedded,
        }
    }

    /// The model with only the encoder layers at depths `keep` (see
    /// [`BertEncoder::keep_layers`]); embeddings and pooler as they were.
    pub fn keep_layers(mut self, keep: &[usize]) -> crate::Result<Self> {
        self.encoder = self.encoder.keep_layers(keep)?;
        Ok(self)
    }

    /// The family whose checkpoint names the model is saved under.
    pub fn family(&self) -> Family {
        self.family
    }

    /// Number of encoder layers the input passes through, one hidden state and one attention
    /// map each (ALBERT's shared layers count at every depth, each layer of a group apart).
    pub fn num_layers(&self) -> usize {
        self.encoder.passes()
    }

    /// Width of the hidden states (the word embeddings' width, or the projection's output).
    pub fn hidden_size(&self) -> usize {
        match &self.embeddings_project {
            Some(project) => project.weight.dims()[1],
            None => self.embeddings.word_embeddings.weight.dims()[1],
        }
    }

    /// Width of the word embeddings: what a tied masked-language-model decoder reads.
    pub fn embedding_size(&self) -> usize {
        self.embeddings.word_embeddings.weight.dims()[1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bert::config::Preset;

    #[test]
    fn parameter_count_matches_the_config_formula() {
        let device = Device::flex();
        let config = Preset::Tiny.config(1000);
        let model = BertModelConfig::new(config.clone()).init(&device);
        assert_eq!(model.num_params() as u64, config.num_params(true));
        let model = BertModelConfig::new(config.clone()).with_with_pooler(false).init(&device);
        assert_eq!(model.num_params() as u64, config.num_params(false));
    }

    /// Narrower embeddings projected up (ELECTRA-small, ALBERT): the projection counts in the
    /// parameters, the hidden states are the encoder's width.
    #[test]
    fn narrower_embeddings_are_projected_to_the_encoder_width() {
        let device = Device::flex();
        let config = Preset::Tiny.config(50).with_model_type(Family::Electra).with_embedding_size(Some(32));
        let model = BertModelConfig::new(config.clone()).with_with_pooler(false).init(&device);
        assert_eq!((model.embedding_size(), model.hidden_size()), (32, 128));
        assert_eq!(model.num_params() as u64, config.num_params(false));
        let batch = Batch::from_rows(&[vec![2, 7, 3]], &[vec![0; 3]], 0);
        let options = ForwardOptions { hidden_states: true, ..Default::default() };
        let out = model.forward(BertInput::from_batch(&batch, &device), options);
        assert_eq!((out.last_hidden_state.dims(), out.hidden_states[0].dims()), ([1, 3, 128], [1, 3, 128]));
    }

    #[test]
    fn padding_does_not_change_real_tokens() {
        // The same sentence alone and padded to a longer batch must give the same states.
        let device = Device::flex();
        let config = Preset::Tiny.config(50).without_dropout();
        let model = BertModelConfig::new(config).init(&device);
        let alone = Batch::from_rows(&[vec![2, 7, 9, 3]], &[vec![0, 0, 0, 0]], 0);
        let padded = Batch::from_rows(
            &[vec![2, 7, 9, 3], vec![2, 4, 4, 4, 4, 3]],
            &[vec![0; 4], vec![0; 6]],
            0,
        );
        let a = model.forward(BertInput::from_batch(&alone, &device), ForwardOptions::default());
        let b = model.forward(BertInput::from_batch(&padded, &device), ForwardOptions::default());
        let a = a.last_hidden_state.into_data().try_to_vec::<f32>().unwrap();
        let b = b.last_hidden_state.into_data().try_to_vec::<f32>().unwrap();
        for (i, x) in a.iter().enumerate() {
            assert!((x - b[i]).abs() < 1e-5, "state {i}: {x} vs {}", b[i]);
        }
    }

    /// ModernBERT too: padding changes neither the global nor the local layers' states, and the
    /// local layers see no further than their window (a token's change moves nothing beyond it
    /// after one local layer).
    #[test]
    fn modernbert_padding_and_window() {
        use crate::bert::config::AttentionKind::SlidingAttention;
        let device = Device::flex();
        let config = Preset::Tiny.config(50).with_model_type(Family::ModernBert).with_type_vocab_size(0).without_dropout();
        let model = BertModelConfig::new(config.clone()).with_with_pooler(false).init(&device);
        assert_eq!(model.num_params() as u64, config.num_params(false));
        let alone = Batch::from_rows(&[vec![2, 7, 9, 3]], &[vec![0; 4]], 0);
        let padded = Batch::from_rows(&[vec![2, 7, 9, 3], vec![2, 4, 4, 4, 4, 3]], &[vec![0; 4], vec![0; 6]], 0);
        let states = |batch: &Batch| model.forward(BertInput::from_batch(batch, &device), ForwardOptions::default()).last_hidden_state.into_data().try_to_vec::<f32>().unwrap();
        let (a, b) = (states(&alone), states(&padded));
        assert!(a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-5));
        // One local layer that sees one token either side.
        let local = config.with_num_hidden_layers(1).with_layer_types(Some(vec![SlidingAttention])).with_local_attention(Some(2));
        let model = BertModelConfig::new(local).with_with_pooler(false).init(&device);
        let states = |ids: Vec<u32>| model.forward(BertInput::from_batch(&Batch::from_rows(&[ids], &[vec![0; 6]], 0), &device), ForwardOptions::default()).last_hidden_state.into_data().try_to_vec::<f32>().unwrap();
        let (a, b) = (states(vec![2, 7, 9, 11, 13, 3]), states(vec![2, 8, 9, 11, 13, 3]));
        let moved: Vec<bool> = a.chunks(128).zip(b.chunks(128)).map(|(x, y)| x.iter().zip(y).any(|(p, q)| (p - q).abs() > 1e-6)).collect();
        assert_eq!(moved, [true, true, true, false, false, false]);
    }

    /// DeBERTa, as v3 (shared projections, no absolute positions, no segments) and as v2's older
    /// models (own position projections, absolute positions, segments): the parameters are the
    /// config's count, and padding changes no real token's state (the position terms read only
    /// real keys too).
    #[test]
    fn deberta_parameters_and_padding() {
        let device = Device::flex();
        let v3 = crate::test_util::as_deberta_v3(Preset::Tiny.config(50)).without_dropout();
        let v2 = v3.clone().with_type_vocab_size(2).with_absolute_positions(None).with_position_buckets(None).with_share_att_key(Some(false)).with_norm_rel_ebd(None);
        for config in [v3, v2] {
            let model = BertModelConfig::new(config.clone()).with_with_pooler(false).init(&device);
            assert_eq!(model.num_params() as u64, config.num_params(false), "{config:?}");
            let alone = Batch::from_rows(&[vec![2, 7, 9, 11, 13, 17, 3]], &[vec![0; 7]], 0);
            let padded = Batch::from_rows(&[vec![2, 7, 9, 11, 13, 17, 3], vec![2, 4, 4, 4, 4, 4, 4, 4, 4, 3]], &[vec![0; 7], vec![0; 10]], 0);
            let states = |batch: &Batch| model.forward(BertInput::from_batch(batch, &device), ForwardOptions::default()).last_hidden_state.into_data().try_to_vec::<f32>().unwrap();
            let (a, b) = (states(&alone), states(&padded));
            assert!(a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-5), "{config:?}");
        }
    }

    #[test]
    fn returns_every_layer_when_asked() {
        let device = Device::flex();
        let model = BertModelConfig::new(Preset::Tiny.config(50)).init(&device);
        let batch = Batch::from_rows(&[vec![2, 7, 3]], &[vec![0; 3]], 0);
        let options = ForwardOptions { hidden_states: true, attentions: true, ..Default::default() };
        let out = model.forward(BertInput::from_batch(&batch, &device), options);
        assert_eq!(out.hidden_states.len(), 3);
        assert_eq!(out.attentions.len(), 2);
        assert_eq!(out.attentions[0].dims(), [1, 2, 3, 3]);
        assert_eq!(out.pooler_output.unwrap().dims(), [1, 128]);
    }
}
