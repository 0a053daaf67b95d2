//! ModernBERT's encoder layer (`layers.N` in its checkpoint), run in place of BERT's
//! [`BertLayer`](crate::bert::encoder::BertLayer) where the family's layer is
//! [`LayerKind::PreNormGated`](crate::bert::family::LayerKind):
//!
//! ```text
//! x = x + Wo(attention(rotary(Wqkv(attn_norm(x)))))     attn_norm is the identity in layer 0
//! x = x + Wo(act(input) * gate)  where (input, gate) = Wi(mlp_norm(x))
//! ```
//!
//! The attention is global or local ([`AttentionKind`]), with the rotary base of its kind; the
//! softmax is core's masked one, as BERT's.

use burn::nn::{Dropout, DropoutConfig, Initializer, Linear, LinearConfig};
use burn::prelude::*;

use crate::bert::config::{AttentionKind, BertConfig, HiddenAct};
use crate::bert::rotary::{RotaryTables, rotate};
use crate::nn::dropout;
use crate::nn::layer_norm::LayerNorm;
use crate::nn::linear::{linear, matmul};
use crate::nn::masked_softmax::scaled_masked_softmax;

/// A linear layer with a bias or none, initialised as `transformers` draws fresh weights (normal,
/// std `initializer_range`; bias zero).
fn init(d_in: usize, d_out: usize, bias: bool, std: f64, device: &Device) -> Linear {
    LinearConfig::new(d_in, d_out).with_bias(bias).with_initializer(Initializer::Normal { mean: 0.0, std }).init(device)
}

/// Fused multi-head attention with rotary positions (`attn`).
#[derive(Module, Debug)]
pub struct ModernBertAttention {
    /// `hidden → 3 × hidden`: queries, then keys, then values, each head after head (`Wqkv`).
    pub wqkv: Linear,
    /// Output projection (`Wo`).
    pub wo: Linear,
    /// Dropout on the attention probabilities and on the output (`attention_dropout`).
    pub dropout: Dropout,
    num_heads: usize,
    head_dim: usize,
}

impl ModernBertAttention {
    /// # Shapes
    /// - `hidden`: `[batch, seq, hidden]`; `mask`: `[batch, 1, seq, seq]` additive (padding, and
    ///   the window in a local layer); `rotary`: `[seq, head_dim]` tables
    /// - output: `[batch, seq, hidden]` and probabilities `[batch, heads, seq, seq]`
    pub fn forward(&self, hidden: Tensor<3>, mask: Tensor<4>, rotary: &RotaryTables) -> (Tensor<3>, Tensor<4>) {
        let [batch, seq, width] = hidden.dims();
        let qkv = linear(&self.wqkv, hidden);
        let part = |i: usize| {
            qkv.clone()
                .slice([0..batch, 0..seq, i * width..(i + 1) * width])
                .reshape([batch, seq, self.num_heads, self.head_dim])
                .swap_dims(1, 2)
        };
        let (q, k, v) = (rotate(part(0), rotary), rotate(part(1), rotary), part(2));
        let scores = matmul(q, k.swap_dims(2, 3));
        let probs = scaled_masked_softmax(scores, mask, 1.0 / (self.head_dim as f64).sqrt());
        let context = matmul(dropout::forward(&self.dropout, probs.clone()), v);
        let context = context.swap_dims(1, 2).reshape([batch, seq, width]);
        (dropout::forward(&self.dropout, linear(&self.wo, context)), probs)
    }
}

/// The gated feed-forward block (`mlp`): GeGLU where the activation is GELU.
#[derive(Module, Debug)]
pub struct ModernBertMlp {
    /// `hidden → 2 × intermediate`: the input, then the gate (`Wi`).
    pub wi: Linear,
    /// `intermediate → hidden` (`Wo`).
    pub wo: Linear,
    /// Dropout before `Wo` (`mlp_dropout`).
    pub dropout: Dropout,
    #[module(skip)]
    act: HiddenAct,
}

impl ModernBertMlp {
    /// # Shapes
    /// - `hidden`: `[batch, seq, hidden]`
    /// - output: `[batch, seq, hidden]`
    pub fn forward(&self, hidden: Tensor<3>) -> Tensor<3> {
        let x = linear(&self.wi, hidden);
        let [batch, seq, double] = x.dims();
        let inner = double / 2;
        let input = x.clone().slice([0..batch, 0..seq, 0..inner]);
        let gate = x.slice([0..batch, 0..seq, inner..double]);
        let input = self.act.apply(input);
        linear(&self.wo, dropout::forward(&self.dropout, input * gate))
    }
}

