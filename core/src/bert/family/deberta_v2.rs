//! DeBERTa-v2 and v3 (He et al. 2021; v3: He et al. 2023): BERT's post-norm layers with
//! *disentangled* attention. A word is its content alone (no position is added to it in v3);
//! every layer's attention scores add to the content–content product the query's content against
//! the key's relative position (c2p) and the key's content against the query's relative position
//! (p2c), from one table of relative-position embeddings shared by all layers
//! (`encoder.rel_embeddings`, with a LayerNorm in v3), distances bucketed logarithmically beyond
//! `position_buckets / 2` (`bert/disentangled_attention.rs`, [`LayerKind::Disentangled`]).
//! SentencePiece Unigram pieces with `[CLS] A [SEP] B [SEP]`.
//!
//! Names: `deberta.` before the encoder, `attention.self.{query,key,value}_proj` (and
//! `pos_key_proj`/`pos_query_proj` where the position projections are not shared), held as
//! `encoder.disentangled.N`. `DebertaV2ForMaskedLM` with `legacy` (its default) keeps BERT's
//! `cls.predictions` head (its newer `lm_predictions.lm_head`, `legacy: false`, is refused by
//! name, and so is a legacy folder that holds only that one, as the Hub's DeBERTa-v3 models do:
//! `transformers` would start `cls.predictions` from random weights); its sequence-classification
//! and multiple-choice classes a `pooler.dense` with GELU (`ContextPooler`) before `classifier`;
//! the bare model has no pooler. The enhanced mask decoder (`mask_predictions`) is not run by
//! `transformers`' `DebertaV2ForMaskedLM` (`z_steps` 0): its tensors are kept apart, unread.
//!
//! Read exactly: `relative_attention: false` (content-to-content attention, scaled as
//! `pos_att_type` says), and the convolution DeBERTa-v2-xlarge adds after its first layer
//! (`conv_kernel_size`, `conv_act`, `conv_groups`: `bert/deberta_conv.rs`). Refused by name: a
//! `pos_att_type` other than `c2p`/`p2c`, `norm_rel_ebd` other than `layer_norm`/`none`, an
//! `attention_head_size` other than
//! `hidden_size / num_attention_heads`, a `pooler_hidden_act` other than GELU or a
//! `pooler_hidden_size` other than `hidden_size`, and narrower embeddings (`embedding_size`).

use super::*;

pub(super) const FACTS: FamilyFacts = FamilyFacts {
    model_type: "deberta-v2",
    display_name: "DeBERTa-v2",
    layout: Family::DebertaV2,
    prefix: "deberta.",
    base_architecture: "DebertaV2Model",
    mlm_architecture: "DebertaV2ForMaskedLM",
    // A position table only where `position_biased_input` (DeBERTa-v2's older models), counted
    // from 0; v3 has none (see `BertConfig::position_table`).
    positions: Positions::Absolute { after_padding: false },
    segments: true,
    segments_optional: true,
    pooler: false,
    // `DebertaV2ForSequenceClassification`: classifier(dropout(gelu(pooler.dense([CLS])))).
    sequence_head: SequenceHead { dense: "pooler.dense.", out: "classifier.", norm: "" },
    sequence_activation: PoolerActivation::Gelu,
    choice_reads_sequence_head: true,
    load_renames: &[
        (r"^encoder\.layer\.", "encoder.disentangled."),
        (r"\.LayerNorm\.", ".layer_norm."),
        (r"\.attention\.self\.", ".attention.self_attn."),
    ],
    save_renames: &[
        (r"^encoder\.disentangled\.", "encoder.layer."),
        (r"\.layer_norm\.", ".LayerNorm."),
        (r"\.self_attn\.", ".self."),
    ],
    head_prefixes: &["cls.", "lm_predictions.", "mask_predictions.", "pooler.", "classifier.", "qa_outputs."],
    mlm_marker: "cls.predictions.bias",
    mlm_renames: &[(r"^cls\.", ""), (r"\.LayerNorm\.", ".layer_norm.")],
    mlm_save_renames: &[(r"^", "cls."), (r"\.layer_norm\.", ".LayerNorm.")],
    mlm_head_gelu: false,
    pair_head: None,
    embedding_projection: EmbeddingProjection::None,
    shared_layers: false,
    relative_attention: None,
    layer: LayerKind::Disentangled,
    token_head_transform: false,
    qa_outputs: "qa_outputs.",
    tokenizer_class: None,
    wordpiece_tokenizer: false,
    read_config,
    write_config,
};

