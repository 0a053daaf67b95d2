//! ModernBERT (Warner et al. 2024): an encoder whose layers differ from BERT's throughout. No
//! position embeddings but rotary positions in attention, with one base for the global layers and
//! another for the local ones; pre-norm layers (layer 0 reads the embeddings' LayerNorm directly)
//! and a final LayerNorm; one fused `Wqkv` projection; a gated GELU feed-forward block (`Wi`
//! projects to twice the intermediate width, `act(input) * gate`, then `Wo`); attention that
//! alternates between every token (global) and a window around each token (local); no biases and
//! LayerNorms without shift by default; no segments, no pooler. Its byte-level BPE
//! `tokenizer.json` wraps a text as `[CLS] A [SEP]` and a pair as `[CLS] A [SEP] B [SEP]`, all
//! segment 0.
//!
//! `ModernBertForMaskedLM` keeps its head as `head` (dense → activation → LayerNorm, BERT's
//! transform) and `decoder` (tied to the word embeddings, with a bias). Its
//! `ForSequenceClassification` pools the last layer (`classifier_pooling`: the first token or the
//! mean) and applies the same `head` before `classifier`: the model holds that head as a pooler
//! with a LayerNorm, and so it does for `ModernBertForMultipleChoice`, which pools each ending
//! the same way ([`FamilyFacts::choice_reads_sequence_head`]). Its token-classification and
//! question-answering classes apply the `head` to every token before `classifier` (the answer
//! span's output layer too is `classifier`, not `qa_outputs`): the token and span heads hold it
//! as their [`HeadTransform`](crate::tasks::classification::HeadTransform)
//! ([`FamilyFacts::token_head_transform`]). A run starts each of these heads from the
//! checkpoint's `head.*` (an MLM checkpoint's, as `transformers` loads it), else fresh as
//! `transformers` initialises it; exports are the family's own classes.
//!
//! Read exactly or refused by name: an activation other than GELU (exact or tanh) or ReLU, a
//! rotary scaling (`rope_type` other than `default`, `rope_scaling`), a `head_dim` other than
//! `hidden_size / num_attention_heads`, a `classifier_pooling` other than `cls` or `mean`, a
//! `layer_types` entry other than `full_attention` or `sliding_attention`.

use super::*;

pub(super) const FACTS: FamilyFacts = FamilyFacts {
    model_type: "modernbert",
    display_name: "ModernBERT",
    layout: Family::ModernBert,
    prefix: "model.",
    base_architecture: "ModernBertModel",
    mlm_architecture: "ModernBertForMaskedLM",
    positions: Positions::Rotary,
    segments: false,
    segments_optional: false,
    pooler: false,
    // `ModernBertForSequenceClassification`: classifier(drop(norm(act(dense(pooled))))).
    sequence_head: SequenceHead { dense: "head.dense.", out: "classifier.", norm: "head.norm." },
    sequence_activation: PoolerActivation::Gelu,
    choice_reads_sequence_head: true,
    load_renames: &[
        (r"^embeddings\.tok_embeddings\.", "embeddings.word_embeddings."),
        (r"^embeddings\.norm\.", "embeddings.layer_norm."),
        (r"^layers\.", "encoder.layers."),
        (r"^final_norm\.", "encoder.final_norm."),
        (r"\.Wqkv\.", ".wqkv."),
        (r"\.Wo\.", ".wo."),
        (r"\.Wi\.", ".wi."),
    ],
    save_renames: &[
        (r"^embeddings\.word_embeddings\.", "embeddings.tok_embeddings."),
        (r"^embeddings\.layer_norm\.", "embeddings.norm."),
        (r"^encoder\.layers\.", "layers."),
        (r"^encoder\.final_norm\.", "final_norm."),
        (r"\.wqkv\.", ".Wqkv."),
        (r"\.wo\.", ".Wo."),
        (r"\.wi\.", ".Wi."),
    ],
    head_prefixes: &["head.", "decoder.", "classifier."],
    mlm_marker: "decoder.bias",
    mlm_renames: &[
        (r"^head\.dense\.", "predictions.transform.dense."),
        (r"^head\.norm\.", "predictions.transform.layer_norm."),
        (r"^decoder\.bias$", "predictions.bias"),
    ],
    mlm_save_renames: &[
        (r"^predictions\.transform\.dense\.", "head.dense."),
        (r"^predictions\.transform\.layer_norm\.", "head.norm."),
        (r"^predictions\.bias$", "decoder.bias"),
    ],
    mlm_head_gelu: false,
    pair_head: None,
    embedding_projection: EmbeddingProjection::None,
    shared_layers: false,
    relative_attention: None,
    layer: LayerKind::PreNormGated,
    token_head_transform: true,
    // `ModernBertForQuestionAnswering` calls its output layer `classifier`, as the others do.
    qa_outputs: "classifier.",
    // ModernBERT's folders name no class of its own: `transformers` builds the tokenizer from
    // `tokenizer.json` alone.
    tokenizer_class: Some("PreTrainedTokenizerFast"),
    wordpiece_tokenizer: false,
    read_config,
    write_config,
};

