//! The model configuration, read straight from a Hugging Face `config.json`, and size presets.

use burn::config::Config;
use serde::{Deserialize, Serialize};

use crate::bert::family::{EmbeddingProjection, Family, LayerKind, Positions};
use crate::error::Error;

pub use crate::nn::activation::HiddenAct;

/// How a classifier pools the last layer before its head (ModernBERT's `classifier_pooling`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HeadPooling {
    /// The first token's vector.
    Cls,
    /// The mean of the real tokens' vectors.
    Mean,
}

/// What a layer's attention sees (ModernBERT's `layer_types`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttentionKind {
    /// Every token sees every token (a global layer).
    FullAttention,
    /// Every token sees the tokens within half the `local_attention` window either side.
    SlidingAttention,
}

/// BERT's relative distances (`position_embedding_type`, Shaw et al. 2018 and Huang et al.
/// 2020): each layer learns an embedding per query–key distance, one head wide, and adds its dot
/// product with the query (and with the key) to the scores, in place of absolute positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RelativeKey {
    /// The query against its distance to the key (`relative_key`).
    RelativeKey,
    /// The query and the key each against their distance (`relative_key_query`).
    RelativeKeyQuery,
}

/// Which relative-position terms DeBERTa's disentangled attention adds (`pos_att_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PositionAttention {
    /// Content to position: the query's content against the key's relative position.
    C2p,
    /// Position to content: the key's content against the query's relative position.
    P2c,
}

/// The longest input this crate reads at once, whatever a model's positions allow (ModernBERT's
/// 8,192): attention's scores grow with the square of the length, and at 8,192 tokens one layer's
/// of a 12-head model take 3.2 GB, more than a browser tab holds beside the model. At 512 tokens
/// every layer's attention of a base model, as the explorer keeps it, is under 300 MB.
pub const MAX_READ_TOKENS: usize = 512;

