//! ELECTRA (Clark et al. 2020): BERT's encoder trained as a discriminator of replaced tokens; no
//! pooler. Read where its embeddings are as wide as its encoder (`embedding_size` =
//! `hidden_size`: the base and large discriminators); ELECTRA-small projects 128-wide embeddings
//! up to 256 (`embeddings_project`), which this encoder does not have, and is refused by name.

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
    pooler: false,
    // `ElectraForSequenceClassification`: out_proj(gelu(dense([CLS]))).
    sequence_head: SequenceHead { dense: "classifier.dense.", out: "classifier.out_proj." },
    sequence_activation: PoolerActivation::Gelu,
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
    next_sentence: false,
    read_config,
    write_config,
};

/// BERT's keys already; refused where the embeddings are projected up to the encoder's width.
fn read_config(config: Json) -> Result<Json, String> {
    let width = |key: &str| config.get(key).and_then(serde_json::Value::as_u64);
    // transformers' ElectraConfig defaults: embedding_size 128, hidden_size 256.
    let (embedding, hidden) = (width("embedding_size").unwrap_or(128), width("hidden_size").unwrap_or(256));
    if embedding != hidden {
        return Err(format!(
            "this ELECTRA projects {embedding}-wide embeddings up to its {hidden}-wide encoder (embeddings_project, as ELECTRA-small does); bertbench reads ELECTRA models whose embeddings are as wide as the encoder (the base and large discriminators)"
        ));
    }
    Ok(config)
}

/// With its embedding width written out: `ElectraConfig` would default it to 128.
fn write_config(config: Json) -> Json {
    let mut config = absolute_positions(config);
    let width = config.get("hidden_size").cloned().unwrap_or_default();
    config.insert("embedding_size".into(), width);
    config
}