/// ModernBERT's keys → BERT's.
const KEYS: [(&str, &str); 4] = [
    ("hidden_activation", "hidden_act"),
    ("norm_eps", "layer_norm_eps"),
    ("mlp_dropout", "hidden_dropout_prob"),
    ("attention_dropout", "attention_probs_dropout_prob"),
];

/// The activations computed here, as `transformers`' `ACT2FN` names them ([`HiddenAct`](crate::nn::activation::HiddenAct)).
const ACTIVATIONS: [&str; 8] = ["gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast", "relu", "silu", "swish", "tanh"];

/// `ModernBertConfig`'s defaults (ModernBERT-base's sizes), in BERT's keys.
fn defaults() -> Json {
    serde_json::json!({
        "vocab_size": 50368, "hidden_size": 768, "intermediate_size": 1152, "num_hidden_layers": 22,
        "num_attention_heads": 12, "hidden_act": "gelu", "max_position_embeddings": 8192,
        "initializer_range": 0.02, "layer_norm_eps": 1e-5, "norm_bias": false, "pad_token_id": 50283,
        "attention_bias": false, "attention_probs_dropout_prob": 0.0, "local_attention": 128,
        "hidden_dropout_prob": 0.0, "mlp_bias": false, "decoder_bias": true, "classifier_pooling": "cls",
        "classifier_bias": false, "classifier_activation": "gelu", "tie_word_embeddings": true,
    })
    .as_object()
    .cloned()
    .expect("an object")
}