/// BERT's hyper-parameters. Field names are those of Hugging Face's `BertConfig`, so a
/// checkpoint's `config.json` deserialises into it unchanged (unknown keys are ignored).
#[derive(Config, Debug, PartialEq)]
pub struct BertConfig {
    /// Number of WordPiece tokens.
    #[config(default = 30522)]
    pub vocab_size: usize,
    /// Width of every hidden state (`d_model`).
    #[config(default = 768)]
    pub hidden_size: usize,
    /// Number of encoder layers.
    #[config(default = 12)]
    pub num_hidden_layers: usize,
    /// Attention heads per layer; must divide `hidden_size`.
    #[config(default = 12)]
    pub num_attention_heads: usize,
    /// Width of the feed-forward block.
    #[config(default = 3072)]
    pub intermediate_size: usize,
    /// Feed-forward activation.
    #[config(default = "HiddenAct::Gelu")]
    pub hidden_act: HiddenAct,
    /// Dropout after embeddings, attention output and feed-forward output.
    #[config(default = 0.1)]
    pub hidden_dropout_prob: f64,
    /// Dropout on attention probabilities.
    #[config(default = 0.1)]
    pub attention_probs_dropout_prob: f64,
    /// Number of learned positions: the longest input the model accepts.
    #[config(default = 512)]
    pub max_position_embeddings: usize,
    /// Number of segments (sentence A / sentence B).
    #[config(default = 2)]
    pub type_vocab_size: usize,
    /// Standard deviation of the normal initialiser for fresh weights.
    #[config(default = 0.02)]
    pub initializer_range: f64,
    /// LayerNorm epsilon.
    #[config(default = 1e-12)]
    pub layer_norm_eps: f64,
    /// Id of `[PAD]` (`<pad>` in RoBERTa).
    #[config(default = 0)]
    pub pad_token_id: usize,
    /// The family (`model_type`): how positions, segments and tensor names differ from BERT's.
    #[config(default = "Family::Bert")]
    pub model_type: Family,
    /// Whether a masked-language-model head's decoder is the word-embedding table (as every
    /// BERT, RoBERTa and DistilBERT ships it) rather than a matrix of its own.
    #[config(default = true)]
    pub tie_word_embeddings: bool,
    /// Width of the embeddings when it is not `hidden_size` (ELECTRA-small, ALBERT: narrower
    /// embeddings projected up to the encoder's width, see
    /// [`FamilyFacts::embedding_projection`](crate::bert::family::FamilyFacts)).
    pub embedding_size: Option<usize>,
    /// Rows of the relative position bias table (MPNet's `relative_attention_num_buckets`), for
    /// a family that has one (see [`FamilyFacts::relative_attention`](crate::bert::family::FamilyFacts)).
    pub relative_attention_num_buckets: Option<usize>,
    /// Whether the LayerNorms have a learned shift (ModernBERT's `norm_bias`; unset: they do).
    pub norm_bias: Option<bool>,
    /// Whether attention's projections have biases (ModernBERT's `attention_bias`; unset: they do).
    pub attention_bias: Option<bool>,
    /// Whether the feed-forward projections have biases (ModernBERT's `mlp_bias`; unset: they do).
    pub mlp_bias: Option<bool>,
    /// Whether the task heads' dense layer has a bias (ModernBERT's `classifier_bias`; unset: it
    /// does).
    pub classifier_bias: Option<bool>,
    /// The task heads' activation (ModernBERT's `classifier_activation`; unset: the family's).
    pub classifier_activation: Option<HiddenAct>,
    /// How a sequence classifier pools the last layer (ModernBERT's `classifier_pooling`).
    pub classifier_pooling: Option<HeadPooling>,
    /// Whether the masked-language-model decoder has a bias (ModernBERT's `decoder_bias`).
    pub decoder_bias: Option<bool>,
    /// The local layers' window in tokens, both sides together (ModernBERT's `local_attention`):
    /// a token sees those within half of it either side.
    pub local_attention: Option<usize>,
    /// Each layer's attention, global or local (ModernBERT's `layer_types`).
    pub layer_types: Option<Vec<AttentionKind>>,
    /// The rotary base of the global layers and of the local ones (ModernBERT's
    /// `rope_parameters`, formerly `global_rope_theta` / `local_rope_theta`).
    pub global_rope_theta: Option<f64>,
    pub local_rope_theta: Option<f64>,
    /// Whether the absolute position embeddings are added to the input (DeBERTa's
    /// `position_biased_input`, false in v3, read under this name so that no other family's
    /// `config.json` turns its positions off; unset: they are, where positions are not rotary).
    pub absolute_positions: Option<bool>,
    /// DeBERTa's relative distances in log buckets: this many rows each side, the nearest
    /// `position_buckets / 2` distances exact (`position_buckets`; unset: distances unbucketed).
    pub position_buckets: Option<usize>,
    /// The distance DeBERTa's buckets stretch to, or (without buckets) at which distances are
    /// clipped (`max_relative_positions`; unset: `max_position_embeddings`).
    pub max_relative_positions: Option<usize>,
    /// The relative-position terms DeBERTa's attention adds (`pos_att_type`).
    pub pos_att_type: Option<Vec<PositionAttention>>,
    /// Whether DeBERTa projects its relative positions with each layer's own query and key
    /// projections (`share_att_key`, v3) rather than with `pos_query_proj` / `pos_key_proj`.
    pub share_att_key: Option<bool>,
    /// `"layer_norm"` where DeBERTa's relative-position table passes a LayerNorm before use
    /// (`norm_rel_ebd`, v3), else `"none"`.
    pub norm_rel_ebd: Option<String>,
    /// Whether DeBERTa's masked-language-model head is the legacy `cls.predictions` (`legacy`,
    /// `transformers`' default) rather than `lm_predictions.lm_head`.
    pub legacy: Option<bool>,
    /// ALBERT's layer groups (`num_hidden_groups`; unset: 1): the `num_hidden_layers` depths are
    /// split evenly among the groups, each group's parameters shared by its depths.
    pub num_hidden_groups: Option<usize>,
    /// The layers in each of ALBERT's groups (`inner_group_num`; unset: 1), run one after the
    /// other at every depth of the group.
    pub inner_group_num: Option<usize>,
    /// Whether DeBERTa's attention reads relative positions (`relative_attention`; unset: it
    /// does, as every released DeBERTa). Without them it scores content against content only.
    pub relative_attention: Option<bool>,
    /// The width of the convolution DeBERTa-v2-xlarge adds after its first layer
    /// (`conv_kernel_size`; unset: none), its activation (`conv_act`, tanh by default) and its
    /// channel groups (`conv_groups`, 1 by default).
    pub conv_kernel_size: Option<usize>,
    pub conv_act: Option<HiddenAct>,
    pub conv_groups: Option<usize>,
    /// BERT's relative distances (`position_embedding_type` `relative_key` or
    /// `relative_key_query`; unset: `absolute`, the embeddings' position table).
    pub position_embedding_type: Option<RelativeKey>,
    /// The special tokens' ids as the folder's `config.json` gives them, kept so an export writes
    /// them back rather than the class's defaults (ModernBERT's are 50281 and 50282, past the end
    /// of a smaller vocabulary); the model itself reads its tokens' ids from the tokenizer.
    pub bos_token_id: Option<usize>,
    pub eos_token_id: Option<usize>,
    pub cls_token_id: Option<usize>,
    pub sep_token_id: Option<usize>,
}

