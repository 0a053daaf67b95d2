//! Bidirectional multi-head self-attention that also hands back its attention weights.
//!
//! Burn's own `MultiHeadAttention` throws the weights away after use; the explorer needs them, so
//! BERT's attention block is written here, named as in the Hugging Face checkpoint
//! (`attention.self.{query,key,value}`, `attention.output.{dense,LayerNorm}`).

use burn::nn::{Dropout, DropoutConfig, Embedding, EmbeddingConfig, Initializer, Linear};
use burn::prelude::*;
use burn::tensor::TensorData;

use crate::bert::config::{BertConfig, RelativeKey};
use crate::nn::linear::{init_linear, linear, matmul};
use crate::nn::dropout;
use crate::nn::layer_norm::LayerNorm;
use crate::nn::masked_softmax::scaled_masked_softmax;

/// Added to the scores of positions a query may not see. Large enough that `exp` underflows to
/// exactly zero in f32, small enough that a row with every key masked stays finite.
pub const MASK_VALUE: f32 = -1.0e9;

/// Which keys each query may attend to, besides never attending to padding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AttentionMask {
    /// BERT: every token sees every other token, left and right.
    #[default]
    Bidirectional,
    /// GPT-style: token `i` sees only tokens `0..=i`. For the teaching view; BERT was not
    /// trained with it.
    Causal,
}

/// Builds the additive mask that [`BertSelfAttention::forward`] adds to its scores.
///
/// # Shapes
/// - `attention_mask`: `[batch, seq]`, 1 for real tokens and 0 for padding
/// - output: `[batch, 1, seq, seq]`, 0 where attention is allowed and [`MASK_VALUE`] where not
pub fn additive_mask(attention_mask: Tensor<2, Int>, kind: AttentionMask) -> Tensor<4> {
    let [batch, seq] = attention_mask.dims();
    let device = attention_mask.device();
    // 1 → 0, 0 → MASK_VALUE, shaped to broadcast over heads and queries.
    let keys = (attention_mask.float().neg() + 1.0) * MASK_VALUE;
    let keys = keys.reshape([batch, 1, 1, seq]).expand([batch, 1, seq, seq]);
    match kind {
        AttentionMask::Bidirectional => keys,
        AttentionMask::Causal => {
            // Strictly upper triangle: key j > query i is the future.
            let future = Tensor::<2>::ones([seq, seq], &device).triu(1) * MASK_VALUE;
            keys + future.reshape([1, 1, seq, seq])
        }
    }
}

/// Configuration of [`BertSelfAttention`].
#[derive(Config, Debug)]
pub struct BertSelfAttentionConfig {
    /// Model width.
    pub hidden_size: usize,
    /// Number of heads; must divide `hidden_size`.
    pub num_attention_heads: usize,
    /// Dropout on the attention probabilities.
    #[config(default = 0.1)]
    pub dropout: f64,
    /// Standard deviation of the normal initialiser.
    #[config(default = 0.02)]
    pub initializer_range: f64,
    /// BERT's relative distances (`position_embedding_type`), if the model reads them.
    pub relative_key: Option<RelativeKey>,
    /// The longest input: distances run from `1 - max_position_embeddings` to
    /// `max_position_embeddings - 1`, a row each in the distance table.
    #[config(default = 512)]
    pub max_position_embeddings: usize,
}

impl BertSelfAttentionConfig {
    /// Creates the module with freshly initialised weights.
    pub fn init(&self, device: &Device) -> BertSelfAttention {
        assert_eq!(
            self.hidden_size % self.num_attention_heads,
            0,
            "hidden_size must be divisible by num_attention_heads"
        );
        let h = self.hidden_size;
        let std = self.initializer_range;
        BertSelfAttention {
            query: init_linear(h, h, std, device),
            key: init_linear(h, h, std, device),
            value: init_linear(h, h, std, device),
            dropout: DropoutConfig::new(self.dropout).init(),
            distance_embedding: self.relative_key.map(|_| {
                EmbeddingConfig::new(2 * self.max_position_embeddings - 1, h / self.num_attention_heads)
                    .with_initializer(Initializer::Normal { mean: 0.0, std })
                    .init(device)
            }),
            relative_key: self.relative_key,
            num_heads: self.num_attention_heads,
            head_dim: h / self.num_attention_heads,
        }
    }
}

