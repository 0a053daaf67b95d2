//! The encoder stack: `num_hidden_layers` × (self-attention block, feed-forward block), each
//! layer its own parameters or (ALBERT) one layer's parameters applied at every depth, with
//! (MPNet) a relative position bias shared by every layer's attention. A family whose layer
//! differs (ModernBERT's pre-norm layer, [`ModernBertLayer`]; DeBERTa's layer with disentangled
//! attention, [`DebertaV2Layer`]) has its layers run in place of BERT's: each kind of layer is an
//! [`EncoderBlock`] that takes from [`LayerInputs`] what it reads (the padding mask, a relative
//! bias, a local window, rotary tables, the relative-position table).

use burn::nn::{Embedding, EmbeddingConfig, Initializer, Linear};
use burn::prelude::*;


use crate::bert::attention::{BertAttention, BertAttentionConfig, BertSelfOutput};
use crate::nn::linear::init_linear;
use crate::nn::linear::linear;
use crate::bert::config::{AttentionKind, BertConfig, HiddenAct};
use crate::bert::deberta_conv::DebertaConvLayer;
use crate::bert::disentangled_attention::{self, DebertaV2Attention, RelativeInputs, RelativePositions};
use crate::bert::family::{LayerKind, Positions};
use crate::bert::modernbert_layer::ModernBertLayer;
use crate::bert::relative_bias::{self, RelativeBuckets};
use crate::bert::rotary::{self, RotaryTables};
use crate::nn::layer_norm::LayerNorm;

/// Feed-forward expansion (`intermediate` in the checkpoint).
#[derive(Module, Debug)]
pub struct BertIntermediate {
    /// `hidden → intermediate`.
    pub dense: Linear,
    #[module(skip)]
    act: HiddenAct,
}

impl BertIntermediate {
    /// A fresh block of `config`'s width and activation.
    pub fn init(config: &BertConfig, device: &Device) -> Self {
        Self { dense: init_linear(config.hidden_size, config.intermediate_size, config.initializer_range, device), act: config.hidden_act }
    }

