//! ALBERT (Lan et al. 2020): BERT's blocks with two savings. Its embeddings are narrower than
//! the encoder (`embedding_size`, 128) and projected up (`encoder.embedding_hidden_mapping_in`,
//! held as the model's embedding projection), and one layer's parameters serve all
//! `num_hidden_layers` layers (`albert_layer_groups.0.albert_layers.0`). Its pooler is a bare
//! linear layer (`pooler`) with tanh; its MLM head (`predictions`) is embedding-wide and applies
//! the encoder's activation; `AlbertForPreTraining` adds a sentence-order head
//! (`sop_classifier.classifier`) on the pooled output.
//!
//! Its configuration may split the depths among several layer groups (`num_hidden_groups`: depth
//! `i` of `L` runs group `⌊i / (L / G)⌋`, as `transformers` computes it) and give each group
//! several layers run one after the other (`inner_group_num`); held as `encoder.layer.{g·K + k}`
//! (`BertConfig::grouped_layer_names`).

use super::*;

pub(super) const FACTS: FamilyFacts = FamilyFacts {
    model_type: "albert",
    display_name: "ALBERT",
    layout: Family::Albert,
    prefix: "albert.",
    base_architecture: "AlbertModel",
    mlm_architecture: "AlbertForMaskedLM",
    positions: Positions::Absolute { after_padding: false },
    segments: true,
    segments_optional: false,
    pooler: true,
    // `AlbertForSequenceClassification`: classifier(dropout(pooler)), as BERT.
    sequence_head: SequenceHead { dense: "", out: "classifier.", norm: "" },
    sequence_activation: PoolerActivation::Tanh,
    choice_reads_sequence_head: false,
    load_renames: &[
        (r"^encoder\.embedding_hidden_mapping_in\.", "embeddings_project."),
        (r"^encoder\.albert_layer_groups\.(\d+)\.albert_layers\.0\.", "encoder.layer.$1."),
        (r"\.attention\.(query|key|value)\.", ".attention.self_attn.$1."),
        (r"\.attention\.dense\.", ".attention.output.dense."),
        (r"\.attention\.(LayerNorm|layer_norm)\.", ".attention.output.layer_norm."),
        (r"\.ffn\.", ".intermediate.dense."),
        (r"\.ffn_output\.", ".output.dense."),
        (r"\.full_layer_layer_norm\.", ".output.layer_norm."),
        (r"^pooler\.(weight|bias)$", "pooler.dense.$1"),
        (r"\.LayerNorm\.", ".layer_norm."),
    ],
    save_renames: &[
        (r"^embeddings_project\.", "encoder.embedding_hidden_mapping_in."),
        (r"^encoder\.layer\.(\d+)\.", "encoder.albert_layer_groups.$1.albert_layers.0."),
        (r"\.attention\.self_attn\.", ".attention."),
        (r"\.attention\.output\.dense\.", ".attention.dense."),
        (r"\.attention\.output\.layer_norm\.", ".attention.LayerNorm."),
        (r"\.intermediate\.dense\.", ".ffn."),
        (r"\.output\.dense\.", ".ffn_output."),
        (r"\.output\.layer_norm\.", ".full_layer_layer_norm."),
        (r"^pooler\.dense\.", "pooler."),
        (r"\.layer_norm\.", ".LayerNorm."),
    ],
    head_prefixes: &["predictions.", "sop_classifier.", "classifier.", "qa_outputs."],
    mlm_marker: "predictions.bias",
    mlm_renames: &[
        (r"^predictions\.dense\.", "predictions.transform.dense."),
        (r"^predictions\.(LayerNorm|layer_norm)\.", "predictions.transform.layer_norm."),
        (r"^sop_classifier\.classifier\.", "seq_relationship."),
    ],
    mlm_save_renames: &[
        (r"^predictions\.transform\.dense\.", "predictions.dense."),
        (r"^predictions\.transform\.layer_norm\.", "predictions.LayerNorm."),
        (r"^seq_relationship\.", "sop_classifier.classifier."),
    ],
    mlm_head_gelu: false,
    pair_head: Some(PairHead { prefix: "sop_classifier.classifier.", architecture: "AlbertForPreTraining" }),
    embedding_projection: EmbeddingProjection::Always,
    shared_layers: true,
    relative_attention: None,
    layer: LayerKind::PostNorm,
    token_head_transform: false,
    qa_outputs: "qa_outputs.",
    tokenizer_class: None,
    wordpiece_tokenizer: false,
    read_config,
    write_config,
};

/// `AlbertConfig`'s defaults where they differ from BERT's (albert-xxlarge's sizes), for the keys a
/// `config.json` leaves out.
fn defaults() -> Json {
    serde_json::json!({
        "vocab_size": 30000, "embedding_size": 128, "hidden_size": 4096, "num_hidden_layers": 12,
        "num_attention_heads": 64, "intermediate_size": 16384, "hidden_act": "gelu_new",
        "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0,
    })
    .as_object()
    .cloned()
    .expect("an object")
}

/// BERT's keys, `AlbertConfig`'s defaults for those left out.
fn read_config(config: Json) -> Result<Json, String> {
    let mut out = defaults();
    out.extend(config.into_iter().filter(|(_, v)| !v.is_null()));
    Ok(out)
}

/// With ALBERT's own keys for its layer groups (one shared layer unless read otherwise) and its
/// embedding width.
fn write_config(config: Json) -> Json {
    let mut config = absolute_positions(config);
    config.entry("num_hidden_groups").or_insert(1.into());
    config.entry("inner_group_num").or_insert(1.into());
    if !config.contains_key("embedding_size") {
        let width = config.get("hidden_size").cloned().unwrap_or_default();
        config.insert("embedding_size".into(), width);
    }
    config
}