/// Scaled dot-product attention over `num_heads` heads.
#[derive(Module, Debug)]
pub struct BertSelfAttention {
    /// Query projection.
    pub query: Linear,
    /// Key projection.
    pub key: Linear,
    /// Value projection.
    pub value: Linear,
    /// Dropout on attention probabilities.
    pub dropout: Dropout,
    /// One vector a head wide per query–key distance, nearest row `max_position_embeddings - 1`
    /// for distance 0 (`distance_embedding`, BERT's `relative_key`); none for absolute positions.
    pub distance_embedding: Option<Embedding>,
    #[module(skip)]
    relative_key: Option<RelativeKey>,
    num_heads: usize,
    head_dim: usize,
}

impl BertSelfAttention {
    /// Attends every position to every allowed position.
    ///
    /// # Shapes
    /// - `hidden`: `[batch, seq, hidden]`
    /// - `mask`: `[batch, 1, seq, seq]` additive (see [`additive_mask`])
    /// - `bias`: `[1, heads, seq, seq]`, added to the scaled scores (a relative position bias,
    ///   see [`relative_bias`](crate::bert::relative_bias)); unlike the mask, it learns
    /// - output: context `[batch, seq, hidden]` and probabilities `[batch, heads, seq, seq]`
    ///   (each row sums to 1)
    pub fn forward(&self, hidden: Tensor<3>, mask: Tensor<4>, bias: Option<Tensor<4>>) -> (Tensor<3>, Tensor<4>) {
        let [batch, seq, width] = hidden.dims();
        let split = |x: Tensor<3>| {
            x.reshape([batch, seq, self.num_heads, self.head_dim]).swap_dims(1, 2)
        };
        let q = split(linear(&self.query, hidden.clone()));
        let k = split(linear(&self.key, hidden.clone()));
        let v = split(linear(&self.value, hidden));

        let distances = self.distance_embedding.as_ref().zip(self.relative_key).map(|(table, kind)| relative_scores(table, kind, q.clone(), k.clone()));
        let mut scores = matmul(q, k.swap_dims(2, 3));
        if let Some(distances) = distances {
            // Before the scale, as `transformers` adds them.
            scores = scores + distances;
        }
        let scale = 1.0 / (self.head_dim as f64).sqrt();
        if let Some(bias) = bias {
            // Added before the scale as `bias / scale`, so that it adds `bias` after it; the
            // softmax's mask takes no gradient, the scores do.
            let [_, heads, _, _] = bias.dims();
            scores = scores + bias.div_scalar(scale).expand([batch, heads, seq, seq]);
        }
        let probs = scaled_masked_softmax(scores, mask, scale);
        let context = matmul(dropout::forward(&self.dropout, probs.clone()), v);
        let context = context.swap_dims(1, 2).reshape([batch, seq, width]);
        (context, probs)
    }
}

