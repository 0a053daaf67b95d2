//! The encoder families that share BERT's architecture, and what tells them apart: the
//! `config.json` keys, the tensor names, the position offset, whether there are segments.
//!
//! | family       | `model_type`  | tensor names                          | positions        | segments |
//! |--------------|---------------|---------------------------------------|------------------|----------|
//! | BERT         | `bert`        | `bert.embeddings…`, `encoder.layer…`  | `0..`            | 2        |
//! | RoBERTa      | `roberta`     | `roberta.…`, as BERT                  | `pad_token_id+1..` | 1 (unused) |
//! | DistilBERT   | `distilbert`  | `distilbert.transformer.layer…q_lin`  | `0..`            | none     |
//! | ELECTRA      | `electra`     | `electra.…`, as BERT (no pooler)      | `0..`            | 2        |
//! | XLM-RoBERTa  | `xlm-roberta` | as RoBERTa                            | as RoBERTa       | 1 (unused) |
//! | CamemBERT    | `camembert`   | as RoBERTa                            | as RoBERTa       | 1 (unused) |
//! | ALBERT       | `albert`      | `albert.…albert_layer_groups.0…`      | `0..`            | 2        |
//! | MPNet        | `mpnet`       | `mpnet.…attention.attn.q…`            | as RoBERTa, + relative bias | none |
//! | ModernBERT   | `modernbert`  | `model.layers.N.attn.Wqkv…`           | rotary           | none     |
//! | DeBERTa-v2/v3 | `deberta-v2` | `deberta.…attention.self.query_proj…` | relative (disentangled); absolute too in older v2 | 0 or 2 |
//!
//! XLM-RoBERTa and CamemBERT are RoBERTa's encoder and checkpoint layout under other names (in
//! `transformers` their classes copy RoBERTa's, `base_model_prefix = "roberta"`), with a
//! SentencePiece Unigram tokenizer: [`Family::layout`] is RoBERTa for both, and only their
//! `model_type` and class names are their own, so an export loads as their own classes.
//!
//! ELECTRA-small and ALBERT have narrower embeddings projected up to the encoder's width
//! ([`EmbeddingProjection`]), and ALBERT shares one layer's parameters across every layer
//! ([`FamilyFacts::shared_layers`]): the model is built from those parts as the facts say, with
//! no family matched on anywhere else.
//!
//! Every family loads into the same [`BertModel`](crate::bert::model::BertModel): a checkpoint's
//! names are mapped onto BERT's module paths on load and back onto the family's own names on
//! save, so a model exports under the names `transformers` expects of it.
//!
//! A family is one unit: its module (`family/<name>.rs`) holds all its facts as one
//! [`FamilyFacts`], and the rest of the crate asks [`Family::facts`] rather than matching on the
//! family. To add one: a variant of [`Family`], its module, its line in [`Family::facts`] and
//! [`Family::from_model_type`]. Parts the model already has are switched on by facts: narrower
//! embeddings projected up ([`EmbeddingProjection`]), one layer shared by every depth
//! ([`FamilyFacts::shared_layers`]), a sentence-pair head ([`PairHead`]); a family whose blocks
//! differ otherwise adds the block that computes it and the fact that switches it on: MPNet's
//! relative position bias ([`FamilyFacts::relative_attention`]) is such a block. ModernBERT's
//! layers differ throughout: its rotary positions are a variant of [`Positions`], and its
//! pre-norm layer with fused attention, local windows and a gated feed-forward block is a layer of
//! its own ([`LayerKind::PreNormGated`], `bert/modernbert_layer.rs`) that the encoder runs in
//! place of BERT's. DeBERTa's layers are BERT's with another attention: disentangled attention
//! ([`LayerKind::Disentangled`], `bert/disentangled_attention.rs`) reads the words' content and
//! their relative positions from one table the layers share.

use serde::{Deserialize, Serialize};

pub use crate::bert::relative_bias::RelativeBuckets;

mod albert;
mod bert;
mod camembert;
mod deberta_v2;
mod distilbert;
mod electra;
mod modernbert;
mod mpnet;
mod roberta;
mod xlm_roberta;

type Json = serde_json::Map<String, serde_json::Value>;
type Renames = &'static [(&'static str, &'static str)];