/// `ModernBertConfig` as `transformers` 5.24 reads it, in BERT's keys: its defaults for what is
/// left out, `layer_types` (or the older `global_attn_every_n_layers`, 3 by default: every third
/// layer global, layer 0 first), the rotary bases from `rope_parameters` (or the older
/// `global_rope_theta` / `local_rope_theta`; 160,000 and 10,000 by default). What it cannot
/// compute exactly is refused by name.
fn read_config(config: Json) -> Result<Json, String> {
    let mut out = defaults();
    for (key, value) in config.into_iter().filter(|(_, v)| !v.is_null()) {
        let to = KEYS.iter().find(|(from, _)| *from == key).map_or(key, |(_, to)| to.to_string());
        out.insert(to, value);
    }
    for (key, shown) in [("hidden_act", "hidden_activation"), ("classifier_activation", "classifier_activation")] {
        let act = out.get(key).and_then(serde_json::Value::as_str).unwrap_or_default();
        if !ACTIVATIONS.contains(&act) {
            return Err(format!("this ModernBERT's {shown} is {}; bertbench computes {}", out[key], ACTIVATIONS.join(", ")));
        }
    }
    match out.get("classifier_pooling").and_then(serde_json::Value::as_str) {
        Some("cls" | "mean") => {}
        _ => return Err(format!("this ModernBERT's classifier_pooling is {}; transformers pools \"cls\" or \"mean\"", out["classifier_pooling"])),
    }
    let count = |key: &str| out.get(key).and_then(serde_json::Value::as_u64);
    let every = count("global_attn_every_n_layers").unwrap_or(3);
    let (hidden, heads) = (count("hidden_size").unwrap_or(0), count("num_attention_heads").unwrap_or(0));
    if let Some(head_dim) = count("head_dim").filter(|&d| heads > 0 && d != hidden / heads) {
        return Err(format!("this ModernBERT has head_dim {head_dim}, not hidden_size / num_attention_heads = {}; ModernBERT's attention is that wide", hidden / heads.max(1)));
    }
    let layers = count("num_hidden_layers").unwrap_or(0) as usize;
    out.remove("head_dim");
    let kinds: Vec<serde_json::Value> = match out.remove("layer_types") {
        Some(serde_json::Value::Array(kinds)) => {
            if let Some(other) = kinds.iter().find(|k| !matches!(k.as_str(), Some("full_attention" | "sliding_attention"))) {
                return Err(format!("this ModernBERT's layer_types holds {other}; its layers are \"full_attention\" or \"sliding_attention\""));
            }
            kinds
        }
        Some(other) => return Err(format!("this ModernBERT's layer_types is {other}, not a list of layer types")),
        None => {
            if every == 0 {
                return Err("this ModernBERT has global_attn_every_n_layers 0; every n-th layer is global, n at least 1".into());
            }
            (0..layers as u64).map(|i| if i % every == 0 { "full_attention" } else { "sliding_attention" }.into()).collect()
        }
    };
    out.remove("global_attn_every_n_layers");
    out.insert("layer_types".into(), kinds.into());
    if let Some(scaling) = out.remove("rope_scaling") {
        return Err(format!("this ModernBERT scales its rotary positions (rope_scaling {scaling}); bertbench computes the plain rotation (rope_type \"default\")"));
    }
    let rope = out.remove("rope_parameters");
    for (kind, key, default) in [("full_attention", "global_rope_theta", 160_000.0), ("sliding_attention", "local_rope_theta", 10_000.0)] {
        let params = rope.as_ref().and_then(|r| r.get(kind));
        let rope_type = params.and_then(|p| p.get("rope_type")).and_then(serde_json::Value::as_str).unwrap_or("default");
        if rope_type != "default" {
            return Err(format!("this ModernBERT's {kind} layers use rope_type \"{rope_type}\"; bertbench computes the plain rotation (\"default\")"));
        }
        if let Some(factor) = params.and_then(|p| p.get("partial_rotary_factor")).and_then(serde_json::Value::as_f64).filter(|&f| f != 1.0) {
            return Err(format!("this ModernBERT rotates a part of each head (partial_rotary_factor {factor}); bertbench rotates whole heads"));
        }
        let theta = params.and_then(|p| p.get("rope_theta")).or_else(|| out.get(key)).and_then(serde_json::Value::as_f64).unwrap_or(default);
        out.insert(key.into(), theta.into());
    }
    // Its embeddings' dropout is the feed-forward's here (`hidden_dropout_prob`), written back so.
    out.remove("embedding_dropout");
    out.insert("type_vocab_size".into(), 0.into());
    Ok(out)
}

