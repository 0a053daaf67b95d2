//! The encoder stack: `num_hidden_layers` × (self-attention block, feed-forward block).

use burn::nn::Linear;
use burn::prelude::*;
use burn::tensor::activation::{gelu_approximate, relu};

use crate::nn::activation::gelu;

use crate::bert::attention::{BertAttention, BertAttentionConfig, BertSelfOutput};
use crate::nn::linear::init_linear;
use crate::nn::linear::linear;
use crate::bert::config::{BertConfig, HiddenAct};

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
    /// - `hidden`: `[batch, seq, hidden]`; `mask`: `[batch, 1, seq, seq]` additive
    /// - output: `[batch, seq, hidden]` and attention probabilities `[batch, heads, seq, seq]`
    pub fn forward(&self, hidden: Tensor<3>, mask: Tensor<4>) -> (Tensor<3>, Tensor<4>) {
        let (attended, probs) = self.attention.forward(hidden, mask);
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
        let layer = (0..c.num_hidden_layers)
            .map(|_| BertLayer {
                attention: BertAttentionConfig::from_model(c).init(device),
                intermediate: BertIntermediate {
                    dense: init_linear(c.hidden_size, c.intermediate_size, std, device),
                    act: c.hidden_act,
                },
                output: BertSelfOutput::init(c.intermediate_size, c.hidden_size, c, device),
            })
            .collect();
        BertEncoder { layer }
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
    /// The layers, bottom first.
    pub layer: Vec<BertLayer>,
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
        let mut x = hidden;
        for layer in &self.layer {
            if keep_hidden_states {
                hidden_states.push(x.clone());
            }
            let (next, probs) = layer.forward(x, mask.clone());
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
}
