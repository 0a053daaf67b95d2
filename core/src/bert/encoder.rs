//! The encoder stack: `num_hidden_layers` × (self-attention block, feed-forward block), each
//! layer its own parameters or (ALBERT) one layer's parameters applied at every depth, with
//! (MPNet) a relative position bias shared by every layer's attention.

use burn::nn::{Embedding, Linear};
use burn::prelude::*;
use burn::tensor::activation::{gelu_approximate, relu};

use crate::nn::activation::gelu;

use crate::bert::attention::{BertAttention, BertAttentionConfig, BertSelfOutput};
use crate::nn::linear::init_linear;
use crate::nn::linear::linear;
use crate::bert::config::{BertConfig, HiddenAct};
use crate::bert::relative_bias::{self, RelativeBuckets};

/// Feed-forward expansion (`intermediate` in the checkpoint).
#[derive(Module, Debug)]
pub struct BertIntermediate {
    /// `hidden → intermediate`.
    pub dense: Linear,
    #[module(skip)]
    act: HiddenAct,
}

impl BertIntermediate {
    /// # Shapes
    /// - `hidden`: `[batch, seq, hidden]`
    /// - output: `[batch, seq, intermediate]`
    pub fn forward(&self, hidden: Tensor<3>) -> Tensor<3> {
        let x = linear(&self.dense, hidden);
        match self.act {
            HiddenAct::Gelu => gelu(x),
            HiddenAct::GeluApproximate => gelu_approximate(x),
            HiddenAct::Relu => relu(x),
        }
    }
}

/// Feed-forward contraction, residual and LayerNorm (`output` in the checkpoint): the same
/// block as the attention output, from the intermediate width back to the hidden width.
pub type BertOutput = BertSelfOutput;

/// One transformer encoder layer (post-LayerNorm, as in the original BERT).
#[derive(Module, Debug)]
pub struct BertLayer {
    /// Self-attention block.
    pub attention: BertAttention,
    /// Feed-forward expansion.
    pub intermediate: BertIntermediate,
    /// Feed-forward contraction.
    pub output: BertOutput,
}

impl BertLayer {
    /// # Shapes
    /// - `hidden`: `[batch, seq, hidden]`; `mask`: `[batch, 1, seq, seq]` additive; `bias`:
    ///   `[1, heads, seq, seq]` added to the attention scores
    /// - output: `[batch, seq, hidden]` and attention probabilities `[batch, heads, seq, seq]`
    pub fn forward(&self, hidden: Tensor<3>, mask: Tensor<4>, bias: Option<Tensor<4>>) -> (Tensor<3>, Tensor<4>) {
        let (attended, probs) = self.attention.forward(hidden, mask, bias);
        let expanded = self.intermediate.forward(attended.clone());
        (self.output.forward(expanded, attended), probs)
    }
}

/// Configuration of [`BertEncoder`].
#[derive(Config, Debug)]
pub struct BertEncoderConfig {
    /// The model configuration.
    pub model: BertConfig,
}

impl BertEncoderConfig {
    /// Creates the stack with freshly initialised weights.
    pub fn init(&self, device: &Device) -> BertEncoder {
        let c = &self.model;
        let std = c.initializer_range;
        let layer = (0..c.distinct_layers())
            .map(|_| BertLayer {
                attention: BertAttentionConfig::from_model(c).init(device),
                intermediate: BertIntermediate {
                    dense: init_linear(c.hidden_size, c.intermediate_size, std, device),
                    act: c.hidden_act,
                },
                output: BertSelfOutput::init(c.intermediate_size, c.hidden_size, c, device),
            })
            .collect();
        let buckets = c.model_type.facts().relative_attention;
        BertEncoder {
            layer,
            relative_attention_bias: buckets.map(|_| relative_bias::init_table(c.relative_attention_buckets(), c.num_attention_heads, std, device)),
            depth: c.num_hidden_layers,
            buckets,
        }
    }
}

/// What the encoder hands back.
#[derive(Debug, Clone)]
pub struct EncoderOutput {
    /// Output of the last layer, `[batch, seq, hidden]`.
    pub last_hidden_state: Tensor<3>,
    /// Input to layer 0 followed by every layer's output (`L + 1` tensors), when asked for.
    pub hidden_states: Vec<Tensor<3>>,
    /// Attention probabilities of every layer, `[batch, heads, seq, seq]` each, when asked for.
    pub attentions: Vec<Tensor<4>>,
}