/// An encoder family (Hugging Face's `model_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// BERT (Devlin et al. 2019) and its many sizes and fine-tunes (MiniLM, BioBERT...).
    #[default]
    Bert,
    /// RoBERTa (Liu et al. 2019): BERT's encoder, byte-level BPE, positions after the padding id.
    Roberta,
    /// DistilBERT (Sanh et al. 2019): BERT's encoder without segments or pooler, its own names.
    #[serde(rename = "distilbert")]
    DistilBert,
    /// ELECTRA (Clark et al. 2020): BERT's encoder trained as a discriminator of replaced
    /// tokens; no pooler.
    Electra,
    /// XLM-RoBERTa (Conneau et al. 2020): RoBERTa trained on 100 languages, SentencePiece
    /// Unigram pieces.
    #[serde(rename = "xlm-roberta")]
    XlmRoberta,
    /// CamemBERT (Martin et al. 2020): RoBERTa trained on French, SentencePiece Unigram pieces.
    Camembert,
    /// ALBERT (Lan et al. 2020): narrow embeddings projected up, one layer shared by all layers,
    /// a sentence-order head.
    Albert,
    /// MPNet (Song et al. 2020): BERT's encoder with a relative position bias in attention
    /// besides absolute positions, WordPiece pieces, no segments; `all-mpnet-base-v2`.
    #[serde(rename = "mpnet")]
    MpNet,
    /// ModernBERT (Warner et al. 2024): pre-norm layers without biases, rotary positions, a
    /// gated feed-forward block, attention that alternates between global and a local window,
    /// byte-level BPE; inputs up to 8,192 tokens.
    #[serde(rename = "modernbert")]
    ModernBert,
    /// DeBERTa-v2 and v3 (He et al. 2021, 2023): BERT's layers with disentangled attention
    /// (content and relative position scored apart), no absolute positions in v3, SentencePiece
    /// Unigram pieces.
    #[serde(rename = "deberta-v2")]
    DebertaV2,
}

/// The `model_type`s this crate reads, for messages.
pub const SUPPORTED: &str = "bert, roberta, distilbert, electra, xlm-roberta, camembert, albert, mpnet, modernbert, deberta-v2";


/// How a family numbers its positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Positions {
    /// A learned embedding per position, counted from `0`, or (RoBERTa) from after the padding
    /// id: `pad_token_id + 1`.
    Absolute { after_padding: bool },
    /// No position embeddings: each query and key is rotated by angles that grow with its
    /// position (RoPE, Su et al. 2021), in every layer's attention
    /// ([`rotary`](crate::bert::rotary)); positions count from `0`.
    Rotary,
}

/// Which encoder layer a family's blocks are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerKind {
    /// BERT's post-LayerNorm layer: attention, add, LayerNorm, feed-forward, add, LayerNorm
    /// ([`BertLayer`](crate::bert::encoder::BertLayer), `encoder.layer.N`).
    PostNorm,
    /// ModernBERT's pre-LayerNorm layer: LayerNorm, fused attention with rotary positions (global
    /// or local), add, LayerNorm, gated feed-forward, add; a final LayerNorm after the stack
    /// ([`ModernBertLayer`](crate::bert::modernbert_layer::ModernBertLayer), `layers.N`).
    PreNormGated,
    /// DeBERTa's post-LayerNorm layer with disentangled attention: content-to-content,
    /// content-to-position and position-to-content scores, the positions from one relative table
    /// every layer reads ([`DebertaV2Layer`](crate::bert::encoder::DebertaV2Layer),
    /// `encoder.layer.N`).
    Disentangled,
}

/// The activation after the dense layer of a pooler or a family's sequence-classification head:
/// tanh in BERT's and RoBERTa's, ReLU in DistilBERT's `pre_classifier`, exact GELU in ELECTRA's
/// and DeBERTa's, ModernBERT's `classifier_activation`.
pub type PoolerActivation = crate::nn::activation::HiddenAct;

/// Where a family's `*ForSequenceClassification` keeps its head: a dense layer (empty: none, the
/// pooler is the base model's) and the output layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SequenceHead {
    pub dense: &'static str,
    pub out: &'static str,
    /// A LayerNorm after the dense layer's activation (ModernBERT's `head.norm.`), or empty.
    pub norm: &'static str,
}

/// Whether a family's embeddings are projected up to the encoder's width by a linear layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmbeddingProjection {
    /// Never: the embeddings are as wide as the encoder (BERT, RoBERTa...).
    None,
    /// Where `embedding_size` differs from `hidden_size` (ELECTRA's `embeddings_project`).
    WhereNarrower,
    /// Always, whatever the widths (ALBERT's `encoder.embedding_hidden_mapping_in`).
    Always,
}

/// A family's sentence-pair pretraining head: where its checkpoints keep it (the prefix that
/// marks it, mapped by [`FamilyFacts::mlm_renames`] onto `seq_relationship`) and the
/// `transformers` class with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairHead {
    pub prefix: &'static str,
    pub architecture: &'static str,
}