/// The scores BERT's relative distances add (`transformers`' `relative_key`: the query against
/// the embedding of its distance to each key, `einsum("bhld,lrd->bhlr")`; `relative_key_query`
/// adds the key against it too, `einsum("bhrd,lrd->bhlr")`), before the scale.
///
/// # Shapes
/// - `table`: `[2 · max_position_embeddings − 1, head_dim]`
/// - `q`, `k`: `[batch, heads, seq, head_dim]`
/// - output: `[batch, heads, seq, seq]` (query, key)
fn relative_scores(table: &Embedding, kind: RelativeKey, q: Tensor<4>, k: Tensor<4>) -> Tensor<4> {
    let [batch, heads, seq, head_dim] = q.dims();
    let device = q.device();
    // Row of query l and key r: the distance l − r, shifted so that the farthest left is row 0.
    let max = (table.weight.dims()[0] + 1) / 2;
    let rows: Vec<i64> = (0..seq).flat_map(|l| (0..seq).map(move |r| l as i64 - r as i64 + max as i64 - 1)).collect();
    let distance = table.forward(Tensor::<2, Int>::from_data(TensorData::new(rows, [seq, seq]), &device));
    // [l, r, d]: for each query position l, its row of keys; a batched product per l.
    let per_position = |x: Tensor<4>| x.permute([2, 0, 1, 3]).reshape([seq, batch * heads, head_dim]);
    let by_query = matmul(per_position(q), distance.clone().swap_dims(1, 2)).reshape([seq, batch, heads, seq]).permute([1, 2, 0, 3]);
    match kind {
        RelativeKey::RelativeKey => by_query,
        RelativeKey::RelativeKeyQuery => {
            // For each key position r: its vector against the distances of every query to it.
            let by_key = matmul(per_position(k), distance.permute([1, 2, 0])).reshape([seq, batch, heads, seq]).permute([1, 2, 3, 0]);
            by_query + by_key
        }
    }
}

/// Projection + dropout + residual + LayerNorm (`attention.output` in the checkpoint; the
/// feed-forward `output` block has the same structure).
#[derive(Module, Debug)]
pub struct BertSelfOutput {
    /// Output projection.
    pub dense: Linear,
    /// Normalises `dense(context) + residual`.
    pub layer_norm: LayerNorm,
    /// Dropout before the residual sum.
    pub dropout: Dropout,
}

impl BertSelfOutput {
    /// A fresh block projecting `d_in` to the model's hidden width.
    pub fn init(d_in: usize, hidden: usize, config: &BertConfig, device: &Device) -> Self {
        Self {
            dense: init_linear(d_in, hidden, config.initializer_range, device),
            layer_norm: LayerNorm::new(hidden, config.layer_norm_eps, device),
            dropout: DropoutConfig::new(config.hidden_dropout_prob).init(),
        }
    }

    /// # Shapes
    /// - `context`: `[batch, seq, d_in]`; `residual`: `[batch, seq, hidden]`
    /// - output: `[batch, seq, hidden]`
    pub fn forward(&self, context: Tensor<3>, residual: Tensor<3>) -> Tensor<3> {
        let projected = dropout::forward(&self.dropout, linear(&self.dense, context));
        self.layer_norm.forward(projected + residual)
    }
}

/// Configuration of [`BertAttention`].
#[derive(Config, Debug)]
pub struct BertAttentionConfig {
    /// The attention itself.
    pub self_attention: BertSelfAttentionConfig,
    /// Dropout before the residual sum.
    #[config(default = 0.1)]
    pub hidden_dropout: f64,
    /// LayerNorm epsilon.
    #[config(default = 1e-12)]
    pub layer_norm_eps: f64,
}

impl BertAttentionConfig {
    /// The attention part of a model configuration.
    pub fn from_model(config: &BertConfig) -> Self {
        Self::new(
            BertSelfAttentionConfig::new(config.hidden_size, config.num_attention_heads)
                .with_dropout(config.attention_probs_dropout_prob)
                .with_initializer_range(config.initializer_range)
                .with_relative_key(config.position_embedding_type)
                .with_max_position_embeddings(config.max_position_embeddings),
        )
        .with_hidden_dropout(config.hidden_dropout_prob)
        .with_layer_norm_eps(config.layer_norm_eps)
    }

    /// Creates the module with freshly initialised weights.
    pub fn init(&self, device: &Device) -> BertAttention {
        let h = self.self_attention.hidden_size;
        BertAttention {
            self_attn: self.self_attention.init(device),
            output: BertSelfOutput {
                dense: init_linear(h, h, self.self_attention.initializer_range, device),
                layer_norm: LayerNorm::new(h, self.layer_norm_eps, device),
                dropout: DropoutConfig::new(self.hidden_dropout).init(),
            },
        }
    }
}

