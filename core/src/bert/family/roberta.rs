//! RoBERTa (Liu et al. 2019): BERT's encoder, byte-level BPE, positions counted from after the
//! padding id, one segment type (unused); its classification head has its own dense layer.

use super::*;

pub(super) const FACTS: FamilyFacts = FamilyFacts {
    model_type: "roberta",
    display_name: "RoBERTa",
    layout: Family::Roberta,
    prefix: "roberta.",
    base_architecture: "RobertaModel",
    mlm_architecture: "RobertaForMaskedLM",
    positions: Positions::Absolute { after_padding: true },
    segments: true,
    segments_optional: false,
    pooler: true,
    // `RobertaForSequenceClassification`: out_proj(tanh(dense(<s>))), in place of any pooler.
    sequence_head: SequenceHead { dense: "classifier.dense.", out: "classifier.out_proj.", norm: "" },
    sequence_activation: PoolerActivation::Tanh,
    choice_reads_sequence_head: false,
    load_renames: BERT_LOAD,
    save_renames: BERT_SAVE,
    head_prefixes: &["lm_head.", "classifier.", "qa_outputs."],
    mlm_marker: "lm_head.bias",
    mlm_renames: &[
        (r"^lm_head\.dense\.", "predictions.transform.dense."),
        (r"^lm_head\.layer_norm\.", "predictions.transform.layer_norm."),
        (r"^lm_head\.bias$", "predictions.bias"),
    ],
    mlm_save_renames: &[
        (r"^predictions\.transform\.dense\.", "lm_head.dense."),
        (r"^predictions\.transform\.layer_norm\.", "lm_head.layer_norm."),
        (r"^predictions\.bias$", "lm_head.bias"),
    ],
    mlm_head_gelu: true,
    pair_head: None,
    embedding_projection: EmbeddingProjection::None,
    shared_layers: false,
    relative_attention: None,
    layer: LayerKind::PostNorm,
    token_head_transform: false,
    qa_outputs: "qa_outputs.",
    tokenizer_class: None,
    wordpiece_tokenizer: false,
    read_config: bert_keys,
    write_config: absolute_positions,
};