/// Everything that tells a family apart, in one place (`family/<name>.rs`).
#[derive(Debug, Clone, Copy)]
pub struct FamilyFacts {
    /// `config.json`'s `model_type`.
    pub model_type: &'static str,
    /// The name shown to people.
    pub display_name: &'static str,
    /// The family whose checkpoint layout this one shares (itself, or RoBERTa for XLM-R).
    pub layout: Family,
    /// The base model's prefix in task checkpoints (`bert.`).
    pub prefix: &'static str,
    /// The `transformers` class of the bare encoder, and of the encoder with its MLM head.
    pub base_architecture: &'static str,
    pub mlm_architecture: &'static str,
    pub positions: Positions,
    /// Whether it has segment (token type) embeddings.
    pub segments: bool,
    /// Whether its classes build the segment table only where `type_vocab_size` > 0 (DeBERTa:
    /// v3 has none), so that 0 is a valid size; the others always build and read one.
    pub segments_optional: bool,
    /// Whether its base model has a pooler (`tanh(dense([CLS]))`).
    pub pooler: bool,
    /// Its sequence-classification head: where it is kept, and its dense layer's activation.
    pub sequence_head: SequenceHead,
    pub sequence_activation: PoolerActivation,
    /// Its `*ForMultipleChoice` pools each ending with the sequence head's dense layer and
    /// activation (DeBERTa's `ContextPooler`, `pooler.dense` with GELU; ModernBERT's `head`, with
    /// its LayerNorm, on the first token or the mean as `classifier_pooling` says) rather than
    /// with a pooler of the base model (BERT's and the RoBERTa family's).
    pub choice_reads_sequence_head: bool,
    /// Checkpoint name → module path, applied in order (after the family prefix is removed),
    /// and the inverse.
    pub load_renames: Renames,
    pub save_renames: Renames,
    /// Prefixes of task-head tensors in its checkpoints: kept apart from the encoder (and read by
    /// the task that uses them) instead of refusing the file.
    pub head_prefixes: &'static [&'static str],
    /// The tensor that marks a masked-language-model head (its output bias).
    pub mlm_marker: &'static str,
    /// Checkpoint name → path in [`PretrainingHeads`](crate::tasks::pretraining::PretrainingHeads)
    /// (`predictions.transform.dense`, `predictions.transform.layer_norm`, `predictions.bias`,
    /// `seq_relationship`), and the inverse. The decoder's weight is the word-embedding table
    /// (tied) in every family.
    pub mlm_renames: Renames,
    pub mlm_save_renames: Renames,
    /// Its MLM head applies exact GELU whatever the encoder's activation (RoBERTa, ELECTRA).
    pub mlm_head_gelu: bool,
    /// Its sentence-pair head (BERT's next-sentence, ALBERT's sentence-order), where its
    /// `transformers` pretraining class has one.
    pub pair_head: Option<PairHead>,
    /// Its embeddings may be narrower than the encoder (`embedding_size` < `hidden_size`) and are
    /// then projected up by a linear layer (ELECTRA's `embeddings_project`, ALBERT's
    /// `encoder.embedding_hidden_mapping_in`), which the model holds as `embeddings_project`.
    pub embedding_projection: EmbeddingProjection,
    /// One encoder layer's parameters serve every layer (ALBERT's one layer group).
    pub shared_layers: bool,
    /// A learned bias per bucket of query–key distance, added to every layer's attention
    /// (MPNet's `encoder.relative_attention_bias`), besides the absolute positions.
    pub relative_attention: Option<RelativeBuckets>,
    /// Its encoder layer.
    pub layer: LayerKind,
    /// Its token-classification and question-answering classes apply the sequence head's dense
    /// → activation → LayerNorm ([`SequenceHead`]'s `dense` and `norm`, ModernBERT's `head`) to
    /// every token before their output layer: this crate's token and span heads then hold it as
    /// their [`HeadTransform`](crate::tasks::classification::HeadTransform), read from such a
    /// checkpoint, started from the MLM head's (as `transformers` loads it) or fresh, and saved
    /// under those names.
    pub token_head_transform: bool,
    /// Where its `*ForQuestionAnswering` keeps its output layer (`qa_outputs.`; ModernBERT's
    /// `classifier.`).
    pub qa_outputs: &'static str,
    /// The tokenizer class its folders name, where it is not `<Family>Tokenizer` (ModernBERT's
    /// `PreTrainedTokenizerFast`: `tokenizer.json` alone).
    pub tokenizer_class: Option<&'static str>,
    /// Its own `transformers` tokenizer class reads a WordPiece vocabulary (BERT's, DistilBERT's,
    /// ELECTRA's, MPNet's), so an export with a WordPiece vocabulary may name it.
    pub wordpiece_tokenizer: bool,
    /// Its `config.json` object in BERT's keys, or why this encoder cannot be built.
    pub read_config: fn(Json) -> Result<Json, String>,
    /// The inverse of `read_config`, for writing a `config.json`.
    pub write_config: fn(Json) -> Json,
}

