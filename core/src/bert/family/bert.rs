//! BERT (Devlin et al. 2019) and its many sizes and fine-tunes (MiniLM, BioBERT...): the layout
//! every other family is mapped onto.

use super::*;

pub(super) const FACTS: FamilyFacts = FamilyFacts {
    model_type: "bert",
    display_name: "BERT",
    layout: Family::Bert,
    prefix: "bert.",
    base_architecture: "BertModel",
    mlm_architecture: "BertForMaskedLM",
    positions: Positions::Absolute { after_padding: false },
    segments: true,
    segments_optional: false,
    pooler: true,
    // `BertForSequenceClassification`: classifier(dropout(pooler)).
    sequence_head: SequenceHead { dense: "", out: "classifier.", norm: "" },
    sequence_activation: PoolerActivation::Tanh,
    choice_reads_sequence_head: false,
    load_renames: BERT_LOAD,
    save_renames: BERT_SAVE,
    head_prefixes: &["cls.", "classifier.", "qa_outputs."],
    mlm_marker: "cls.predictions.bias",
    mlm_renames: &[(r"^cls\.", ""), (r"\.LayerNorm\.", ".layer_norm.")],
    mlm_save_renames: &[(r"^", "cls."), (r"\.layer_norm\.", ".LayerNorm.")],
    mlm_head_gelu: false,
    pair_head: Some(PairHead { prefix: "cls.seq_relationship.", architecture: "BertForPreTraining" }),
    embedding_projection: EmbeddingProjection::None,
    shared_layers: false,
    relative_attention: None,
    layer: LayerKind::PostNorm,
    token_head_transform: false,
    qa_outputs: "qa_outputs.",
    tokenizer_class: None,
    wordpiece_tokenizer: true,
    read_config: bert_keys,
    write_config: absolute_positions,
};