/// `DebertaV2Config`'s defaults where they differ from BERT's (DeBERTa-v2-xlarge's sizes), for
/// the keys a `config.json` leaves out.
fn defaults() -> Json {
    serde_json::json!({
        "vocab_size": 128100, "hidden_size": 1536, "num_hidden_layers": 24, "num_attention_heads": 24,
        "intermediate_size": 6144, "type_vocab_size": 0, "layer_norm_eps": 1e-7, "position_biased_input": true,
        "legacy": true,
    })
    .as_object()
    .cloned()
    .expect("an object")
}

/// `DebertaV2Config` as `transformers` 5.24 reads it, in BERT's keys (its own keys are kept as
/// they are: `position_buckets`, `max_relative_positions`, `pos_att_type`, `share_att_key`,
/// `norm_rel_ebd`, `legacy`; `position_biased_input` as `absolute_positions`); what it cannot
/// compute exactly is refused by name.
fn read_config(config: Json) -> Result<Json, String> {
    let mut out = defaults();
    out.extend(config.into_iter().filter(|(_, v)| !v.is_null()));
    // Off by default in `DebertaV2Config`: a folder that leaves it out scores content only.
    let relative = out.get("relative_attention").and_then(serde_json::Value::as_bool).unwrap_or(false);
    out.insert("relative_attention".into(), relative.into());
    // The convolution after the first layer (DeBERTa-v2-xlarge's), where its kernel is set.
    if out.get("conv_kernel_size").and_then(serde_json::Value::as_u64).unwrap_or(0) == 0 {
        for key in ["conv_kernel_size", "conv_act", "conv_groups"] {
            out.remove(key);
        }
    } else {
        let act = out.get("conv_act").cloned().unwrap_or_else(|| "tanh".into());
        if serde_json::from_value::<crate::nn::activation::HiddenAct>(act.clone()).is_err() {
            return Err(format!("this DeBERTa's convolution applies {act} (conv_act); bertbench computes gelu, gelu_new, relu, silu and tanh"));
        }
        out.insert("conv_act".into(), act);
    }
    let count = |key: &str| out.get(key).and_then(serde_json::Value::as_u64);
    let (hidden, heads) = (count("hidden_size").unwrap_or(0), count("num_attention_heads").unwrap_or(1).max(1));
    if let Some(size) = count("attention_head_size").filter(|&s| s != hidden / heads) {
        return Err(format!("this DeBERTa has attention_head_size {size}, not hidden_size / num_attention_heads = {}; bertbench's heads are that wide", hidden / heads));
    }
    if let Some(size) = count("pooler_hidden_size").filter(|&s| s != hidden) {
        return Err(format!("this DeBERTa's pooler is {size} wide (pooler_hidden_size), not hidden_size {hidden}"));
    }
    match out.get("pooler_hidden_act").and_then(serde_json::Value::as_str) {
        None | Some("gelu") => {}
        Some(other) => return Err(format!("this DeBERTa's pooler applies \"{other}\" (pooler_hidden_act); bertbench reads its classifier head with GELU")),
    }
    for key in ["attention_head_size", "pooler_hidden_size", "pooler_hidden_act"] {
        out.remove(key);
    }
    // `pos_att_type` as a list, or as older configs write it, `"p2c|c2p"`.
    let kinds: Vec<String> = match out.remove("pos_att_type") {
        Some(serde_json::Value::String(s)) => s.to_lowercase().split('|').map(|k| k.trim().to_string()).filter(|k| !k.is_empty()).collect(),
        Some(serde_json::Value::Array(kinds)) => kinds.iter().map(|k| k.as_str().map(str::to_string).ok_or_else(|| format!("this DeBERTa's pos_att_type holds {k}"))).collect::<Result<_, _>>()?,
        None => Vec::new(),
        Some(other) => return Err(format!("this DeBERTa's pos_att_type is {other}, not a list of \"c2p\" and \"p2c\"")),
    };
    if let Some(other) = kinds.iter().find(|k| !matches!(k.as_str(), "c2p" | "p2c")) {
        return Err(format!("this DeBERTa's pos_att_type holds \"{other}\"; DeBERTa-v2's attention reads \"c2p\" and \"p2c\""));
    }
    out.insert("pos_att_type".into(), kinds.into());
    let norm = out.remove("norm_rel_ebd").and_then(|v| v.as_str().map(str::to_lowercase)).unwrap_or_else(|| "none".into());
    let norms: Vec<&str> = norm.split('|').map(str::trim).collect();
    if let Some(other) = norms.iter().find(|n| !matches!(**n, "none" | "layer_norm")) {
        return Err(format!("this DeBERTa's norm_rel_ebd holds \"{other}\"; bertbench reads \"layer_norm\" or \"none\""));
    }
    out.insert("norm_rel_ebd".into(), if norms.contains(&"layer_norm") { "layer_norm" } else { "none" }.into());
    // Under a name of its own: the embeddings read it for every family.
    let absolute = out.remove("position_biased_input").unwrap_or(true.into());
    out.insert("absolute_positions".into(), absolute);
    // Unset (below 1): no buckets, and distances as far as the positions reach.
    for key in ["position_buckets", "max_relative_positions"] {
        if out.get(key).and_then(serde_json::Value::as_i64).is_some_and(|v| v < 1) {
            out.remove(key);
        }
    }
    Ok(out)
}