/// BERT's own tensor names onto our module paths, and back.
const BERT_LOAD: Renames = &[(r"\.LayerNorm\.", ".layer_norm."), (r"\.attention\.self\.", ".attention.self_attn.")];
const BERT_SAVE: Renames = &[(r"\.layer_norm\.", ".LayerNorm."), (r"\.self_attn\.", ".self.")];

/// A `config.json` in BERT's keys already.
fn bert_keys(config: Json) -> Result<Json, String> {
    Ok(config)
}

/// Written with BERT's keys, naming its absolute positions (or the relative distances it reads
/// in their place, [`RelativeKey`](crate::bert::config::RelativeKey)).
fn absolute_positions(mut config: Json) -> Json {
    config.entry("position_embedding_type").or_insert_with(|| "absolute".into());
    config
}

impl Family {
    /// Every family this crate reads.
    pub const ALL: [Family; 10] = [Family::Bert, Family::Roberta, Family::DistilBert, Family::Electra, Family::XlmRoberta, Family::Camembert, Family::Albert, Family::MpNet, Family::ModernBert, Family::DebertaV2];

    /// The family of a `config.json` `model_type`, or a message naming what is supported.
    pub fn from_model_type(model_type: &str) -> Result<Self, String> {
        match model_type {
            "bert" => Ok(Family::Bert),
            "roberta" => Ok(Family::Roberta),
            "distilbert" => Ok(Family::DistilBert),
            "electra" => Ok(Family::Electra),
            "xlm-roberta" => Ok(Family::XlmRoberta),
            "camembert" => Ok(Family::Camembert),
            "albert" => Ok(Family::Albert),
            "mpnet" => Ok(Family::MpNet),
            "modernbert" => Ok(Family::ModernBert),
            "deberta-v2" => Ok(Family::DebertaV2),
            "gpt2" | "gpt_neo" | "gptj" | "llama" | "mistral" | "qwen2" | "phi" | "opt" | "bloom" | "falcon" => Err(format!(
                "model_type \"{model_type}\" is a decoder-only (text generation) model; bertbench runs encoders: {SUPPORTED}"
            )),
            other => Err(format!("model_type \"{other}\" is not supported; bertbench runs these encoder families: {SUPPORTED}")),
        }
    }