/// ModernBERT's keys: its names for the activation, the LayerNorm epsilon and the dropouts (the
/// embeddings' dropout is the feed-forward's here), the layer types and the rotary bases as
/// `transformers` 5.24 writes them; no segments, no position type.
fn write_config(mut config: Json) -> Json {
    // A config built here rather than read may leave these unset: the model then has biases, the
    // encoder's activation in its head and global attention in every layer, none of which is
    // ModernBERT's default. Written out, `transformers` (and this reader) build the same model.
    for key in ["norm_bias", "attention_bias", "mlp_bias", "classifier_bias", "decoder_bias"] {
        config.entry(key).or_insert(true.into());
    }
    let activation = config.get("hidden_act").cloned().unwrap_or_else(|| "gelu".into());
    config.entry("classifier_activation").or_insert(activation);
    let layers = config.get("num_hidden_layers").and_then(serde_json::Value::as_u64).unwrap_or(0) as usize;
    config.entry("layer_types").or_insert_with(|| vec!["full_attention"; layers].into());
    let mut out = Json::new();
    let mut rope = Json::new();
    for (key, value) in config {
        match key.as_str() {
            "type_vocab_size" | "position_embedding_type" => {}
            // Both spellings: transformers 5 reads `rope_parameters`, 4 the two bases.
            "global_rope_theta" => {
                rope.insert("full_attention".into(), serde_json::json!({ "rope_type": "default", "rope_theta": value }));
                out.insert(key, value);
            }
            "local_rope_theta" => {
                rope.insert("sliding_attention".into(), serde_json::json!({ "rope_type": "default", "rope_theta": value }));
                out.insert(key, value);
            }
            _ => {
                if key == "hidden_dropout_prob" {
                    out.insert("embedding_dropout".into(), value.clone());
                }
                let to = KEYS.iter().find(|(_, to)| *to == key).map_or(key, |(from, _)| from.to_string());
                out.insert(to, value);
            }
        }
    }
    if !rope.is_empty() {
        out.insert("rope_parameters".into(), rope.into());
    }
    // transformers 4 has no `layer_types`: every n-th layer is global, layer 0 first. Written
    // where the layers follow that pattern (as every released ModernBERT's do).
    let kinds: Vec<bool> = out.get("layer_types").and_then(serde_json::Value::as_array).map_or_else(Vec::new, |k| k.iter().map(|k| k == "full_attention").collect());
    if let Some(every) = (1..=kinds.len()).find(|n| kinds.iter().enumerate().all(|(i, global)| *global == (i % n == 0))) {
        out.insert("global_attn_every_n_layers".into(), every.into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bert::config::{AttentionKind, BertConfig, HeadPooling, HiddenAct};

    /// ModernBERT-base's `config.json` on the Hub (trimmed), in the older keys.
    const BASE: &str = r#"{"architectures": ["ModernBertForMaskedLM"], "model_type": "modernbert", "vocab_size": 50368,
        "hidden_size": 768, "intermediate_size": 1152, "num_hidden_layers": 22, "num_attention_heads": 12,
        "hidden_activation": "gelu", "max_position_embeddings": 8192, "norm_eps": 1e-05, "norm_bias": false,
        "global_rope_theta": 160000.0, "local_rope_theta": 10000.0, "global_attn_every_n_layers": 3,
        "local_attention": 128, "attention_bias": false, "mlp_bias": false, "classifier_pooling": "mean",
        "classifier_activation": "gelu", "decoder_bias": true, "embedding_dropout": 0.0, "mlp_dropout": 0.0,
        "attention_dropout": 0.0, "pad_token_id": 50283, "bos_token_id": 50281, "eos_token_id": 50282,
        "cls_token_id": 50281, "sep_token_id": 50282, "sparse_prediction": false, "tie_word_embeddings": true}"#;

    #[test]
    fn modernbert_base_reads_with_its_layer_types_and_rotary_bases() {
        let config = BertConfig::from_json_bytes(BASE.as_bytes()).unwrap();
        assert_eq!((config.model_type, config.type_vocab_size, config.max_len(), config.hidden_act), (Family::ModernBert, 0, 8192, HiddenAct::Gelu));
        assert_eq!(config.read_len(), crate::bert::config::MAX_READ_TOKENS, "8,192 positions, read 512 at a time");
        let kinds = config.attention_kinds();
        assert_eq!(kinds.len(), 22);
        assert_eq!((kinds[0], kinds[1], kinds[2], kinds[3]), (AttentionKind::FullAttention, AttentionKind::SlidingAttention, AttentionKind::SlidingAttention, AttentionKind::FullAttention));
        assert_eq!((config.global_rope_theta, config.local_rope_theta, config.local_reach()), (Some(160_000.0), Some(10_000.0), 64));
        assert_eq!((config.norm_bias(), config.classifier_pooling), (false, Some(HeadPooling::Mean)));
        // ModernBERT-base's ModernBertModel: 149,014,272 parameters (the model card's 149M).
        assert_eq!(config.num_params(false), 149_014_272);
        // Written back as transformers 5.24 writes it, and read back the same.
        let json: serde_json::Value = serde_json::from_slice(&config.to_hf_json()).unwrap();
        assert_eq!(json["rope_parameters"]["sliding_attention"]["rope_theta"], 10_000.0);
        assert_eq!((json["hidden_activation"].as_str(), json["norm_eps"].as_f64(), json["architectures"][0].as_str()), (Some("gelu"), Some(1e-5), Some("ModernBertModel")));
        assert_eq!(json["layer_types"][3], "full_attention");
        // And as transformers 4 reads it: the two bases, every third layer global.
        assert_eq!((json["global_rope_theta"].as_f64(), json["local_rope_theta"].as_f64(), json["global_attn_every_n_layers"].as_u64()), (Some(160_000.0), Some(10_000.0), Some(3)));
        let ids = ["pad_token_id", "bos_token_id", "eos_token_id", "cls_token_id", "sep_token_id"].map(|k| json[k].as_u64());
        assert_eq!(ids, [Some(50283), Some(50281), Some(50282), Some(50281), Some(50282)], "the special ids are kept");
        assert!(json.get("type_vocab_size").is_none() && json.get("hidden_act").is_none());
        assert_eq!(BertConfig::from_json_bytes(&config.to_hf_json()).unwrap(), config);
        let apart = config.distinctions().join("; ");
        for said in ["rotary positions", "base 160000 in global layers, 10000 in local", "pre-norm", "GeGLU", "local attention in 14 of 22 layers", "64 tokens either side", "no biases"] {
            assert!(apart.contains(said), "{said}: {apart}");
        }
    }

    #[test]
    fn a_config_built_here_is_written_as_the_model_it_builds() {
        // Left unset, these mean biases, the encoder's activation in the head and global
        // attention everywhere here; ModernBERT's defaults are none of these, so they are written.
        let config = crate::bert::config::Preset::Tiny.config(64).with_num_hidden_layers(2).with_model_type(Family::ModernBert)
            .with_type_vocab_size(0).with_hidden_act(HiddenAct::Relu);
        let back = BertConfig::from_json_bytes(&config.to_hf_json()).unwrap();
        assert_eq!(back.attention_kinds(), vec![AttentionKind::FullAttention; 2]);
        assert_eq!((back.norm_bias(), back.attention_bias, back.mlp_bias, back.classifier_bias), (true, Some(true), Some(true), Some(true)));
        assert_eq!((back.classifier_activation, back.decoder_bias, back.classifier_pooling), (Some(HiddenAct::Relu), Some(true), Some(HeadPooling::Cls)));
        assert_eq!((back.global_rope_theta, back.local_rope_theta), (Some(160_000.0), Some(10_000.0)));
    }

    #[test]
    fn names_map_onto_the_model_and_back() {
        for (hf, ours) in [
            ("embeddings.tok_embeddings.weight", "embeddings.word_embeddings.weight"),
            ("embeddings.norm.weight", "embeddings.layer_norm.weight"),
            ("layers.1.attn_norm.weight", "encoder.layers.1.attn_norm.weight"),
            ("layers.1.attn.Wqkv.weight", "encoder.layers.1.attn.wqkv.weight"),
            ("layers.1.attn.Wo.weight", "encoder.layers.1.attn.wo.weight"),
            ("layers.2.mlp.Wi.weight", "encoder.layers.2.mlp.wi.weight"),
            ("layers.2.mlp.Wo.bias", "encoder.layers.2.mlp.wo.bias"),
            ("final_norm.weight", "encoder.final_norm.weight"),
        ] {
            assert_eq!(Family::ModernBert.to_checkpoint_name(ours), hf);
            let mut back = hf.to_string();
            for (from, to) in Family::ModernBert.load_renames() {
                back = regex::Regex::new(from).unwrap().replace_all(&back, *to).into_owned();
            }
            assert_eq!(back, ours);
        }
    }

    #[test]
    fn what_it_cannot_compute_is_refused_by_name() {
        for (extra, said) in [
            (r#""hidden_activation": "mish""#, "hidden_activation is \"mish\""),
            (r#""classifier_activation": "quick_gelu""#, "classifier_activation is \"quick_gelu\""),
            (r#""classifier_pooling": "max""#, "classifier_pooling is \"max\""),
            (r#""head_dim": 32"#, "head_dim 32"),
            (r#""layer_types": ["full_attention", "chunked_attention"]"#, "\"chunked_attention\""),
            (r#""rope_scaling": {"rope_type": "linear", "factor": 2.0}"#, "rope_scaling"),
            (r#""rope_parameters": {"full_attention": {"rope_type": "yarn", "rope_theta": 1e4}}"#, "rope_type \"yarn\""),
            (r#""global_attn_every_n_layers": 0"#, "global_attn_every_n_layers 0"),
            (r#""layer_types": ["full_attention"]"#, "layer_types names 1 layers but num_hidden_layers is 2"),
        ] {
            let json = format!(r#"{{"model_type": "modernbert", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, {extra}}}"#);
            let err = BertConfig::from_json_bytes(json.as_bytes()).unwrap_err().to_string();
            assert!(err.contains(said), "{said}: {err}");
        }
        // The newer keys read as the older ones.
        let json = r#"{"model_type": "modernbert", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "layer_types": ["sliding_attention", "full_attention"], "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 5e5}, "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}}"#;
        let config = BertConfig::from_json_bytes(json.as_bytes()).unwrap();
        assert_eq!(config.attention_kinds(), [AttentionKind::SlidingAttention, AttentionKind::FullAttention]);
        assert_eq!(config.global_rope_theta, Some(5e5));
    }
}
