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
//!
//! XLM-RoBERTa and CamemBERT are RoBERTa's encoder and checkpoint layout under other names (in
//! `transformers` their classes copy RoBERTa's, `base_model_prefix = "roberta"`), with a
//! SentencePiece Unigram tokenizer: [`Family::layout`] is RoBERTa for both, and only their
//! `model_type` and class names are their own, so an export loads as their own classes.
//!
//! ELECTRA is read where its embeddings are as wide as its encoder (`embedding_size` =
//! `hidden_size`: the base and large discriminators); ELECTRA-small projects 128-wide embeddings
//! up to 256 (`embeddings_project`), which this encoder does not have, and is refused by name.
//!
//! Every family loads into the same [`BertModel`](crate::bert::model::BertModel): a checkpoint's
//! names are mapped onto BERT's module paths on load and back onto the family's own names on
//! save, so a model exports under the names `transformers` expects of it.

use serde::{Deserialize, Serialize};

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
}

/// The `model_type`s this crate reads, for messages.
pub const SUPPORTED: &str = "bert, roberta, distilbert, electra, xlm-roberta, camembert";

impl Family {
    /// The family of a `config.json` `model_type`, or a message naming what is supported.
    pub fn from_model_type(model_type: &str) -> Result<Self, String> {
        match model_type {
            "bert" => Ok(Family::Bert),
            "roberta" => Ok(Family::Roberta),
            "distilbert" => Ok(Family::DistilBert),
            "electra" => Ok(Family::Electra),
            "xlm-roberta" => Ok(Family::XlmRoberta),
            "camembert" => Ok(Family::Camembert),
            "gpt2" | "gpt_neo" | "gptj" | "llama" | "mistral" | "qwen2" | "phi" | "opt" | "bloom" | "falcon" => Err(format!(
                "model_type \"{model_type}\" is a decoder-only (text generation) model; bertbench runs encoders: {SUPPORTED}"
            )),
            other => Err(format!("model_type \"{other}\" is not supported; bertbench runs these encoder families: {SUPPORTED}")),
        }
    }

