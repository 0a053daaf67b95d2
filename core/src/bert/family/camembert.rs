//! CamemBERT (Martin et al. 2020): RoBERTa trained on French, with SentencePiece Unigram
//! pieces; RoBERTa's layout under its own names.

use super::*;

pub(super) const FACTS: FamilyFacts = FamilyFacts {
    model_type: "camembert",
    display_name: "CamemBERT",
    base_architecture: "CamembertModel",
    mlm_architecture: "CamembertForMaskedLM",
    ..roberta::FACTS
};