/// [`BertConfig::grouped_layer_names`] of `groups` groups of `inner` layers.
pub fn grouped_layer_names(groups: usize, inner: usize) -> Vec<(String, String)> {
    if inner < 2 {
        return Vec::new();
    }
    (0..groups)
        .flat_map(|g| (0..inner).map(move |k| (format!("encoder.albert_layer_groups.{g}.albert_layers.{k}."), format!("encoder.layer.{}.", g * inner + k))))
        .collect()
}

/// Named model sizes from the BERT papers (Devlin et al. 2019; Turc et al. 2019 for the small
/// ones). All use the uncased 30,522-piece vocabulary and a feed-forward width of 4× hidden.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// 2 layers, 128 hidden, 2 heads.
    Tiny,
    /// 4 layers, 256 hidden, 4 heads.
    Mini,
    /// 4 layers, 512 hidden, 8 heads.
    Small,
    /// 8 layers, 512 hidden, 8 heads.
    Medium,
    /// 12 layers, 768 hidden, 12 heads.
    Base,
    /// 24 layers, 1024 hidden, 16 heads.
    Large,
}

impl Preset {
    /// Every preset, smallest first.
    pub const ALL: [Preset; 6] = [
        Preset::Tiny,
        Preset::Mini,
        Preset::Small,
        Preset::Medium,
        Preset::Base,
        Preset::Large,
    ];

    /// Short name, as used on the page and the command line (`bert-tiny`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Preset::Tiny => "bert-tiny",
            Preset::Mini => "bert-mini",
            Preset::Small => "bert-small",
            Preset::Medium => "bert-medium",
            Preset::Base => "bert-base",
            Preset::Large => "bert-large",
        }
    }

    /// `(layers, hidden, heads)`.
    pub fn dims(self) -> (usize, usize, usize) {
        match self {
            Preset::Tiny => (2, 128, 2),
            Preset::Mini => (4, 256, 4),
            Preset::Small => (4, 512, 8),
            Preset::Medium => (8, 512, 8),
            Preset::Base => (12, 768, 12),
            Preset::Large => (24, 1024, 16),
        }
    }

    /// The configuration for this size with the given vocabulary size.
    pub fn config(self, vocab_size: usize) -> BertConfig {
        let (layers, hidden, heads) = self.dims();
        BertConfig::new()
            .with_vocab_size(vocab_size)
            .with_num_hidden_layers(layers)
            .with_hidden_size(hidden)
            .with_num_attention_heads(heads)
            .with_intermediate_size(4 * hidden)
    }
}