    /// `model_type` as `config.json` writes it.
    pub fn model_type(self) -> &'static str {
        match self {
            Family::Bert => "bert",
            Family::Roberta => "roberta",
            Family::DistilBert => "distilbert",
            Family::Electra => "electra",
            Family::XlmRoberta => "xlm-roberta",
            Family::Camembert => "camembert",
        }
    }

    /// The family whose encoder and checkpoint layout this one has: tensor names, heads, the
    /// position offset and the pooler. XLM-RoBERTa and CamemBERT are laid out as RoBERTa.
    pub fn layout(self) -> Family {
        match self {
            Family::XlmRoberta | Family::Camembert => Family::Roberta,
            other => other,
        }
    }

    /// The name people know it by.
    pub fn display_name(self) -> &'static str {
        match self {
            Family::Bert => "BERT",
            Family::Roberta => "RoBERTa",
            Family::DistilBert => "DistilBERT",
            Family::Electra => "ELECTRA",
            Family::XlmRoberta => "XLM-RoBERTa",
            Family::Camembert => "CamemBERT",
        }
    }

    /// The encoder's prefix inside task checkpoints (`BertForMaskedLM` stores `bert.embeddings…`).
    pub fn prefix(self) -> &'static str {
        match self {
            Family::Bert => "bert.",
            Family::Roberta | Family::XlmRoberta | Family::Camembert => "roberta.",
            Family::DistilBert => "distilbert.",
            Family::Electra => "electra.",
        }
    }

    /// The architecture name of the bare encoder in `config.json`.
    pub fn base_architecture(self) -> &'static str {
        match self {
            Family::Bert => "BertModel",
            Family::Roberta => "RobertaModel",
            Family::DistilBert => "DistilBertModel",
            Family::Electra => "ElectraModel",
            Family::XlmRoberta => "XLMRobertaModel",
            Family::Camembert => "CamembertModel",
        }
    }

    /// The first position id: RoBERTa counts positions from `pad_token_id + 1` (its position
    /// table's first rows are never used for real tokens).
    pub fn position_offset(self, pad_token_id: usize) -> usize {
        match self {
            Family::Roberta | Family::XlmRoberta | Family::Camembert => pad_token_id + 1,
            Family::Bert | Family::DistilBert | Family::Electra => 0,
        }
    }

    /// Whether the family has a pooler (`tanh(dense([CLS]))`) in its base model.
    pub fn has_pooler(self) -> bool {
        !matches!(self, Family::DistilBert | Family::Electra)
    }

    /// Checkpoint name → module path, applied in order (after the family prefix is removed).
    pub fn load_renames(self) -> &'static [(&'static str, &'static str)] {
        const COMMON: [(&str, &str); 2] = [(r"\.LayerNorm\.", ".layer_norm."), (r"\.attention\.self\.", ".attention.self_attn.")];
        const DISTIL: [(&str, &str); 10] = [
            (r"^transformer\.layer\.", "encoder.layer."),
            (r"\.attention\.q_lin\.", ".attention.self_attn.query."),
            (r"\.attention\.k_lin\.", ".attention.self_attn.key."),
            (r"\.attention\.v_lin\.", ".attention.self_attn.value."),
            (r"\.attention\.out_lin\.", ".attention.output.dense."),
            (r"\.sa_layer_norm\.", ".attention.output.layer_norm."),
            (r"\.ffn\.lin1\.", ".intermediate.dense."),
            (r"\.ffn\.lin2\.", ".output.dense."),
            (r"\.output_layer_norm\.", ".output.layer_norm."),
            (r"\.LayerNorm\.", ".layer_norm."),
        ];
        match self {
            Family::DistilBert => &DISTIL,
            Family::Bert | Family::Roberta | Family::Electra | Family::XlmRoberta | Family::Camembert => &COMMON,
        }
    }

    /// Module path → the family's checkpoint name, applied in order (the inverse of
    /// [`Family::load_renames`]).
    pub fn save_renames(self) -> &'static [(&'static str, &'static str)] {
        const COMMON: [(&str, &str); 2] = [(r"\.layer_norm\.", ".LayerNorm."), (r"\.self_attn\.", ".self.")];
        const DISTIL: [(&str, &str); 10] = [
            (r"^encoder\.layer\.", "transformer.layer."),
            (r"\.attention\.self_attn\.query\.", ".attention.q_lin."),
            (r"\.attention\.self_attn\.key\.", ".attention.k_lin."),
            (r"\.attention\.self_attn\.value\.", ".attention.v_lin."),
            (r"\.attention\.output\.dense\.", ".attention.out_lin."),
            (r"\.attention\.output\.layer_norm\.", ".sa_layer_norm."),
            (r"\.intermediate\.dense\.", ".ffn.lin1."),
            (r"\.output\.dense\.", ".ffn.lin2."),
            (r"\.output\.layer_norm\.", ".output_layer_norm."),
            (r"\.layer_norm\.", ".LayerNorm."),
        ];
        match self {
            Family::DistilBert => &DISTIL,
            Family::Bert | Family::Roberta | Family::Electra | Family::XlmRoberta | Family::Camembert => &COMMON,
        }
    }

    /// Prefixes of task-head tensors in this family's checkpoints: kept apart from the encoder
    /// (and read by the task that uses them) instead of refusing the file.
    pub fn head_prefixes(self) -> &'static [&'static str] {
        match self {
            Family::Bert => &["cls.", "classifier.", "qa_outputs."],
            Family::Roberta | Family::XlmRoberta | Family::Camembert => &["lm_head.", "classifier.", "qa_outputs."],
            Family::DistilBert => &["vocab_transform.", "vocab_layer_norm.", "vocab_projector.", "pre_classifier.", "classifier.", "qa_outputs."],
            Family::Electra => &["discriminator_predictions.", "generator_predictions.", "generator_lm_head.", "classifier.", "qa_outputs."],
        }
    }

    /// The tensor that marks a masked-language-model head (its output bias).
    pub fn mlm_marker(self) -> &'static str {
        match self {
            Family::Bert => "cls.predictions.bias",
            Family::Roberta | Family::XlmRoberta | Family::Camembert => "lm_head.bias",
            Family::DistilBert => "vocab_projector.bias",
            Family::Electra => "generator_lm_head.bias",
        }
    }

    /// Checkpoint name → path in [`PretrainingHeads`](crate::tasks::pretraining::PretrainingHeads)
    /// (`predictions.transform.dense`, `predictions.transform.layer_norm`, `predictions.bias`,
    /// `seq_relationship`), for the family's masked-language-model head. The decoder's weight
    /// is the word-embedding table (tied) in every family.
    pub fn mlm_renames(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Family::Bert => &[(r"^cls\.", ""), (r"\.LayerNorm\.", ".layer_norm.")],
            Family::Roberta | Family::XlmRoberta | Family::Camembert => &[
                (r"^lm_head\.dense\.", "predictions.transform.dense."),
                (r"^lm_head\.layer_norm\.", "predictions.transform.layer_norm."),
                (r"^lm_head\.bias$", "predictions.bias"),
            ],
            Family::DistilBert => &[
                (r"^vocab_transform\.", "predictions.transform.dense."),
                (r"^vocab_layer_norm\.", "predictions.transform.layer_norm."),
                (r"^vocab_projector\.bias$", "predictions.bias"),
            ],
            Family::Electra => &[
                (r"^generator_predictions\.dense\.", "predictions.transform.dense."),
                (r"^generator_predictions\.LayerNorm\.", "predictions.transform.layer_norm."),
                (r"^generator_predictions\.layer_norm\.", "predictions.transform.layer_norm."),
                (r"^generator_lm_head\.bias$", "predictions.bias"),
            ],
        }
    }

    /// The inverse of [`Family::mlm_renames`]: a [`PretrainingHeads`](crate::tasks::pretraining::PretrainingHeads)
    /// path → the family's checkpoint name, for export. Only BERT has a next-sentence head.
    pub fn mlm_save_renames(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Family::Bert => &[(r"^", "cls."), (r"\.layer_norm\.", ".LayerNorm.")],
            Family::Roberta | Family::XlmRoberta | Family::Camembert => &[
                (r"^predictions\.transform\.dense\.", "lm_head.dense."),
                (r"^predictions\.transform\.layer_norm\.", "lm_head.layer_norm."),
                (r"^predictions\.bias$", "lm_head.bias"),
            ],
            Family::DistilBert => &[
                (r"^predictions\.transform\.dense\.", "vocab_transform."),
                (r"^predictions\.transform\.layer_norm\.", "vocab_layer_norm."),
                (r"^predictions\.bias$", "vocab_projector.bias"),
            ],
            Family::Electra => &[
                (r"^predictions\.transform\.dense\.", "generator_predictions.dense."),
                (r"^predictions\.transform\.layer_norm\.", "generator_predictions.LayerNorm."),
                (r"^predictions\.bias$", "generator_lm_head.bias"),
            ],
        }
    }

    /// The `transformers` class of an encoder with its masked-language-model head.
    pub fn mlm_architecture(self) -> &'static str {
        match self {
            Family::Bert => "BertForMaskedLM",
            Family::Roberta => "RobertaForMaskedLM",
            Family::DistilBert => "DistilBertForMaskedLM",
            Family::Electra => "ElectraForMaskedLM",
            Family::XlmRoberta => "XLMRobertaForMaskedLM",
            Family::Camembert => "CamembertForMaskedLM",
        }
    }

    /// Maps a module path to this family's checkpoint name (for messages and export).
    pub fn to_checkpoint_name(self, path: &str) -> String {
        let mut name = path.replace(".gamma", ".weight").replace(".beta", ".bias");
        for (from, to) in self.save_renames() {
            name = regex::Regex::new(from).expect("static pattern").replace_all(&name, *to).into_owned();
        }
        name
    }

    /// Translates a DistilBERT `config.json` object into BERT's keys (the other families use
    /// BERT's keys already). DistilBERT's LayerNorm epsilon is fixed at 1e-12 in `transformers`.
    pub fn bert_keys(self, config: serde_json::Map<String, serde_json::Value>) -> serde_json::Map<String, serde_json::Value> {
        if self != Family::DistilBert {
            return config;
        }
        const KEYS: [(&str, &str); 6] = [
            ("dim", "hidden_size"),
            ("n_layers", "num_hidden_layers"),
            ("n_heads", "num_attention_heads"),
            ("hidden_dim", "intermediate_size"),
            ("activation", "hidden_act"),
            ("dropout", "hidden_dropout_prob"),
        ];
        let mut out = serde_json::Map::new();
        for (key, value) in config {
            let renamed = KEYS.iter().find(|(from, _)| *from == key).map(|(_, to)| to.to_string());
            match (key.as_str(), renamed) {
                ("attention_dropout", _) => out.insert("attention_probs_dropout_prob".into(), value),
                (_, Some(to)) => out.insert(to, value),
                _ => out.insert(key, value),
            };
        }
        out.insert("type_vocab_size".into(), 0.into());
        out.insert("layer_norm_eps".into(), serde_json::json!(1e-12));
        out
    }

    /// The inverse of [`Family::bert_keys`], for writing a `config.json`.
    pub fn family_keys(self, mut config: serde_json::Map<String, serde_json::Value>) -> serde_json::Map<String, serde_json::Value> {
        if self == Family::Electra {
            // transformers' ElectraConfig defaults to 128-wide embeddings; these are as wide as
            // the encoder.
            let width = config.get("hidden_size").cloned().unwrap_or_default();
            config.insert("embedding_size".into(), width);
        }
        if self != Family::DistilBert {
            return config;
        }
        let mut out = serde_json::Map::new();
        for (key, value) in config {
            let to = match key.as_str() {
                "hidden_size" => "dim",
                "num_hidden_layers" => "n_layers",
                "num_attention_heads" => "n_heads",
                "intermediate_size" => "hidden_dim",
                "hidden_act" => "activation",
                "hidden_dropout_prob" => "dropout",
                "attention_probs_dropout_prob" => "attention_dropout",
                "type_vocab_size" | "layer_norm_eps" => continue,
                other => other,
            };
            out.insert(to.into(), value);
        }
        out.insert("sinusoidal_pos_embds".into(), false.into());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let bert = Family::DistilBert.bert_keys(given);
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
        for other in ["albert", "deberta-v2", "mpnet", "modernbert"] {
            let err = Family::from_model_type(other).unwrap_err();
            assert!(err.contains(&format!("\"{other}\" is not supported")) && err.contains(SUPPORTED), "{err}");
        }
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
    fn electra_is_read_where_its_embeddings_are_as_wide_as_its_encoder() {
        use crate::bert::config::BertConfig;
        let base = br#"{"model_type": "electra", "embedding_size": 768, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072}"#;
        let config = BertConfig::from_json_bytes(base).unwrap();
        assert_eq!(config.model_type, Family::Electra);
        assert!(!Family::Electra.has_pooler());
        // Written back with its embedding width, which ElectraConfig would default to 128.
        let json: serde_json::Value = serde_json::from_slice(&config.to_hf_json()).unwrap();
        assert_eq!(json["embedding_size"], 768);
        assert_eq!(json["architectures"][0], "ElectraModel");
        // ELECTRA-small projects 128-wide embeddings to 256 (and the defaults say the same).
        for small in [&br#"{"model_type": "electra", "embedding_size": 128, "hidden_size": 256, "num_attention_heads": 4}"#[..], br#"{"model_type": "electra"}"#] {
            let err = BertConfig::from_json_bytes(small).unwrap_err().to_string();
            assert!(err.contains("128-wide embeddings up to its 256-wide encoder"), "{err}");
        }
    }
}
