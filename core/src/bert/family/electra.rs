//! ELECTRA (Clark et al. 2020): BERT's encoder trained as a discriminator of replaced tokens; no
//! pooler. The base and large models' embeddings are as wide as the encoder; ELECTRA-small's
//! (and every generator's) are narrower and projected up by `embeddings_project` (128 → 256),
//! which the model holds as its embedding projection.

use super::*;

pub(super) const FACTS: FamilyFacts = FamilyFacts {
    model_type: "electra",
    display_name: "ELECTRA",
    layout: Family::Electra,
    prefix: "electra.",
    base_architecture: "ElectraModel",
    mlm_architecture: "ElectraForMaskedLM",
    positions: Positions::Absolute { after_padding: false },
    segments: true,
    segments_optional: false,
    pooler: false,
    // `ElectraForSequenceClassification`: out_proj(gelu(dense([CLS]))).
    sequence_head: SequenceHead { dense: "classifier.dense.", out: "classifier.out_proj.", norm: "" },
    sequence_activation: PoolerActivation::Gelu,
    choice_reads_sequence_head: false,
    load_renames: BERT_LOAD,
    save_renames: BERT_SAVE,
    head_prefixes: &["discriminator_predictions.", "generator_predictions.", "generator_lm_head.", "classifier.", "qa_outputs."],
    mlm_marker: "generator_lm_head.bias",
    mlm_renames: &[
        (r"^generator_predictions\.dense\.", "predictions.transform.dense."),
        (r"^generator_predictions\.LayerNorm\.", "predictions.transform.layer_norm."),
        (r"^generator_predictions\.layer_norm\.", "predictions.transform.layer_norm."),
        (r"^generator_lm_head\.bias$", "predictions.bias"),
    ],
    mlm_save_renames: &[
        (r"^predictions\.transform\.dense\.", "generator_predictions.dense."),
        (r"^predictions\.transform\.layer_norm\.", "generator_predictions.LayerNorm."),
        (r"^predictions\.bias$", "generator_lm_head.bias"),
    ],
    mlm_head_gelu: true,
    pair_head: None,
    embedding_projection: EmbeddingProjection::WhereNarrower,
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

/// BERT's keys, with the embedding width transformers' `ElectraConfig` defaults to (128)
/// written out where the file leaves it: narrower than `hidden_size`, it is projected up by
/// `embeddings_project` (ELECTRA-small: 128 → 256).
fn read_config(mut config: Json) -> Result<Json, String> {
    if config.get("embedding_size").is_none_or(serde_json::Value::is_null) {
        config.insert("embedding_size".into(), 128.into());
    }
    Ok(config)
}

/// With its embedding width written out: `ElectraConfig` would default it to 128.
fn write_config(config: Json) -> Json {
    let mut config = absolute_positions(config);
    if !config.contains_key("embedding_size") {
        let width = config.get("hidden_size").cloned().unwrap_or_default();
        config.insert("embedding_size".into(), width);
    }
    config
}