/// One pre-norm layer.
#[derive(Module, Debug)]
pub struct ModernBertLayer {
    /// LayerNorm before attention; none in layer 0, whose input is already normalised.
    pub attn_norm: Option<LayerNorm>,
    /// Attention.
    pub attn: ModernBertAttention,
    /// LayerNorm before the feed-forward block.
    pub mlp_norm: LayerNorm,
    /// Gated feed-forward block.
    pub mlp: ModernBertMlp,
    /// Global or local attention.
    #[module(skip)]
    pub kind: AttentionKind,
}

impl ModernBertLayer {
    /// A fresh layer `index` of `config`'s encoder.
    pub fn init(config: &BertConfig, index: usize, device: &Device) -> Self {
        let (h, i, std) = (config.hidden_size, config.intermediate_size, config.initializer_range);
        let norm = || LayerNorm::with_bias(h, config.layer_norm_eps, config.norm_bias(), device);
        let attention_bias = config.attention_bias.unwrap_or(true);
        let mlp_bias = config.mlp_bias.unwrap_or(true);
        Self {
            attn_norm: (index > 0).then(norm),
            attn: ModernBertAttention {
                wqkv: init(h, 3 * h, attention_bias, std, device),
                wo: init(h, h, attention_bias, std, device),
                dropout: DropoutConfig::new(config.attention_probs_dropout_prob).init(),
                num_heads: config.num_attention_heads,
                head_dim: config.head_dim(),
            },
            mlp_norm: norm(),
            mlp: ModernBertMlp {
                wi: init(h, 2 * i, mlp_bias, std, device),
                wo: init(i, h, mlp_bias, std, device),
                dropout: DropoutConfig::new(config.hidden_dropout_prob).init(),
                act: config.hidden_act,
            },
            kind: config.attention_kinds().get(index).copied().unwrap_or(AttentionKind::FullAttention),
        }
    }

    /// # Shapes
    /// - `hidden`: `[batch, seq, hidden]`; `mask`: `[batch, 1, seq, seq]` additive, for this
    ///   layer's kind; `rotary`: the tables of this layer's base, `[seq, head_dim]`
    /// - output: `[batch, seq, hidden]` and attention probabilities `[batch, heads, seq, seq]`
    pub fn forward(&self, hidden: Tensor<3>, mask: Tensor<4>, rotary: &RotaryTables) -> (Tensor<3>, Tensor<4>) {
        let normed = match &self.attn_norm {
            Some(norm) => norm.forward(hidden.clone()),
            None => hidden.clone(),
        };
        let (attended, probs) = self.attn.forward(normed, mask, rotary);
        let hidden = hidden + attended;
        let out = hidden.clone() + self.mlp.forward(self.mlp_norm.forward(hidden));
        (out, probs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bert::config::Preset;
    use crate::bert::rotary::tables;
    use burn::tensor::Distribution;

    /// The gated block is `Wo(act(input) · gate)`: with the gate's half of `Wi` zero, it outputs
    /// `Wo`'s bias alone.
    #[test]
    fn a_closed_gate_passes_nothing() {
        let device = Device::flex();
        let config = Preset::Tiny.config(10).with_intermediate_size(16).without_dropout();
        let mut layer = ModernBertLayer::init(&config, 1, &device);
        let w = layer.mlp.wi.weight.val();
        let [d_in, double] = w.dims();
        let open = w.slice([0..d_in, 0..double / 2]);
        layer.mlp.wi.weight = burn::module::Param::from_tensor(Tensor::cat(vec![open, Tensor::zeros([d_in, double / 2], &device)], 1));
        layer.mlp.wi.bias = None;
        let x = Tensor::<3>::random([1, 3, 128], Distribution::Normal(0.0, 1.0), &device);
        let out = layer.mlp.forward(x).into_data().try_to_vec::<f32>().unwrap();
        let bias = layer.mlp.wo.bias.as_ref().unwrap().val().into_data().try_to_vec::<f32>().unwrap();
        for row in out.chunks(128) {
            assert!(row.iter().zip(&bias).all(|(a, b)| (a - b).abs() < 1e-6));
        }
        // Layer 0 has no LayerNorm before its attention; the others do.
        assert!(ModernBertLayer::init(&config, 0, &device).attn_norm.is_none() && layer.attn_norm.is_some());
        let rotary = tables(10_000.0, 64, 3, &device);
        let (out, probs) = layer.forward(Tensor::random([2, 3, 128], Distribution::Normal(0.0, 1.0), &device), Tensor::zeros([2, 1, 3, 3], &device), &rotary);
        assert_eq!((out.dims(), probs.dims()), ([2, 3, 128], [2, 2, 3, 3]));
    }
}
