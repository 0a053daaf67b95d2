//! DistilBERT (Sanh et al. 2019): BERT's encoder distilled to half the layers, without segments
//! or pooler, under its own tensor names and `config.json` keys. Its LayerNorm epsilon is fixed
//! at 1e-12 in `transformers`.

use super::*;

pub(super) const FACTS: FamilyFacts = FamilyFacts {
    model_type: "distilbert",
    display_name: "DistilBERT",
    layout: Family::DistilBert,
    prefix: "distilbert.",
    base_architecture: "DistilBertModel",
    mlm_architecture: "DistilBertForMaskedLM",
    positions: Positions::Absolute { after_padding: false },
    segments: false,
    segments_optional: false,
    pooler: false,
    // `DistilBertForSequenceClassification`: classifier(relu(pre_classifier([CLS]))).
    sequence_head: SequenceHead { dense: "pre_classifier.", out: "classifier.", norm: "" },
    sequence_activation: PoolerActivation::Relu,
    choice_reads_sequence_head: false,
    load_renames: &[
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
    ],
    save_renames: &[
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
    ],
    head_prefixes: &["vocab_transform.", "vocab_layer_norm.", "vocab_projector.", "pre_classifier.", "classifier.", "qa_outputs."],
    mlm_marker: "vocab_projector.bias",
    mlm_renames: &[
        (r"^vocab_transform\.", "predictions.transform.dense."),
        (r"^vocab_layer_norm\.", "predictions.transform.layer_norm."),
        (r"^vocab_projector\.bias$", "predictions.bias"),
    ],
    mlm_save_renames: &[
        (r"^predictions\.transform\.dense\.", "vocab_transform."),
        (r"^predictions\.transform\.layer_norm\.", "vocab_layer_norm."),
        (r"^predictions\.bias$", "vocab_projector.bias"),
    ],
    mlm_head_gelu: false,
    pair_head: None,
    embedding_projection: EmbeddingProjection::None,
    shared_layers: false,
    relative_attention: None,
    layer: LayerKind::PostNorm,
    token_head_transform: false,
    qa_outputs: "qa_outputs.",
    tokenizer_class: None,
    wordpiece_tokenizer: true,
    read_config,
    write_config,
};

/// DistilBERT's keys → BERT's (`dim` is `hidden_size`...).
const KEYS: [(&str, &str); 7] = [
    ("dim", "hidden_size"),
    ("n_layers", "num_hidden_layers"),
    ("n_heads", "num_attention_heads"),
    ("hidden_dim", "intermediate_size"),
    ("activation", "hidden_act"),
    ("dropout", "hidden_dropout_prob"),
    ("attention_dropout", "attention_probs_dropout_prob"),
];

fn read_config(config: Json) -> Result<Json, String> {
    let mut out = Json::new();
    for (key, value) in config {
        let to = KEYS.iter().find(|(from, _)| *from == key).map_or(key, |(_, to)| to.to_string());
        out.insert(to, value);
    }
    out.insert("type_vocab_size".into(), 0.into());
    out.insert("layer_norm_eps".into(), serde_json::json!(1e-12));
    Ok(out)
}

fn write_config(config: Json) -> Json {
    let mut out = Json::new();
    for (key, value) in config {
        if matches!(key.as_str(), "type_vocab_size" | "layer_norm_eps" | "position_embedding_type") {
            continue;
        }
        let to = KEYS.iter().find(|(_, to)| *to == key).map_or(key, |(from, _)| from.to_string());
        out.insert(to, value);
    }
    out.insert("sinusoidal_pos_embds".into(), false.into());
    out
}