/// Self-attention followed by its output block. The checkpoint calls the first part `self`,
/// a Rust keyword, so it is `self_attn` here (the loader maps the name).
#[derive(Module, Debug)]
pub struct BertAttention {
    /// Multi-head self-attention.
    pub self_attn: BertSelfAttention,
    /// Projection, residual and LayerNorm.
    pub output: BertSelfOutput,
}

impl BertAttention {
    /// # Shapes
    /// - `hidden`: `[batch, seq, hidden]`; `mask`: `[batch, 1, seq, seq]`; `bias`: `[1, heads,
    ///   seq, seq]` (see [`BertSelfAttention::forward`])
    /// - output: `[batch, seq, hidden]` and probabilities `[batch, heads, seq, seq]`
    pub fn forward(&self, hidden: Tensor<3>, mask: Tensor<4>, bias: Option<Tensor<4>>) -> (Tensor<3>, Tensor<4>) {
        let (context, probs) = self.self_attn.forward(hidden.clone(), mask, bias);
        (self.output.forward(context, hidden), probs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::{Distribution, TensorData};

    fn mask(rows: &[&[i64]], device: &Device) -> Tensor<2, Int> {
        let seq = rows[0].len();
        let flat: Vec<i64> = rows.iter().flat_map(|r| r.iter().copied()).collect();
        Tensor::from_data(TensorData::new(flat, [rows.len(), seq]), device)
    }

    #[test]
    fn rows_sum_to_one_and_padding_gets_no_attention() {
        let device = Device::flex();
        let attn = BertSelfAttentionConfig::new(8, 2).with_dropout(0.0).init(&device);
        let x = Tensor::<3>::random([2, 4, 8], Distribution::Normal(0.0, 1.0), &device);
        let m = additive_mask(mask(&[&[1, 1, 1, 1], &[1, 1, 0, 0]], &device), AttentionMask::Bidirectional);
        let (ctx, probs) = attn.forward(x, m, None);
        assert_eq!(ctx.dims(), [2, 4, 8]);
        assert_eq!(probs.dims(), [2, 2, 4, 4]);
        let p = probs.into_data().try_to_vec::<f32>().unwrap();
        for row in p.chunks(4) {
            let sum: f32 = row.iter().sum();
            assert!((sum - 1.0).abs() < 1e-5, "row sums to {sum}");
        }
        // Second sequence: keys 2 and 3 are padding, for every head and query.
        for head in 0..2 {
            for q in 0..4 {
                let base = ((2 + head) * 4 + q) * 4; // batch 1 starts after 2 heads × 4 rows
                assert_eq!(p[base + 2], 0.0);
                assert_eq!(p[base + 3], 0.0);
            }
        }
    }

    #[test]
    fn causal_mask_hides_the_future() {
        let device = Device::flex();
        let attn = BertSelfAttentionConfig::new(8, 2).with_dropout(0.0).init(&device);
        let x = Tensor::<3>::random([1, 5, 8], Distribution::Normal(0.0, 1.0), &device);
        let m = additive_mask(mask(&[&[1; 5]], &device), AttentionMask::Causal);
        let (_, probs) = attn.forward(x, m, None);
        let p = probs.into_data().try_to_vec::<f32>().unwrap();
        for head in 0..2 {
            for q in 0..5 {
                for k in 0..5 {
                    let v = p[(head * 5 + q) * 5 + k];
                    if k > q {
                        assert_eq!(v, 0.0, "query {q} sees future key {k}");
                    } else {
                        assert!(v > 0.0);
                    }
                }
            }
        }
        // The first token can only look at itself.
        assert!((p[0] - 1.0).abs() < 1e-6);
    }

    #[test]
    fn single_head_matches_a_hand_computation() {
        // With identity projections and zero biases, attention is softmax(x xᵀ / √d) x.
        let device = Device::flex();
        let mut attn = BertSelfAttentionConfig::new(2, 1).with_dropout(0.0).init(&device);
        let eye = || {
            let mut l = init_linear(2, 2, 0.02, &device);
            l.weight = burn::module::Param::from_tensor(Tensor::<2>::eye(2, &device));
            l.bias = Some(burn::module::Param::from_tensor(Tensor::<1>::zeros([2], &device)));
            l
        };
        attn.query = eye();
        attn.key = eye();
        attn.value = eye();
        let xs = [[1.0f32, 0.0], [0.0, 2.0]];
        let x = Tensor::<3>::from_data(TensorData::new(xs.concat(), [1, 2, 2]), &device);
        let m = additive_mask(mask(&[&[1, 1]], &device), AttentionMask::Bidirectional);
        let (ctx, probs) = attn.forward(x, m, None);
        let s = 2f32.sqrt();
        let row = |a: f32, b: f32| {
            let (ea, eb) = (a.exp(), b.exp());
            [ea / (ea + eb), eb / (ea + eb)]
        };
        let p0 = row(1.0 / s, 0.0);
        let p1 = row(0.0, 4.0 / s);
        let want_p = [p0[0], p0[1], p1[0], p1[1]];
        let got_p = probs.into_data().try_to_vec::<f32>().unwrap();
        let want_c = [p0[0], 2.0 * p0[1], p1[0], 2.0 * p1[1]];
        let got_c = ctx.into_data().try_to_vec::<f32>().unwrap();
        for i in 0..4 {
            assert!((got_p[i] - want_p[i]).abs() < 1e-6, "{got_p:?} vs {want_p:?}");
            assert!((got_c[i] - want_c[i]).abs() < 1e-6, "{got_c:?} vs {want_c:?}");
        }
    }

    /// The relative distances' scores, by loops over `transformers`' two einsums, for two
    /// batch rows and two heads (so that the per-position products keep rows and heads apart).
    #[test]
    fn relative_key_scores_are_the_query_and_key_against_their_distance() {
        let device = Device::flex();
        let (batch, heads, seq, d, max) = (2, 2, 3, 2, 4);
        let table = EmbeddingConfig::new(2 * max - 1, d).with_initializer(Initializer::Normal { mean: 0.0, std: 1.0 }).init(&device);
        let values = |n: usize, shift: f32| (0..n).map(|i| (i as f32 * 0.37 + shift).sin()).collect::<Vec<f32>>();
        let n = batch * heads * seq * d;
        let (qv, kv) = (values(n, 0.0), values(n, 1.0));
        let tensor = |v: &[f32]| Tensor::<4>::from_data(TensorData::new(v.to_vec(), [batch, heads, seq, d]), &device);
        let e = table.weight.val().into_data().try_to_vec::<f32>().unwrap();
        let at = |v: &[f32], b: usize, h: usize, t: usize, j: usize| v[((b * heads + h) * seq + t) * d + j];
        for kind in [RelativeKey::RelativeKey, RelativeKey::RelativeKeyQuery] {
            let got = relative_scores(&table, kind, tensor(&qv), tensor(&kv)).into_data().try_to_vec::<f32>().unwrap();
            for (b, h, l, r) in (0..batch).flat_map(|b| (0..heads).flat_map(move |h| (0..seq).flat_map(move |l| (0..seq).map(move |r| (b, h, l, r))))) {
                let row = l + max - 1 - r;
                let mut want: f32 = (0..d).map(|j| at(&qv, b, h, l, j) * e[row * d + j]).sum();
                if kind == RelativeKey::RelativeKeyQuery {
                    want += (0..d).map(|j| at(&kv, b, h, r, j) * e[row * d + j]).sum::<f32>();
                }
                let g = got[((b * heads + h) * seq + l) * seq + r];
                assert!((g - want).abs() < 1e-5, "{kind:?} b{b} h{h} l{l} r{r}: {g} vs {want}");
            }
        }
    }
}