/// The stack of layers (`encoder.layer.N` in the checkpoint).
#[derive(Module, Debug)]
pub struct BertEncoder {
    /// The distinct layers, bottom first: one per depth, or one shared by every depth (ALBERT's
    /// one layer group). Depth `d` of `depth` runs `layer[d * layer.len() / depth]`.
    pub layer: Vec<BertLayer>,
    /// One learned score per bucket of query–key distance and per head, `[buckets, heads]`,
    /// added to every layer's attention (MPNet's `encoder.relative_attention_bias`).
    pub relative_attention_bias: Option<Embedding>,
    /// How many layers the input passes through (`num_hidden_layers`).
    #[module(skip)]
    depth: usize,
    /// How the relative bias buckets distances, where there is one.
    #[module(skip)]
    buckets: Option<RelativeBuckets>,
}

impl BertEncoder {
    /// Runs every layer.
    ///
    /// # Shapes
    /// - `hidden`: `[batch, seq, hidden]` (the embeddings)
    /// - `mask`: `[batch, 1, seq, seq]` additive
    /// - output: see [`EncoderOutput`]
    pub fn forward(
        &self,
        hidden: Tensor<3>,
        mask: Tensor<4>,
        keep_hidden_states: bool,
        keep_attentions: bool,
    ) -> EncoderOutput {
        let mut hidden_states = Vec::new();
        let mut attentions = Vec::new();
        let seq = hidden.dims()[1];
        let bias = self.relative_attention_bias.as_ref().zip(self.buckets).map(|(table, buckets)| relative_bias::position_bias(table, buckets, seq));
        let mut x = hidden;
        for layer in self.layers() {
            if keep_hidden_states {
                hidden_states.push(x.clone());
            }
            let (next, probs) = layer.forward(x, mask.clone(), bias.clone());
            if keep_attentions {
                attentions.push(probs);
            }
            x = next;
        }
        if keep_hidden_states {
            hidden_states.push(x.clone());
        }
        EncoderOutput { last_hidden_state: x, hidden_states, attentions }
    }

    /// How many layers the input passes through (`num_hidden_layers`), shared or not.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// The layer at each depth, bottom first: `depth()` of them, the same one repeated where the
    /// parameters are shared.
    pub fn layers(&self) -> impl Iterator<Item = &BertLayer> {
        let (n, depth) = (self.layer.len(), self.depth.max(1));
        (0..self.depth).map(move |d| &self.layer[d * n / depth])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bert::config::Preset;
    use crate::bert::family::Family;
    use burn::tensor::Distribution;

    /// ALBERT's one shared layer is one set of parameters applied at every depth: the stack
    /// equals that layer run `num_hidden_layers` times, and every depth's attention is returned.
    #[test]
    fn a_shared_layer_is_one_set_of_parameters_applied_at_every_depth() {
        let device = Device::flex();
        let config = Preset::Tiny.config(50).with_num_hidden_layers(3).with_model_type(Family::Albert).without_dropout();
        let encoder = BertEncoderConfig::new(config.clone()).init(&device);
        assert_eq!((encoder.layer.len(), encoder.depth(), encoder.layers().count()), (1, 3, 3));
        let own = BertEncoderConfig::new(config.with_model_type(Family::Bert)).init(&device);
        assert_eq!(own.num_params(), 3 * encoder.num_params());
        let x = Tensor::<3>::random([1, 4, 128], Distribution::Normal(0.0, 1.0), &device);
        let mask = Tensor::<4>::zeros([1, 1, 4, 4], &device);
        let out = encoder.forward(x.clone(), mask.clone(), true, true);
        let mut by_hand = x;
        for _ in 0..3 {
            by_hand = encoder.layer[0].forward(by_hand, mask.clone(), None).0;
        }
        let (a, b) = (out.last_hidden_state.into_data().try_to_vec::<f32>().unwrap(), by_hand.into_data().try_to_vec::<f32>().unwrap());
        assert_eq!(a, b);
        assert_eq!((out.hidden_states.len(), out.attentions.len()), (4, 3));
    }
}