/// DeBERTa's keys: BERT's where they agree, `position_biased_input`, its relative attention
/// written out (on unless the model was read with it off: `DebertaV2Config` leaves it off by
/// default), and no position type.
fn write_config(mut config: Json) -> Json {
    config.remove("position_embedding_type");
    if let Some(absolute) = config.remove("absolute_positions") {
        config.insert("position_biased_input".into(), absolute);
    }
    config.entry("relative_attention").or_insert(true.into());
    config
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bert::config::{BertConfig, PositionAttention};

    /// microsoft/deberta-v3-base's `config.json`.
    const V3_BASE: &str = r#"{"model_type": "deberta-v2", "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1, "hidden_size": 768, "initializer_range": 0.02, "intermediate_size": 3072,
        "max_position_embeddings": 512, "relative_attention": true, "position_buckets": 256, "norm_rel_ebd": "layer_norm",
        "share_att_key": true, "pos_att_type": "p2c|c2p", "layer_norm_eps": 1e-7, "max_relative_positions": -1,
        "position_biased_input": false, "num_attention_heads": 12, "num_hidden_layers": 12, "type_vocab_size": 0,
        "vocab_size": 128100}"#;

    #[test]
    fn deberta_v3_base_reads_with_its_relative_attention() {
        let config = BertConfig::from_json_bytes(V3_BASE.as_bytes()).unwrap();
        assert_eq!((config.model_type, config.type_vocab_size, config.max_len(), config.position_table()), (Family::DebertaV2, 0, 512, false));
        assert_eq!(config.pos_att_type, Some(vec![PositionAttention::P2c, PositionAttention::C2p]));
        assert_eq!((config.position_buckets, config.max_relative_positions, config.relative_reach()), (Some(256), None, 512));
        assert_eq!((config.share_att_key, config.relative_layer_norm()), (Some(true), true));
        // DeBERTa-v3-base's backbone: 183,831,552 parameters (DebertaV2Model), 98M of them the
        // 128,100-piece vocabulary's embeddings.
        assert_eq!(config.num_params(false), 183_831_552);
        let json: serde_json::Value = serde_json::from_slice(&config.to_hf_json()).unwrap();
        assert_eq!((json["relative_attention"].as_bool(), json["architectures"][0].as_str(), json["pos_att_type"][0].as_str()), (Some(true), Some("DebertaV2Model"), Some("p2c")));
        assert_eq!((json["position_biased_input"].as_bool(), json["norm_rel_ebd"].as_str(), json["position_buckets"].as_u64()), (Some(false), Some("layer_norm"), Some(256)));
        assert!(json.get("position_embedding_type").is_none() && json.get("max_relative_positions").is_none());
        assert_eq!(BertConfig::from_json_bytes(&config.to_hf_json()).unwrap(), config);
        let apart = config.distinctions().join("; ");
        for said in ["disentangled attention", "content and relative position", "256 buckets", "no absolute positions", "no sentence A/B segment"] {
            assert!(apart.contains(said), "{said}: {apart}");
        }
    }

    /// DeBERTa's `position_biased_input` turns its position table off; in another family's
    /// `config.json` (which `transformers` ignores there) it changes nothing.
    #[test]
    fn only_deberta_reads_position_biased_input() {
        let bert = BertConfig::from_json_bytes(br#"{"model_type": "bert", "position_biased_input": false}"#).unwrap();
        assert!(bert.position_table() && bert.absolute_positions.is_none());
        let v2 = BertConfig::from_json_bytes(br#"{"model_type": "deberta-v2", "relative_attention": true, "hidden_size": 64, "num_attention_heads": 4}"#).unwrap();
        assert!(v2.position_table(), "DebertaV2Config adds absolute positions unless told not to");
    }

    #[test]
    fn names_map_onto_the_model_and_back() {
        for (hf, ours) in [
            ("encoder.layer.1.attention.self.query_proj.weight", "encoder.disentangled.1.attention.self_attn.query_proj.weight"),
            ("encoder.layer.1.attention.self.pos_key_proj.bias", "encoder.disentangled.1.attention.self_attn.pos_key_proj.bias"),
            ("encoder.layer.0.attention.output.LayerNorm.weight", "encoder.disentangled.0.attention.output.layer_norm.weight"),
            ("encoder.layer.0.output.dense.weight", "encoder.disentangled.0.output.dense.weight"),
            ("encoder.rel_embeddings.weight", "encoder.rel_embeddings.weight"),
            ("encoder.LayerNorm.bias", "encoder.layer_norm.bias"),
            ("embeddings.LayerNorm.weight", "embeddings.layer_norm.weight"),
        ] {
            assert_eq!(Family::DebertaV2.to_checkpoint_name(ours), hf);
            let mut back = hf.to_string();
            for (from, to) in Family::DebertaV2.load_renames() {
                back = regex::Regex::new(from).unwrap().replace_all(&back, *to).into_owned();
            }
            assert_eq!(back, ours);
        }
    }

    #[test]
    fn what_it_cannot_compute_is_refused_by_name() {
        for (extra, said) in [
            (r#""relative_attention": true, "conv_kernel_size": 2"#, "conv_kernel_size 2 is even"),
            (r#""relative_attention": true, "conv_kernel_size": 3, "conv_groups": 5"#, "conv_groups 5 does not divide"),
            (r#""relative_attention": true, "conv_kernel_size": 3, "conv_act": "mish""#, "\"mish\" (conv_act)"),
            (r#""relative_attention": true, "pos_att_type": "p2c|p2p""#, "\"p2p\""),
            (r#""relative_attention": true, "norm_rel_ebd": "layer_norm|other""#, "\"other\""),
            (r#""relative_attention": true, "attention_head_size": 8"#, "attention_head_size 8"),
            (r#""relative_attention": true, "pooler_hidden_act": "tanh""#, "\"tanh\""),
            (r#""relative_attention": true, "pooler_hidden_size": 32"#, "pooler_hidden_size"),
            (r#""relative_attention": true, "embedding_size": 32"#, "embedding_size 32 differs"),
        ] {
            let json = format!(r#"{{"model_type": "deberta-v2", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, {extra}}}"#);
            let err = BertConfig::from_json_bytes(json.as_bytes()).unwrap_err().to_string();
            assert!(err.contains(said), "{said}: {err}");
        }
    }
}