    /// Its facts: the one place a family is told apart.
    pub fn facts(self) -> &'static FamilyFacts {
        match self {
            Family::Bert => &bert::FACTS,
            Family::Roberta => &roberta::FACTS,
            Family::DistilBert => &distilbert::FACTS,
            Family::Electra => &electra::FACTS,
            Family::XlmRoberta => &xlm_roberta::FACTS,
            Family::Camembert => &camembert::FACTS,
            Family::Albert => &albert::FACTS,
            Family::MpNet => &mpnet::FACTS,
            Family::ModernBert => &modernbert::FACTS,
            Family::DebertaV2 => &deberta_v2::FACTS,
        }
    }

    /// `config.json`'s `model_type`.
    pub fn model_type(self) -> &'static str {
        self.facts().model_type
    }

    /// The family whose checkpoint layout (names, heads, positions) this one shares.
    pub fn layout(self) -> Family {
        self.facts().layout
    }

    /// The name shown to people.
    pub fn display_name(self) -> &'static str {
        self.facts().display_name
    }

    /// The base model's prefix in task checkpoints.
    pub fn prefix(self) -> &'static str {
        self.facts().prefix
    }

    /// The `transformers` class of the bare encoder.
    pub fn base_architecture(self) -> &'static str {
        self.facts().base_architecture
    }

    /// The first position id (RoBERTa counts from after the padding id).
    pub fn position_offset(self, pad_token_id: usize) -> usize {
        match self.facts().positions {
            Positions::Absolute { after_padding: true } => pad_token_id + 1,
            Positions::Absolute { after_padding: false } | Positions::Rotary => 0,
        }
    }

    /// Whether the family has a pooler (`tanh(dense([CLS]))`) in its base model.
    pub fn has_pooler(self) -> bool {
        self.facts().pooler
    }

    /// Checkpoint name → module path, applied in order (after the family prefix is removed).
    pub fn load_renames(self) -> Renames {
        self.facts().load_renames
    }

    /// Module path → the family's checkpoint name, applied in order.
    pub fn save_renames(self) -> Renames {
        self.facts().save_renames
    }

    /// Prefixes of task-head tensors in this family's checkpoints.
    pub fn head_prefixes(self) -> &'static [&'static str] {
        self.facts().head_prefixes
    }

    /// The tensor that marks a masked-language-model head (its output bias).
    pub fn mlm_marker(self) -> &'static str {
        self.facts().mlm_marker
    }

    /// Checkpoint name → path in the pretraining heads, for the family's MLM head.
    pub fn mlm_renames(self) -> Renames {
        self.facts().mlm_renames
    }

    /// The inverse of [`Family::mlm_renames`], for export.
    pub fn mlm_save_renames(self) -> Renames {
        self.facts().mlm_save_renames
    }

    /// The `transformers` class of an encoder with its masked-language-model head.
    pub fn mlm_architecture(self) -> &'static str {
        self.facts().mlm_architecture
    }

    /// Maps a module path to this family's checkpoint name (for messages and export).
    pub fn to_checkpoint_name(self, path: &str) -> String {
        let mut name = path.replace(".gamma", ".weight").replace(".beta", ".bias");
        for (from, to) in self.save_renames() {
            name = regex::Regex::new(from).expect("static pattern").replace_all(&name, *to).into_owned();
        }
        name
    }

    /// Translates a `config.json` object into BERT's keys, or says why this encoder cannot be
    /// built (as an ALBERT with several layer groups).
    pub fn bert_keys(self, config: Json) -> Result<Json, String> {
        (self.facts().read_config)(config)
    }

    /// The inverse of [`Family::bert_keys`], for writing a `config.json`.
    pub fn family_keys(self, config: Json) -> Json {
        (self.facts().write_config)(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each family's module is found by its own `model_type`, names itself apart from the others,
    /// and its load and save names invert each other on every kind of module path.
    #[test]
    fn each_family_is_one_consistent_unit() {
        let load = |family: Family, name: &str| {
            let mut n = name.to_string();
            for (from, to) in family.load_renames() {
                n = regex::Regex::new(from).unwrap().replace_all(&n, *to).into_owned();
            }
            n
        };
        let mut names = std::collections::HashSet::new();
        for family in Family::ALL {
            assert_eq!(Family::from_model_type(family.model_type()), Ok(family));
            assert!(SUPPORTED.contains(family.model_type()));
            assert!(names.insert(family.display_name()) && names.insert(family.base_architecture()));
            assert_eq!(family.facts().layout.facts().layout, family.layout(), "a layout is its own layout");
            for path in [
                "embeddings.layer_norm.gamma",
                "encoder.layer.2.attention.self_attn.query.weight",
                "encoder.layer.0.attention.output.layer_norm.beta",
                "encoder.layer.1.intermediate.dense.weight",
                "encoder.layer.1.output.dense.bias",
                "encoder.layer.1.output.layer_norm.gamma",
            ] {
                let plain = path.replace(".gamma", ".weight").replace(".beta", ".bias");
                // DeBERTa's layers are held apart from BERT's (`encoder.disentangled.N`).
                let plain = if family.facts().layer == LayerKind::Disentangled { plain.replacen("encoder.layer.", "encoder.disentangled.", 1) } else { plain };
                assert_eq!(load(family, &family.to_checkpoint_name(path)), plain, "{family:?}: {path}");
            }
            // The keys written are read back to the same config.
            let config: Json = serde_json::from_value(serde_json::to_value(crate::bert::config::BertConfig::new().with_model_type(family).with_pad_token_id(1)).unwrap()).unwrap();
            let config: Json = config.into_iter().filter(|(_, v)| !v.is_null()).collect();
            let round_trip = |config: Json| {
                let mut back = family.bert_keys(family.family_keys(config)).unwrap();
                for written in ["position_embedding_type", "sinusoidal_pos_embds", "embedding_size", "num_hidden_groups", "inner_group_num", "pos_att_type", "norm_rel_ebd", "absolute_positions", "legacy"] {
                    back.remove(written);
                }
                back
            };
            let back = round_trip(config.clone());
            let expected: Json = if family.facts().segments { config.clone() } else { family.bert_keys(config.clone()).unwrap() };
            // What the config sets reads back as set; what it leaves unset is written as what this
            // model computes (ModernBERT's defaults differ), and reads back the same again.
            for key in config.keys() {
                assert_eq!(back.get(key), expected.get(key), "{family:?}: {key}");
            }
            assert_eq!(round_trip(back.clone()), back, "{family:?}");
        }
    }

    #[test]
    fn distilbert_names_map_onto_bert_paths_and_back() {
        let family = Family::DistilBert;
        let load = |name: &str| {
            let mut n = name.to_string();
            for (from, to) in family.load_renames() {
                n = regex::Regex::new(from).unwrap().replace_all(&n, *to).into_owned();
            }
            n
        };
        for (hf, ours) in [
            ("transformer.layer.1.attention.q_lin.weight", "encoder.layer.1.attention.self_attn.query.weight"),
            ("transformer.layer.0.attention.out_lin.bias", "encoder.layer.0.attention.output.dense.bias"),
            ("transformer.layer.0.sa_layer_norm.weight", "encoder.layer.0.attention.output.layer_norm.weight"),
            ("transformer.layer.3.ffn.lin1.weight", "encoder.layer.3.intermediate.dense.weight"),
            ("transformer.layer.3.ffn.lin2.bias", "encoder.layer.3.output.dense.bias"),
            ("transformer.layer.3.output_layer_norm.bias", "encoder.layer.3.output.layer_norm.bias"),
            ("embeddings.LayerNorm.weight", "embeddings.layer_norm.weight"),
        ] {
            assert_eq!(load(hf), ours);
            assert_eq!(family.to_checkpoint_name(ours), hf);
        }
        assert_eq!(Family::Bert.to_checkpoint_name("encoder.layer.0.attention.self_attn.key.weight"), "encoder.layer.0.attention.self.key.weight");
        assert_eq!(Family::Bert.to_checkpoint_name("embeddings.layer_norm.gamma"), "embeddings.LayerNorm.weight");
    }

    #[test]
    fn distilbert_config_keys_round_trip() {
        let given: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(r#"{"dim": 32, "n_layers": 2, "n_heads": 4, "hidden_dim": 64, "activation": "gelu", "dropout": 0.1, "attention_dropout": 0.2, "vocab_size": 99}"#).unwrap();
        let bert = Family::DistilBert.bert_keys(given).unwrap();
        assert_eq!(bert["hidden_size"], 32);
        assert_eq!(bert["num_hidden_layers"], 2);
        assert_eq!(bert["intermediate_size"], 64);
        assert_eq!(bert["attention_probs_dropout_prob"], 0.2);
        assert_eq!(bert["type_vocab_size"], 0);
        let back = Family::DistilBert.family_keys(bert);
        assert_eq!(back["dim"], 32);
        assert_eq!(back["attention_dropout"], 0.2);
        assert!(!back.contains_key("type_vocab_size"));
    }

    #[test]
    fn unsupported_families_are_named_with_the_supported_ones() {
        let err = Family::from_model_type("gpt2").unwrap_err();
        assert!(err.contains("decoder-only") && err.contains("distilbert"), "{err}");
        let err = Family::from_model_type("xlnet").unwrap_err();
        assert!(err.contains("xlnet") && err.contains(SUPPORTED), "{err}");
        assert_eq!(Family::from_model_type("roberta").unwrap().position_offset(1), 2);
        let err = Family::from_model_type("deberta").unwrap_err();
        assert!(err.contains("\"deberta\" is not supported") && err.contains(SUPPORTED), "{err}");
    }

    #[test]
    fn xlm_roberta_and_camembert_are_roberta_under_their_own_names() {
        use crate::bert::config::BertConfig;
        for (model_type, family, name, architecture) in [
            ("xlm-roberta", Family::XlmRoberta, "XLM-RoBERTa", "XLMRobertaModel"),
            ("camembert", Family::Camembert, "CamemBERT", "CamembertModel"),
        ] {
            assert_eq!(Family::from_model_type(model_type), Ok(family));
            assert_eq!((family.model_type(), family.display_name(), family.layout()), (model_type, name, Family::Roberta));
            assert_eq!(family.prefix(), "roberta.");
            assert_eq!(family.position_offset(1), 2);
            assert!(family.has_pooler());
            assert_eq!(family.mlm_marker(), "lm_head.bias");
            assert_eq!(family.mlm_architecture(), architecture.replace("Model", "ForMaskedLM"));
            assert_eq!(family.to_checkpoint_name("encoder.layer.0.attention.self_attn.key.weight"), "encoder.layer.0.attention.self.key.weight");
            // As xlm-roberta-base's config.json (trimmed): read, and written back under its own
            // model_type and class.
            let json = format!(r#"{{"model_type": "{model_type}", "architectures": ["{}"], "vocab_size": 250002, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072, "max_position_embeddings": 514, "type_vocab_size": 1, "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2, "layer_norm_eps": 1e-05}}"#, architecture.replace("Model", "ForMaskedLM"));
            let config = BertConfig::from_json_bytes(json.as_bytes()).unwrap();
            assert_eq!((config.model_type, config.max_len()), (family, 512));
            let back: serde_json::Value = serde_json::from_slice(&config.to_hf_json()).unwrap();
            assert_eq!((back["model_type"].as_str(), back["architectures"][0].as_str()), (Some(model_type), Some(architecture)));
        }
    }

    #[test]
    fn electra_embeddings_are_projected_where_narrower_than_the_encoder() {
        use crate::bert::config::BertConfig;
        let base = br#"{"model_type": "electra", "embedding_size": 768, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072}"#;
        let config = BertConfig::from_json_bytes(base).unwrap();
        assert_eq!(config.model_type, Family::Electra);
        assert!(!Family::Electra.has_pooler() && !config.projects_embeddings());
        // Written back with its embedding width, which ElectraConfig would default to 128.
        let json: serde_json::Value = serde_json::from_slice(&config.to_hf_json()).unwrap();
        assert_eq!(json["embedding_size"], 768);
        assert_eq!(json["architectures"][0], "ElectraModel");
        // ELECTRA-small projects 128-wide embeddings to 256; a file without the key takes
        // ElectraConfig's 128.
        for small in [&br#"{"model_type": "electra", "embedding_size": 128, "hidden_size": 256, "num_attention_heads": 4}"#[..], br#"{"model_type": "electra", "hidden_size": 256, "num_attention_heads": 4}"#] {
            let config = BertConfig::from_json_bytes(small).unwrap();
            assert_eq!((config.embedding_width(), config.hidden_size, config.projects_embeddings()), (128, 256, true));
            let json: serde_json::Value = serde_json::from_slice(&config.to_hf_json()).unwrap();
            assert_eq!(json["embedding_size"], 128);
        }
        // A family without a projection refuses narrower embeddings by name.
        let err = BertConfig::from_json_bytes(br#"{"model_type": "bert", "embedding_size": 128, "hidden_size": 256, "num_attention_heads": 4}"#).unwrap_err().to_string();
        assert!(err.contains("embedding_size 128 differs from hidden_size 256"), "{err}");
    }

    #[test]
    fn albert_shares_one_layer_and_projects_its_embeddings() {
        use crate::bert::config::{BertConfig, HiddenAct};
        // albert-base-v2's config.json (trimmed).
        let json = br#"{"model_type": "albert", "architectures": ["AlbertForMaskedLM"], "embedding_size": 128, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072, "hidden_act": "gelu_new", "num_hidden_groups": 1, "inner_group_num": 1, "vocab_size": 30000, "pad_token_id": 0, "bos_token_id": 2, "eos_token_id": 3}"#;
        let config = BertConfig::from_json_bytes(json).unwrap();
        assert_eq!((config.model_type, config.hidden_act, config.embedding_width()), (Family::Albert, HiddenAct::GeluApproximate, 128));
        assert_eq!((config.distinct_layers(), config.num_hidden_layers, config.projects_embeddings()), (1, 12, true));
        // albert-base-v2 has 11,683,584 parameters (AlbertModel, with pooler).
        assert_eq!(config.num_params(true), 11_683_584);
        // Left-out keys take AlbertConfig's defaults, not BERT's.
        let bare = BertConfig::from_json_bytes(br#"{"model_type": "albert"}"#).unwrap();
        assert_eq!((bare.vocab_size, bare.hidden_size, bare.embedding_width(), bare.hidden_dropout_prob), (30000, 4096, 128, 0.0));
        let back: serde_json::Value = serde_json::from_slice(&config.to_hf_json()).unwrap();
        assert_eq!((back["num_hidden_groups"].as_u64(), back["embedding_size"].as_u64(), back["architectures"][0].as_str()), (Some(1), Some(128), Some("AlbertModel")));
        for path in ["embeddings_project.weight", "encoder.layer.0.attention.self_attn.query.weight", "encoder.layer.0.attention.output.layer_norm.weight", "pooler.dense.bias"] {
            let name = Family::Albert.to_checkpoint_name(path);
            let mut back = name.clone();
            for (from, to) in Family::Albert.load_renames() {
                back = regex::Regex::new(from).unwrap().replace_all(&back, *to).into_owned();
            }
            assert_eq!(back, path, "{name}");
        }
        assert_eq!(Family::Albert.to_checkpoint_name("embeddings_project.weight"), "encoder.embedding_hidden_mapping_in.weight");
        assert_eq!(Family::Albert.to_checkpoint_name("encoder.layer.0.output.layer_norm.gamma"), "encoder.albert_layer_groups.0.albert_layers.0.full_layer_layer_norm.weight");
        assert_eq!(Family::Albert.to_checkpoint_name("encoder.layer.0.attention.output.dense.bias"), "encoder.albert_layer_groups.0.albert_layers.0.attention.dense.bias");
        assert_eq!(Family::Albert.to_checkpoint_name("pooler.dense.weight"), "pooler.weight");
        // Several groups of several layers: depth i of 3 runs group ⌊i / 1.5⌋, both its layers.
        let json = br#"{"model_type": "albert", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 3, "num_hidden_groups": 2, "inner_group_num": 2}"#;
        let config = BertConfig::from_json_bytes(json).unwrap();
        assert_eq!((config.layer_groups(), config.layers_per_group(), config.distinct_layers()), (2, 2, 4));
        let names = config.grouped_layer_names();
        assert_eq!(names[3], ("encoder.albert_layer_groups.1.albert_layers.1.".to_string(), "encoder.layer.3.".to_string()));
        let back: serde_json::Value = serde_json::from_slice(&config.to_hf_json()).unwrap();
        assert_eq!((back["num_hidden_groups"].as_u64(), back["inner_group_num"].as_u64()), (Some(2), Some(2)));
        assert!(config.distinctions().join("; ").contains("2 groups of 2 layers, run one after the other, the 3 depths split evenly"));
        let zero = br#"{"model_type": "albert", "hidden_size": 64, "num_attention_heads": 4, "inner_group_num": 0}"#;
        assert!(BertConfig::from_json_bytes(zero).unwrap_err().to_string().contains("at least 1"));
    }

    #[test]
    fn mpnet_reads_its_own_names_and_keys_and_refuses_another_padding_id() {
        use crate::bert::config::BertConfig;
        // all-mpnet-base-v2's config.json (trimmed): no segments, positions after padding id 1.
        let json = br#"{"model_type": "mpnet", "architectures": ["MPNetForMaskedLM"], "vocab_size": 30527, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072, "max_position_embeddings": 514, "relative_attention_num_buckets": 32, "layer_norm_eps": 1e-05, "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2}"#;
        let config = BertConfig::from_json_bytes(json).unwrap();
        assert_eq!((config.model_type, config.type_vocab_size, config.max_len(), config.relative_attention_buckets()), (Family::MpNet, 0, 512, 32));
        // MPNetModel of all-mpnet-base-v2: 109,486,464 parameters, the bias table's 32 × 12 included.
        assert_eq!(config.num_params(true), 109_486_464);
        let back: serde_json::Value = serde_json::from_slice(&config.to_hf_json()).unwrap();
        assert_eq!((back["architectures"][0].as_str(), back["relative_attention_num_buckets"].as_u64()), (Some("MPNetModel"), Some(32)));
        assert!(back.get("type_vocab_size").is_none() && back.get("position_embedding_type").is_none());
        // What the page shows as setting it apart, beside ALBERT's and BERT's (nothing).
        let apart = config.distinctions();
        assert!(apart.len() == 2 && apart[0].contains("32 buckets: each distance under 8 its own") && apart[1].contains("no sentence A/B segment"), "{apart:?}");
        let albert = BertConfig::from_json_bytes(br#"{"model_type": "albert", "embedding_size": 128, "hidden_size": 768, "num_attention_heads": 12, "num_hidden_layers": 12}"#).unwrap();
        assert_eq!(albert.distinctions(), ["embeddings 128 wide, projected up to 768", "one layer's parameters shared by all 12 layers"]);
        assert!(BertConfig::new().distinctions().is_empty());
        for (hf, ours) in [
            ("encoder.layer.3.attention.attn.q.weight", "encoder.layer.3.attention.self_attn.query.weight"),
            ("encoder.layer.3.attention.attn.o.bias", "encoder.layer.3.attention.output.dense.bias"),
            ("encoder.layer.3.attention.LayerNorm.weight", "encoder.layer.3.attention.output.layer_norm.weight"),
            ("encoder.layer.3.output.LayerNorm.bias", "encoder.layer.3.output.layer_norm.bias"),
            ("encoder.relative_attention_bias.weight", "encoder.relative_attention_bias.weight"),
        ] {
            assert_eq!(Family::MpNet.to_checkpoint_name(ours), hf);
        }
        let err = BertConfig::from_json_bytes(br#"{"model_type": "mpnet", "pad_token_id": 0}"#).unwrap_err().to_string();
        assert!(err.contains("pad_token_id 0") && err.contains("padding id 1"), "{err}");
        let err = BertConfig::from_json_bytes(br#"{"model_type": "mpnet", "relative_attention_num_buckets": 16}"#).unwrap_err().to_string();
        assert!(err.contains("relative_attention_num_buckets 16"), "{err}");
    }
}