impl BertConfig {
    /// Parses a Hugging Face `config.json` of any supported family (see
    /// [`Family`]) and checks that it describes an encoder we can build.
    pub fn from_json_bytes(bytes: &[u8]) -> crate::Result<Self> {
        let mut value: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|e| Error::Config(e.to_string()))?;
        let family = match value.get("model_type").and_then(|v| v.as_str()) {
            // A classifier bertbench exported with its own modelling code names its encoder's
            // family apart (see `tasks::classification::export`).
            Some("bertbench") => {
                let encoder = value.get("bertbench_encoder").and_then(|v| v.as_str()).unwrap_or("bert");
                Family::from_model_type(encoder).map_err(Error::UnsupportedConfig)?
            }
            Some(kind) => Family::from_model_type(kind).map_err(Error::UnsupportedConfig)?,
            None => Family::Bert,
        };
        match value.get("position_embedding_type").and_then(|v| v.as_str()) {
            // Absolute is the embeddings' own table: nothing to keep.
            Some("absolute") => {
                if let Some(o) = value.as_object_mut() {
                    o.remove("position_embedding_type");
                }
            }
            Some("relative_key" | "relative_key_query") if family == Family::Bert => {}
            Some(kind @ ("relative_key" | "relative_key_query")) => {
                return Err(Error::UnsupportedConfig(format!(
                    "position_embedding_type \"{kind}\" in a {} model: bertbench reads relative_key distances in BERT (model_type bert) only",
                    family.model_type()
                )));
            }
            Some(kind) => {
                return Err(Error::UnsupportedConfig(format!(
                    "position_embedding_type \"{kind}\"; the kinds transformers defines are \"absolute\", \"relative_key\" and \"relative_key_query\""
                )));
            }
            None => {}
        }
        if value.get("is_decoder").and_then(|v| v.as_bool()) == Some(true) {
            return Err(Error::UnsupportedConfig("is_decoder is true: this is a decoder (causal) model; bertbench runs encoders".into()));
        }
        // Fields a config.json leaves out take transformers' BertConfig defaults.
        let serde_json::Value::Object(given) = value else {
            return Err(Error::Config("expected a JSON object".into()));
        };
        let mut given = family.bert_keys(given).map_err(Error::UnsupportedConfig)?;
        given.insert("model_type".into(), serde_json::to_value(family).expect("family serialises"));
        let mut merged = serde_json::to_value(BertConfig::new()).expect("config serialises");
        let fields = merged.as_object_mut().expect("config is an object");
        for (key, v) in given {
            if fields.contains_key(&key) && !v.is_null() {
                fields.insert(key, v);
            }
        }
        let config: BertConfig =
            serde_json::from_value(merged).map_err(|e| Error::Config(e.to_string()))?;
        config.validate()?;
        Ok(config)
    }

    /// Checks the invariants the modules rely on.
    pub fn validate(&self) -> crate::Result<()> {
        let bad = |m: String| Err(Error::UnsupportedConfig(m));
        if self.hidden_size == 0 || self.num_attention_heads == 0 || self.num_hidden_layers == 0 {
            return bad("hidden_size, num_attention_heads and num_hidden_layers must be > 0".into());
        }
        if self.hidden_size % self.num_attention_heads != 0 {
            return bad(format!(
                "hidden_size {} is not divisible by num_attention_heads {}",
                self.hidden_size, self.num_attention_heads
            ));
        }
        if self.vocab_size == 0 || self.max_position_embeddings == 0 {
            return bad("vocab_size and max_position_embeddings must be > 0".into());
        }
        if self.type_vocab_size == 0 && self.model_type.facts().segments && !self.model_type.facts().segments_optional {
            return bad("type_vocab_size must be > 0".into());
        }
        if self.max_len() < 2 {
            return bad(format!(
                "max_position_embeddings {} leaves no room for a sequence after the {} reserved positions",
                self.max_position_embeddings,
                self.model_type.position_offset(self.pad_token_id)
            ));
        }
        if self.embedding_width() != self.hidden_size && self.model_type.facts().embedding_projection == EmbeddingProjection::None {
            return bad(format!(
                "embedding_size {} differs from hidden_size {}, and a {} has no projection between them",
                self.embedding_width(),
                self.hidden_size,
                self.model_type.display_name()
            ));
        }
        if self.embedding_width() == 0 {
            return bad("embedding_size must be > 0".into());
        }
        if let Some(buckets) = self.model_type.facts().relative_attention {
            if self.relative_attention_buckets() < buckets.num_buckets {
                return bad(format!(
                    "relative_attention_num_buckets {} is fewer than the {} buckets a {} encoder reads (transformers' MPNet buckets distances into 32 whatever its config says, and fails on this table too)",
                    self.relative_attention_buckets(),
                    buckets.num_buckets,
                    self.model_type.display_name()
                ));
            }
        }
        if self.layer_groups() == 0 || self.layers_per_group() == 0 {
            return bad("num_hidden_groups and inner_group_num must be at least 1".into());
        }
        if let Some((kernel, groups, _)) = self.convolution() {
            if kernel % 2 == 0 {
                return bad(format!("conv_kernel_size {kernel} is even: DeBERTa pads its convolution by (kernel − 1) / 2 each side, so an even kernel gives one token fewer (transformers fails on it too)"));
            }
            if groups == 0 || !self.hidden_size.is_multiple_of(groups) {
                return bad(format!("conv_groups {groups} does not divide hidden_size {}", self.hidden_size));
            }
        }
        if self.model_type.facts().positions == Positions::Rotary && !self.head_dim().is_multiple_of(2) {
            return bad(format!("rotary positions turn pairs of values, but a head is {} wide", self.head_dim()));
        }
        if let Some(kinds) = &self.layer_types {
            if kinds.len() != self.num_hidden_layers {
                return bad(format!("layer_types names {} layers but num_hidden_layers is {}", kinds.len(), self.num_hidden_layers));
            }
            if kinds.contains(&AttentionKind::SlidingAttention) && self.local_attention.unwrap_or(0) < 2 {
                return bad("local (sliding_attention) layers need local_attention, a window of at least 2 tokens".into());
            }
        }
        if self.pad_token_id >= self.vocab_size {
            return bad(format!(
                "pad_token_id {} is outside the vocabulary of {}",
                self.pad_token_id, self.vocab_size
            ));
        }
        Ok(())
    }

    /// The longest input in tokens, specials included: the position table's rows after the
    /// family's offset (512 for BERT-base and RoBERTa-base alike).
    pub fn max_len(&self) -> usize {
        self.max_position_embeddings.saturating_sub(self.model_type.position_offset(self.pad_token_id))
    }

    /// The longest input read at once: [`max_len`](Self::max_len), at most [`MAX_READ_TOKENS`].
    /// A longer text is cut there, and the tokenizer says by how much.
    pub fn read_len(&self) -> usize {
        self.max_len().min(MAX_READ_TOKENS)
    }

    /// Width of the embeddings (`embedding_size`, else `hidden_size`).
    pub fn embedding_width(&self) -> usize {
        self.embedding_size.unwrap_or(self.hidden_size)
    }

    /// Whether the embeddings are projected up to the encoder's width (`embeddings_project`).
    pub fn projects_embeddings(&self) -> bool {
        match self.model_type.facts().embedding_projection {
            EmbeddingProjection::None => false,
            EmbeddingProjection::WhereNarrower => self.embedding_width() != self.hidden_size,
            EmbeddingProjection::Always => true,
        }
    }

    /// Number of distinct encoder layers: `num_hidden_layers`, or ALBERT's groups times the
    /// layers in each (one shared by every depth in its released models; see
    /// [`FamilyFacts::shared_layers`](crate::bert::family::FamilyFacts)).
    pub fn distinct_layers(&self) -> usize {
        if self.model_type.facts().shared_layers { self.layer_groups() * self.layers_per_group() } else { self.num_hidden_layers }
    }

    /// ALBERT's layer groups (`num_hidden_groups`), 1 elsewhere.
    pub fn layer_groups(&self) -> usize {
        if self.model_type.facts().shared_layers { self.num_hidden_groups.unwrap_or(1) } else { 1 }
    }

    /// The layers each depth runs: ALBERT's `inner_group_num`, 1 elsewhere.
    pub fn layers_per_group(&self) -> usize {
        if self.model_type.facts().shared_layers { self.inner_group_num.unwrap_or(1) } else { 1 }
    }

    /// ALBERT's checkpoint names of its layers where a group holds several
    /// (`albert_layer_groups.G.albert_layers.K.` ↔ `encoder.layer.{G·K + k}.`), as (checkpoint,
    /// module) regex pairs; empty elsewhere (the family's fixed renames cover one layer a group).
    pub fn grouped_layer_names(&self) -> Vec<(String, String)> {
        grouped_layer_names(self.layer_groups(), self.layers_per_group())
    }

    /// Rows of the relative position bias table: `relative_attention_num_buckets`, else the
    /// family's bucket count.
    pub fn relative_attention_buckets(&self) -> usize {
        let buckets = self.model_type.facts().relative_attention.map_or(0, |b| b.num_buckets);
        self.relative_attention_num_buckets.unwrap_or(buckets)
    }

    /// Whether the embeddings have a learned position table: not where positions are rotary, nor
    /// where DeBERTa's `position_biased_input` is false (its positions are relative only).
    pub fn position_table(&self) -> bool {
        self.model_type.facts().positions != Positions::Rotary && self.absolute_positions != Some(false)
    }

    /// Whether the embeddings add their position table to the input: not under BERT's relative
    /// distances, whose checkpoints keep the table unused (`transformers` adds it only for
    /// `absolute`).
    pub fn adds_positions(&self) -> bool {
        self.position_table() && self.position_embedding_type.is_none()
    }

    /// How far DeBERTa's relative distances reach (`max_relative_positions`, else
    /// `max_position_embeddings`, as `transformers` reads an unset value).
    pub fn relative_reach(&self) -> usize {
        self.max_relative_positions.unwrap_or(self.max_position_embeddings)
    }

    /// Half the rows of DeBERTa's relative-position table: the buckets each side
    /// (`position_buckets`), else the reach.
    pub fn relative_span(&self) -> usize {
        self.position_buckets.unwrap_or_else(|| self.relative_reach())
    }

    /// Whether DeBERTa's attention reads its relative-position table (`relative_attention`).
    pub fn reads_relative_positions(&self) -> bool {
        self.model_type.facts().layer == LayerKind::Disentangled && self.relative_attention != Some(false)
    }

    /// DeBERTa's convolution after the first layer, where it has one: its kernel width, channel
    /// groups and activation.
    pub fn convolution(&self) -> Option<(usize, usize, HiddenAct)> {
        let kernel = self.conv_kernel_size.filter(|&k| k > 0 && self.model_type.facts().layer == LayerKind::Disentangled)?;
        Some((kernel, self.conv_groups.unwrap_or(1), self.conv_act.unwrap_or(HiddenAct::Tanh)))
    }

    /// Whether DeBERTa's attention scores this relative-position term (`pos_att_type`); its
    /// scale counts the term even where the attention reads no relative positions, as
    /// `transformers`' does.
    pub fn adds_position_term(&self, term: PositionAttention) -> bool {
        self.pos_att_type.as_ref().is_some_and(|kinds| kinds.contains(&term))
    }

    /// Whether DeBERTa's relative-position table passes a LayerNorm before use.
    pub fn relative_layer_norm(&self) -> bool {
        self.norm_rel_ebd.as_deref() == Some("layer_norm")
    }

    /// Whether the LayerNorms have a learned shift.
    pub fn norm_bias(&self) -> bool {
        self.norm_bias.unwrap_or(true)
    }

    /// Each layer's attention, bottom first: global everywhere unless `layer_types` says.
    pub fn attention_kinds(&self) -> Vec<AttentionKind> {
        self.layer_types.clone().unwrap_or_else(|| vec![AttentionKind::FullAttention; self.num_hidden_layers])
    }

    /// How far a local layer's tokens see either side (`local_attention / 2`, as `transformers`'
    /// `sliding_window`).
    pub fn local_reach(&self) -> usize {
        self.local_attention.unwrap_or(0) / 2
    }

    /// The activation of the masked-language-model head's transform: exact GELU in families
    /// whose head always applies it (RoBERTa, ELECTRA), else the heads' own
    /// (`classifier_activation`), else the encoder's.
    pub fn mlm_head_act(&self) -> HiddenAct {
        if self.model_type.facts().mlm_head_gelu { HiddenAct::Gelu } else { self.classifier_activation.unwrap_or(self.hidden_act) }
    }

    /// What sets this encoder's architecture apart from BERT's, one short phrase each, for the
    /// page to show when a model opens (empty for BERT's own).
    pub fn distinctions(&self) -> Vec<String> {
        let facts = self.model_type.facts();
        let mut out = Vec::new();
        if self.projects_embeddings() {
            out.push(format!("embeddings {} wide, projected up to {}", self.embedding_width(), self.hidden_size));
        }
        let (groups, inner) = (self.layer_groups(), self.layers_per_group());
        if facts.shared_layers && groups == 1 && inner == 1 && self.num_hidden_layers > 1 {
            out.push(format!("one layer's parameters shared by all {} layers", self.num_hidden_layers));
        } else if facts.shared_layers && (groups, inner) != (1, 1) {
            let group = if groups == 1 { "one group".to_string() } else { format!("{groups} groups") };
            let layers = if inner == 1 { "one layer each".to_string() } else { format!("{inner} layers, run one after the other") };
            out.push(format!("{group} of {layers}, the {} depths split evenly among them, each group's parameters shared by its depths", self.num_hidden_layers));
        }
        if let Some(buckets) = facts.relative_attention {
            out.push(format!(
                "a learned bias in every attention for the distance between words ({} buckets: each distance under {} its own, farther ones grouped in growing ranges), besides absolute positions",
                buckets.num_buckets,
                buckets.num_buckets / 4
            ));
        }
        if facts.positions == Positions::Rotary {
            let (global, local) = (self.global_rope_theta.unwrap_or(0.0), self.local_rope_theta.unwrap_or(0.0));
            out.push(format!("rotary positions: each query and key turned by an angle that grows with its position (base {global} in global layers, {local} in local ones), no position embeddings"));
        }
        match self.position_embedding_type {
            Some(RelativeKey::RelativeKey) => out.push(format!("relative distances (relative_key): every layer learns a vector for each distance between two words up to {}, and a query's score for a key adds its dot product with that distance's vector; no absolute positions", self.max_position_embeddings - 1)),
            Some(RelativeKey::RelativeKeyQuery) => out.push(format!("relative distances (relative_key_query): every layer learns a vector for each distance between two words up to {}, and a score adds the query's and the key's dot products with it; no absolute positions", self.max_position_embeddings - 1)),
            None => {}
        }
        if facts.layer == LayerKind::Disentangled && !self.reads_relative_positions() {
            out.push("no relative positions (relative_attention false): attention scores content against content only, as BERT's".into());
        }
        if let Some((kernel, groups, _)) = self.convolution() {
            let grouped = if groups > 1 { format!(", in {groups} channel groups") } else { String::new() };
            out.push(format!("a convolution over {kernel} neighbouring tokens of the embeddings{grouped}, added to the first layer's output"));
        }
        if self.reads_relative_positions() {
            let terms = [(PositionAttention::C2p, "content-to-position"), (PositionAttention::P2c, "position-to-content")];
            let added: Vec<&str> = terms.iter().filter(|(t, _)| self.adds_position_term(*t)).map(|(_, said)| *said).collect();
            let distances = match self.position_buckets {
                Some(buckets) => format!(
                    "{buckets} buckets each side: each distance up to {} its own, farther ones in log-spaced ranges up to {}",
                    buckets / 2,
                    self.relative_reach()
                ),
                None => format!("distances beyond {} clipped", self.relative_reach()),
            };
            let added = if added.is_empty() { "no position terms".to_string() } else { added.join(" and ") };
            out.push(format!(
                "disentangled attention: content and relative position scored apart ({added} added to content-to-content), from one table of relative positions every layer shares ({distances})"
            ));
            if self.share_att_key == Some(true) {
                out.push("relative positions projected by each layer's own query and key projections".into());
            }
        }
        if facts.positions != Positions::Rotary && !self.position_table() {
            out.push("no absolute positions: a word enters as its content alone".into());
        }
        if facts.layer == LayerKind::PreNormGated {
            out.push("pre-norm layers (LayerNorm before attention and before the feed-forward block) and a final LayerNorm".into());
            out.push("a gated GELU feed-forward block (GeGLU)".into());
        }
        let local = self.attention_kinds().iter().filter(|k| **k == AttentionKind::SlidingAttention).count();
        if local > 0 {
            out.push(format!(
                "local attention in {local} of {} layers: each token sees only the {} tokens either side (window {}); the others see every token",
                self.num_hidden_layers,
                self.local_reach(),
                self.local_attention.unwrap_or(0)
            ));
        }
        let biases = [self.attention_bias, self.mlp_bias, self.norm_bias];
        if biases.iter().all(|b| *b == Some(false)) {
            out.push("no biases in attention, feed-forward or LayerNorm".into());
        }
        if !facts.segments || self.type_vocab_size < 2 {
            out.push("no sentence A/B segment embeddings".into());
        }
        if !facts.pooler {
            out.push("no pooler".into());
        }
        out
    }

    /// Width of one attention head.
    pub fn head_dim(&self) -> usize {
        self.hidden_size / self.num_attention_heads
    }

    /// The same configuration with every dropout probability set to zero (for deterministic
    /// comparisons between devices).
    pub fn without_dropout(&self) -> Self {
        self.clone()
            .with_hidden_dropout_prob(0.0)
            .with_attention_probs_dropout_prob(0.0)
    }

    /// Number of parameters of the encoder, with or without the pooler, computed from the
    /// configuration alone (no weights are allocated). In `u64`: a configuration may describe a
    /// model too big for a 32-bit `usize` (wasm32), which must be refused, not wrapped.
    pub fn num_params(&self, with_pooler: bool) -> u64 {
        if self.model_type.facts().layer == LayerKind::PreNormGated {
            return self.pre_norm_params();
        }
        let positions = if self.position_table() { self.max_position_embeddings } else { 0 };
        let [h, i, v, p, t, l] = [self.hidden_size, self.intermediate_size, self.vocab_size, positions, self.type_vocab_size, self.distinct_layers()].map(|n| n as u64);
        let e = self.embedding_width() as u64;
        let projection = if self.projects_embeddings() { e * h + h } else { 0 };
        let embeddings = (v + p + t) * e + 2 * e + projection;
        let attention = 4 * (h * h + h) + 2 * h;
        let feed_forward = (h * i + i) + (i * h + h) + 2 * h;
        let layers = l * (attention + feed_forward);
        let pooler = if with_pooler { h * h + h } else { 0 };
        let relative_bias = if self.model_type.facts().relative_attention.is_some() { (self.relative_attention_buckets() * self.num_attention_heads) as u64 } else { 0 };
        embeddings + layers + pooler + relative_bias + self.disentangled_params()
    }

    /// DeBERTa's parameters besides BERT's layers: the relative-position table (`2 ×
    /// relative_span` rows) and its LayerNorm, and in each layer the position projections where
    /// they are not shared with the content's.
    fn disentangled_params(&self) -> u64 {
        if self.model_type.facts().layer != LayerKind::Disentangled {
            return 0;
        }
        let h = self.hidden_size as u64;
        let relative = self.reads_relative_positions();
        let norm = if self.relative_layer_norm() { 2 * h } else { 0 };
        let table = if relative { 2 * self.relative_span() as u64 * h } else { 0 };
        let own = if self.share_att_key == Some(true) || !relative {
            0
        } else {
            [PositionAttention::C2p, PositionAttention::P2c].iter().filter(|t| self.adds_position_term(**t)).count() as u64
        };
        let conv = self.convolution().map_or(0, |(kernel, groups, _)| h * (h / groups as u64) * kernel as u64 + h + 2 * h);
        table + norm + conv + self.num_hidden_layers as u64 * own * (h * h + h)
    }

    /// [`BertConfig::num_params`] of an encoder of pre-norm gated layers (ModernBERT): word
    /// embeddings and their LayerNorm, per layer a LayerNorm before attention (not in layer 0),
    /// the fused query/key/value projection, the output projection, a LayerNorm, the gated
    /// feed-forward's two projections; a final LayerNorm. No positions, segments or pooler.
    fn pre_norm_params(&self) -> u64 {
        let [h, i, v, l] = [self.hidden_size, self.intermediate_size, self.vocab_size, self.num_hidden_layers].map(|n| n as u64);
        let bias = |b: Option<bool>| u64::from(b.unwrap_or(true));
        let norm = h * (1 + bias(self.norm_bias));
        let (attention, mlp) = (bias(self.attention_bias), bias(self.mlp_bias));
        let layer = norm + (3 * h * h + attention * 3 * h) + (h * h + attention * h) + norm + (h * 2 * i + mlp * 2 * i) + (i * h + mlp * h);
        let (embeddings, final_norm) = (v * h + norm, norm);
        // Layer 0 has no LayerNorm before its attention (its input is the embeddings' norm).
        embeddings + l * layer - norm + final_norm
    }

    /// The configuration as Hugging Face `config.json` bytes, so `transformers` can load what
    /// we save.
    pub fn to_hf_json(&self) -> Vec<u8> {
        let family = self.model_type;
        let serde_json::Value::Object(obj) = serde_json::to_value(self).expect("config serialises") else {
            unreachable!("a config serialises to an object")
        };
        // Unset optional keys (`embedding_size`) are left out, as transformers writes them.
        let obj = obj.into_iter().filter(|(_, v)| !v.is_null()).collect();
        let mut obj = family.family_keys(obj);
        obj.insert("architectures".into(), serde_json::json!([family.base_architecture()]));
        serde_json::to_vec_pretty(&obj).expect("config serialises")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINILM: &str = r#"{
      "_name_or_path": "nreimers/MiniLM-L6-H384-uncased", "architectures": ["BertModel"],
      "attention_probs_dropout_prob": 0.1, "gradient_checkpointing": false, "hidden_act": "gelu",
      "hidden_dropout_prob": 0.1, "hidden_size": 384, "initializer_range": 0.02,
      "intermediate_size": 1536, "layer_norm_eps": 1e-12, "max_position_embeddings": 512,
      "model_type": "bert", "num_attention_heads": 12, "num_hidden_layers": 6, "pad_token_id": 0,
      "position_embedding_type": "absolute", "transformers_version": "4.8.2", "type_vocab_size": 2,
      "use_cache": true, "vocab_size": 30522 }"#;

    #[test]
    fn reads_a_hugging_face_config() {
        let c = BertConfig::from_json_bytes(MINILM.as_bytes()).unwrap();
        assert_eq!(c.hidden_size, 384);
        assert_eq!(c.num_hidden_layers, 6);
        assert_eq!(c.num_attention_heads, 12);
        assert_eq!(c.head_dim(), 32);
        assert_eq!(c.hidden_act, HiddenAct::Gelu);
        assert_eq!(c.layer_norm_eps, 1e-12);
    }

    #[test]
    fn round_trips_through_hf_json() {
        let c = Preset::Mini.config(1000);
        let back = BertConfig::from_json_bytes(&c.to_hf_json()).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn rejects_what_it_cannot_build() {
        let err = BertConfig::from_json_bytes(br#"{"model_type": "gpt2"}"#).unwrap_err();
        assert!(err.to_string().contains("gpt2"), "{err}");
        let err = BertConfig::from_json_bytes(br#"{"hidden_size": 100, "num_attention_heads": 12}"#)
            .unwrap_err();
        assert!(err.to_string().contains("not divisible"), "{err}");
        let err = BertConfig::from_json_bytes(b"{ not json").unwrap_err();
        assert!(matches!(err, Error::Config(_)), "{err}");
        let err = BertConfig::from_json_bytes(br#"{"hidden_act": "mish"}"#).unwrap_err();
        assert!(err.to_string().contains("mish"), "{err}");
        // `transformers`' other name for SiLU reads as it.
        assert_eq!(BertConfig::from_json_bytes(br#"{"hidden_act": "swish"}"#).unwrap().hidden_act, HiddenAct::Silu);
        let err = BertConfig::from_json_bytes(br#"{"hidden_size": "wide"}"#).unwrap_err();
        assert!(err.to_string().contains("wide"), "{err}");
        let err = BertConfig::from_json_bytes(b"[1, 2]").unwrap_err();
        assert!(err.to_string().contains("object"), "{err}");
    }

    #[test]
    fn missing_fields_take_transformers_defaults() {
        let c = BertConfig::from_json_bytes(br#"{"hidden_size": 256, "num_attention_heads": 4}"#).unwrap();
        assert_eq!(c.hidden_size, 256);
        assert_eq!(c.vocab_size, 30522);
        assert_eq!(c.layer_norm_eps, 1e-12);
        assert_eq!(c.hidden_act, HiddenAct::Gelu);
    }

    #[test]
    fn preset_parameter_counts_match_the_papers() {
        // BERT-base is "110M" and BERT-large "340M" in Devlin et al.; the exact counts of the
        // Hugging Face checkpoints (with pooler) are these.
        assert_eq!(Preset::Base.config(30522).num_params(true), 109_482_240);
        assert_eq!(Preset::Large.config(30522).num_params(true), 335_141_888);
        // BERT-tiny as published by Turc et al.: 4.4M.
        assert_eq!(Preset::Tiny.config(30522).num_params(true), 4_385_920);
    }
}