    /// # Shapes
    /// - `hidden`: `[batch, seq, hidden]`
    /// - output: `[batch, seq, intermediate]`
    pub fn forward(&self, hidden: Tensor<3>) -> Tensor<3> {
        let x = linear(&self.dense, hidden);
        self.act.apply(x)
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

/// DeBERTa's layer (`encoder.layer.N` in its checkpoint): BERT's layer with disentangled
/// attention ([`disentangled_attention`]), run where the family's layer is
/// [`LayerKind::Disentangled`].
#[derive(Module, Debug)]
pub struct DebertaV2Layer {
    /// Disentangled self-attention block.
    pub attention: DebertaV2Attention,
    /// Feed-forward expansion.
    pub intermediate: BertIntermediate,
    /// Feed-forward contraction.
    pub output: BertOutput,
}

impl DebertaV2Layer {
    /// A fresh layer of `config`'s DeBERTa.
    pub fn init(config: &BertConfig, device: &Device) -> Self {
        Self {
            attention: DebertaV2Attention::init(config, device),
            intermediate: BertIntermediate::init(config, device),
            output: BertSelfOutput::init(config.intermediate_size, config.hidden_size, config, device),
        }
    }

    /// # Shapes
    /// - `hidden`: `[batch, seq, hidden]`; `mask`: `[batch, 1, seq, seq]` additive; `relative`:
    ///   see [`RelativeInputs`]
    /// - output: `[batch, seq, hidden]` and attention probabilities `[batch, heads, seq, seq]`
    pub fn forward(&self, hidden: Tensor<3>, mask: Tensor<4>, relative: Option<&RelativeInputs>) -> (Tensor<3>, Tensor<4>) {
        let (attended, probs) = self.attention.forward(hidden, mask, relative);
        let expanded = self.intermediate.forward(attended.clone());
        (self.output.forward(expanded, attended), probs)
    }
}

/// What every layer of a forward pass may read, computed once for the stack.
#[derive(Debug, Clone)]
pub struct LayerInputs {
    /// `[batch, 1, seq, seq]` additive: padding (and the teaching view's causal mask).
    pub mask: Tensor<4>,
    /// `[1, heads, seq, seq]` added to the attention scores (MPNet's relative bias).
    pub bias: Option<Tensor<4>>,
    /// `[batch, 1, seq, seq]`: `mask` and the local window, where some layer is local.
    pub local_mask: Option<Tensor<4>>,
    /// The rotary tables of the global layers' base and of the local layers', where positions
    /// are rotary.
    pub rotary: Option<(RotaryTables, RotaryTables)>,
    /// DeBERTa's relative-position table and each pair's row in it, where its attention reads
    /// relative positions.
    pub relative: Option<RelativeInputs>,
}

/// A layer of the stack, whatever its kind.
pub trait EncoderBlock {
    /// # Shapes
    /// - `hidden`: `[batch, seq, hidden]`
    /// - output: `[batch, seq, hidden]` and attention probabilities `[batch, heads, seq, seq]`
    fn forward_block(&self, hidden: Tensor<3>, inputs: &LayerInputs) -> (Tensor<3>, Tensor<4>);
}

impl EncoderBlock for BertLayer {
    fn forward_block(&self, hidden: Tensor<3>, inputs: &LayerInputs) -> (Tensor<3>, Tensor<4>) {
        self.forward(hidden, inputs.mask.clone(), inputs.bias.clone())
    }
}

impl EncoderBlock for ModernBertLayer {
    fn forward_block(&self, hidden: Tensor<3>, inputs: &LayerInputs) -> (Tensor<3>, Tensor<4>) {
        let (global, local) = inputs.rotary.as_ref().expect("a ModernBERT layer runs with rotary tables");
        match self.kind {
            AttentionKind::FullAttention => self.forward(hidden, inputs.mask.clone(), global),
            AttentionKind::SlidingAttention => {
                self.forward(hidden, inputs.local_mask.clone().expect("a local layer runs with its window"), local)
            }
        }
    }
}

impl EncoderBlock for DebertaV2Layer {
    fn forward_block(&self, hidden: Tensor<3>, inputs: &LayerInputs) -> (Tensor<3>, Tensor<4>) {
        self.forward(hidden, inputs.mask.clone(), inputs.relative.as_ref())
    }
}

/// `[batch, seq]`: 1 for real tokens, 0 for padding, from the additive mask's last row (the last
/// query sees every real key, also under the teaching view's causal mask).
fn real_tokens(mask: &Tensor<4>) -> Tensor<2> {
    let [batch, _, rows, seq] = mask.dims();
    mask.clone().slice([0..batch, 0..1, rows - 1..rows, 0..seq]).reshape([batch, seq]).greater_elem(-1.0).float()
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
        let facts = c.model_type.facts();
        let pre_norm = facts.layer == LayerKind::PreNormGated;
        let disentangled = facts.layer == LayerKind::Disentangled;
        let post_norm_layers = if pre_norm || disentangled { 0 } else { c.distinct_layers() };
        let layer = (0..post_norm_layers)
            .map(|_| BertLayer {
                attention: BertAttentionConfig::from_model(c).init(device),
                intermediate: BertIntermediate {
                    dense: init_linear(c.hidden_size, c.intermediate_size, std, device),
                    act: c.hidden_act,
                },
                output: BertSelfOutput::init(c.intermediate_size, c.hidden_size, c, device),
            })
            .collect();
        let buckets = facts.relative_attention;
        BertEncoder {
            layer,
            layers: if pre_norm { (0..c.num_hidden_layers).map(|i| ModernBertLayer::init(c, i, device)).collect() } else { Vec::new() },
            final_norm: pre_norm.then(|| LayerNorm::with_bias(c.hidden_size, c.layer_norm_eps, c.norm_bias(), device)),
            relative_attention_bias: buckets.map(|_| relative_bias::init_table(c.relative_attention_buckets(), c.num_attention_heads, std, device)),
            disentangled: if disentangled { (0..c.num_hidden_layers).map(|_| DebertaV2Layer::init(c, device)).collect() } else { Vec::new() },
            rel_embeddings: c.reads_relative_positions().then(|| {
                EmbeddingConfig::new(2 * c.relative_span(), c.hidden_size).with_initializer(Initializer::Normal { mean: 0.0, std }).init(device)
            }),
            layer_norm: (disentangled && c.relative_layer_norm()).then(|| LayerNorm::new(c.hidden_size, c.layer_norm_eps, device)),
            relative_positions: c.reads_relative_positions().then(|| RelativePositions::of(c)),
            conv: DebertaConvLayer::init(c, device),
            depth: c.num_hidden_layers,
            inner: c.layers_per_group(),
            shared: facts.shared_layers,
            buckets,
            rotary: (facts.positions == Positions::Rotary).then(|| Rotary {
                global_theta: c.global_rope_theta.unwrap_or(160_000.0),
                local_theta: c.local_rope_theta.unwrap_or(10_000.0),
                head_dim: c.head_dim(),
                reach: c.local_reach(),
            }),
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

/// How a rotary encoder turns its queries and keys, and how far its local layers see.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rotary {
    /// The base of the global layers' angles.
    pub global_theta: f64,
    /// The base of the local layers' angles.
    pub local_theta: f64,
    /// Width of one head.
    pub head_dim: usize,
    /// How many tokens either side a local layer's tokens see.
    pub reach: usize,
}

/// The stack of layers (`encoder.layer.N` in the checkpoint).
#[derive(Module, Debug)]
pub struct BertEncoder {
    /// BERT's post-norm layers, bottom first: one per depth, or ALBERT's groups of `inner`
    /// layers each, group `g`'s layer `k` at `g · inner + k`; depth `d` of `depth` runs group
    /// `⌊d / (depth / groups)⌋`. Empty where the family's layer is another kind.
    pub layer: Vec<BertLayer>,
    /// ModernBERT's pre-norm layers (`layers.N`, its checkpoint's name), bottom first; empty in
    /// the other families.
    pub layers: Vec<ModernBertLayer>,
    /// The LayerNorm after the last pre-norm layer (ModernBERT's `final_norm`).
    pub final_norm: Option<LayerNorm>,
    /// One learned score per bucket of query–key distance and per head, `[buckets, heads]`,
    /// added to every layer's attention (MPNet's `encoder.relative_attention_bias`).
    pub relative_attention_bias: Option<Embedding>,
    /// DeBERTa's layers with disentangled attention (`encoder.layer.N` in its checkpoint),
    /// bottom first; empty in the other families.
    pub disentangled: Vec<DebertaV2Layer>,
    /// DeBERTa's relative-position embeddings, `[2 × span, hidden]`, which every layer's
    /// attention projects (`encoder.rel_embeddings`).
    pub rel_embeddings: Option<Embedding>,
    /// The LayerNorm DeBERTa-v3 applies to `rel_embeddings` before use (`encoder.LayerNorm`).
    pub layer_norm: Option<LayerNorm>,
    /// DeBERTa-v2-xlarge's convolution of the embeddings, added to the first layer's output
    /// (`encoder.conv`).
    pub conv: Option<DebertaConvLayer>,
    /// How DeBERTa's distances map onto `rel_embeddings`' rows.
    #[module(skip)]
    relative_positions: Option<RelativePositions>,
    /// How many depths the input passes through (`num_hidden_layers`).
    #[module(skip)]
    depth: usize,
    /// The layers each depth runs one after the other (ALBERT's `inner_group_num`; else 1).
    #[module(skip)]
    inner: usize,
    /// Whether depths share their parameters (ALBERT), so no depth can be dropped alone.
    #[module(skip)]
    shared: bool,
    /// How the relative bias buckets distances, where there is one.
    #[module(skip)]
    buckets: Option<RelativeBuckets>,
    /// Rotary positions, where the family has them.
    #[module(skip)]
    rotary: Option<Rotary>,
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
        let device = hidden.device();
        let bias = self.relative_attention_bias.as_ref().zip(self.buckets).map(|(table, buckets)| relative_bias::position_bias(table, buckets, seq));
        let local = self.layers.iter().any(|l| l.kind == AttentionKind::SlidingAttention);
        let inputs = LayerInputs {
            local_mask: self.rotary.filter(|_| local).map(|r| mask.clone() + rotary::window_mask(seq, r.reach, &device)),
            rotary: self.rotary.map(|r| (rotary::tables(r.global_theta, r.head_dim, seq, &device), rotary::tables(r.local_theta, r.head_dim, seq, &device))),
            relative: self.rel_embeddings.as_ref().zip(self.relative_positions).map(|(table, positions)| {
                RelativeInputs::new(disentangled_attention::normalised_table(table, self.layer_norm.as_ref()), positions, seq)
            }),
            mask,
            bias,
        };
        let embeddings = self.conv.as_ref().map(|_| hidden.clone());
        let mut x = hidden;
        for (i, layer) in self.blocks().enumerate() {
            if keep_hidden_states {
                hidden_states.push(x.clone());
            }
            let (mut next, probs) = layer.forward_block(x, &inputs);
            if let (0, Some(conv), Some(embeddings)) = (i, &self.conv, &embeddings) {
                next = conv.forward(embeddings.clone(), next, real_tokens(&inputs.mask));
            }
            if keep_attentions {
                attentions.push(probs);
            }
            x = next;
        }
        if let Some(norm) = &self.final_norm {
            x = norm.forward(x);
        }
        if keep_hidden_states {
            hidden_states.push(x.clone());
        }
        EncoderOutput { last_hidden_state: x, hidden_states, attentions }
    }

    /// How many depths the input passes through (`num_hidden_layers`), shared or not.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// How many layers the input passes through: the depths, times the layers a group runs at
    /// each (ALBERT's `inner_group_num`). One hidden state and one attention map each.
    pub fn passes(&self) -> usize {
        if self.layer.is_empty() { self.depth } else { self.depth * self.inner }
    }

    /// ALBERT's checkpoint names of its layers where a group holds several
    /// ([`BertConfig::grouped_layer_names`]).
    pub fn grouped_layer_names(&self) -> Vec<(String, String)> {
        crate::bert::config::grouped_layer_names(self.layer.len() / self.inner.max(1), self.inner)
    }

    /// The post-norm layer of each pass, bottom first: `passes()` of them, the same ones
    /// repeated where the parameters are shared. Depth `d` runs group `⌊d / (depth / groups)⌋`,
    /// computed in floating point as `transformers`' `AlbertTransformer` does.
    pub fn layers(&self) -> impl Iterator<Item = &BertLayer> {
        let (inner, depth) = (self.inner.max(1), self.depth.max(1));
        let groups = self.layer.len() / inner;
        let shown = if groups == 0 { 0 } else { self.depth };
        (0..shown).flat_map(move |d| {
            let group = ((d as f64 / (depth as f64 / groups as f64)) as usize).min(groups - 1);
            (0..inner).map(move |k| &self.layer[group * inner + k])
        })
    }

    /// The stack with only the layers at depths `keep` (ascending), in that order: a smaller
    /// model started from a bigger one's layers, as DistilBERT's student took one layer of two
    /// of BERT's. Refuses a stack whose layers are shared (ALBERT) or of another kind
    /// (ModernBERT's alternate global and local layers), and depths that are not ascending and
    /// in range.
    pub fn keep_layers(mut self, keep: &[usize]) -> crate::Result<Self> {
        use crate::error::Error;
        if !self.layers.is_empty() || self.shared || self.layer.len() != self.depth {
            return Err(Error::Input("only a stack whose every layer has its own weights can keep some of its layers (not ALBERT's shared layer or ModernBERT's global and local layers)".into()));
        }
        if keep.is_empty() || keep.windows(2).any(|w| w[0] >= w[1]) || keep.iter().any(|&d| d >= self.depth) {
            return Err(Error::Input(format!("layers to keep must be ascending depths below {} (asked for {keep:?})", self.depth)));
        }
        let mut all: Vec<Option<BertLayer>> = self.layer.into_iter().map(Some).collect();
        self.layer = keep.iter().map(|&d| all[d].take().expect("ascending depths are distinct")).collect();
        self.depth = keep.len();
        Ok(self)
    }

    /// Every layer the input passes through, bottom first, of whichever kind the family's is.
    pub fn blocks(&self) -> impl Iterator<Item = &dyn EncoderBlock> {
        let post_norm = self.layers().map(|l| l as &dyn EncoderBlock);
        post_norm
            .chain(self.layers.iter().map(|l| l as &dyn EncoderBlock))
            .chain(self.disentangled.iter().map(|l| l as &dyn EncoderBlock))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bert::config::Preset;
    use crate::bert::family::Family;
    use burn::tensor::Distribution;

    /// A stack that keeps some layers runs exactly those layers, in order.
    #[test]
    fn kept_layers_run_as_the_bigger_stack_s_layers() {
        let device = Device::flex();
        let config = Preset::Tiny.config(50).with_num_hidden_layers(4).without_dropout();
        let encoder = BertEncoderConfig::new(config.clone()).init(&device);
        let x = Tensor::<3>::random([1, 5, 128], Distribution::Normal(0.0, 1.0), &device);
        let mask = Tensor::<4>::zeros([1, 1, 5, 5], &device);
        let mut by_hand = x.clone();
        for d in [0, 3] {
            by_hand = encoder.layer[d].forward(by_hand, mask.clone(), None).0;
        }
        let kept = encoder.clone().keep_layers(&[0, 3]).unwrap();
        assert_eq!((kept.depth(), kept.layer.len()), (2, 2));
        let out = kept.forward(x, mask, false, false).last_hidden_state;
        assert_eq!(out.into_data().try_to_vec::<f32>().unwrap(), by_hand.into_data().try_to_vec::<f32>().unwrap());
        for bad in [&[][..], &[3, 0], &[1, 1], &[4]] {
            assert!(encoder.clone().keep_layers(bad).is_err(), "{bad:?}");
        }
        let shared = BertEncoderConfig::new(config.with_model_type(Family::Albert)).init(&device);
        assert!(shared.keep_layers(&[0]).is_err());
    }

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
