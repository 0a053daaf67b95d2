//! Bidirectional multi-head self-attention that also hands back its attention weights.
//!
//! Burn's own `MultiHeadAttention` throws the weights away after use; the explorer needs them, so
//! BERT's attention block is written here, named as in the Hugging Face checkpoint
//! (`attention.self.{query,key,value}`, `attention.output.{dense,LayerNorm}`).

use burn::nn::{Dropout, DropoutConfig, Linear};
use burn::prelude::*;

use crate::bert::config::BertConfig;
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

        let mut scores = matmul(q, k.swap_dims(2, 3));
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
                .with_initializer_range(config.initializer_range),
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
}
