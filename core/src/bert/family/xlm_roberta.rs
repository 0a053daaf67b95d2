//! XLM-RoBERTa (Conneau et al. 2020): RoBERTa trained on 100 languages, with SentencePiece
//! Unigram pieces; in `transformers` its classes copy RoBERTa's (`base_model_prefix =
//! "roberta"`), so only its names are its own.

use super::*;

pub(super) const FACTS: FamilyFacts = FamilyFacts {
    model_type: "xlm-roberta",
    display_name: "XLM-RoBERTa",
    base_architecture: "XLMRobertaModel",
    mlm_architecture: "XLMRobertaForMaskedLM",
    ..roberta::FACTS
};
