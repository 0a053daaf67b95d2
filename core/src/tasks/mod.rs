//! Task heads on the encoder, one module per task, as `transformers` has one class per head:
//! each owns its head, its loss, its metrics and its checkpoint names.
//!
//! - [`classification`]: sentence (or sentence-pair) classification, `BertForSequenceClassification`
//! - [`tagging`]: token tagging (named entities, BIO): words onto pieces, entity-level metrics,
//!   `BertForTokenClassification` (the model is a token-level [`classification::BertClassifier`])
//! - [`qa`]: extractive question answering: windows of a passage, start/end logits, the best
//!   span, SQuAD's exact match and F1, `BertForQuestionAnswering`
//! - [`similarity`]: sentence similarity, as a cross-encoder (a pair read together, one score)
//!   or a bi-encoder (each text's vector, compared by cosine; a sentence-transformers folder)
//! - [`multi_label`]: any number of labels per text, a sigmoid each: binary cross-entropy,
//!   a threshold chosen on validation, micro and macro F1 (`problem_type` multi-label)
//! - [`choice`]: multiple choice (SWAG): each ending read with its premise, one score each,
//!   a softmax over the endings, `BertForMultipleChoice`
//! - [`distillation`]: a smaller student learning a classification task from a fine-tuned
//!   teacher's softened probabilities (Hinton et al.; DistilBERT's student from kept layers)
//! - [`pretraining`]: masked-language modelling with optional NSP/SOP, `BertForPreTraining`
//! - [`replaced_token`]: ELECTRA's replaced-token detection: a small generator fills the
//!   masks, the discriminator tells replaced tokens apart at every position, `ElectraForPreTraining`
//! - [`masking`]: MLM masking (15 %: 80/10/10) and NSP/SOP sentence pairs
//! - [`metrics`]: accuracy, per-class precision/recall/F1, macro-F1, confusion; host-side
//!   softmax and argmax

pub mod choice;
pub mod classification;
pub mod distillation;
pub mod masking;
pub mod metrics;
pub mod multi_label;
pub mod pretraining;
pub mod qa;
pub mod replaced_token;
pub mod similarity;
pub mod tagging;
