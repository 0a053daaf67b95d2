//! What a fine-tuning run learns from: tokenized examples and their *units*. A unit is what one
//! row of the head's logits answers for: a text (sentence classification) or a target token (a
//! tagger's word pieces).

use burn::prelude::*;
use burn::tensor::TensorData;

use crate::data::{Example, TaggedSentence};
use crate::error::Error;
use crate::tasks::classification::Level;
use crate::tasks::tagging::{LabelPieces, TokenTarget, encode_words};
use crate::tokenizer::{BertTokenizer, Encoded};

/// A tokenized example with its label id, or its tokens' tag ids.
#[derive(Debug, Clone)]
pub struct LabeledText {
    /// Tokens (`[CLS] a [SEP] (b [SEP])`), truncated to the tokenizer's length.
    pub encoded: Encoded,
    /// Index into the label list (a sentence classifier's example).
    pub label: usize,
    /// The tokens the loss reads and their tag ids (a token classifier's example; empty for a
    /// sentence classifier's).
    pub tokens: Vec<TokenTarget>,
}

impl LabeledText {
    /// A sentence classifier's example.
    pub fn sentence(encoded: Encoded, label: usize) -> Self {
        Self { encoded, label, tokens: Vec::new() }
    }

    /// A token classifier's example: targets from [`crate::tasks::tagging::targets`].
    pub fn tagged(encoded: Encoded, tokens: Vec<TokenTarget>) -> Self {
        Self { encoded, label: 0, tokens }
    }

    /// The label ids of its units: the text's label, or each target token's tag.
    pub(super) fn unit_labels(&self, level: Level) -> Vec<usize> {
        match level {
            Level::Sentence => vec![self.label],
            Level::Token => self.tokens.iter().map(|t| t.tag).collect(),
        }
    }

    pub(super) fn units(&self, level: Level) -> usize {
        match level {
            Level::Sentence => 1,
            Level::Token => self.tokens.len(),
        }
    }
}

/// A batch's units: labels in order and, for a token classifier, their positions in the padded
/// batch flattened row by row.
pub(super) fn batch_units(rows: &[&LabeledText], level: Level, seq_len: usize, device: &Device) -> (Option<Tensor<1, Int>>, Vec<usize>) {
    let labels = rows.iter().flat_map(|t| t.unit_labels(level)).collect();
    let positions = (level == Level::Token).then(|| {
        let at: Vec<i64> = rows
            .iter()
            .enumerate()
            .flat_map(|(r, t)| t.tokens.iter().map(move |x| (r * seq_len + x.position) as i64))
            .collect();
        let n = at.len();
        Tensor::<1, Int>::from_data(TensorData::new(at, [n]), device)
    });
    (positions, labels)
}

/// Tokenizes examples, mapping label names to ids in `labels`' order.
pub fn encode_examples(tokenizer: &BertTokenizer, examples: &[Example], labels: &[String]) -> crate::Result<Vec<LabeledText>> {
    examples
        .iter()
        .map(|ex| {
            let label = labels
                .iter()
                .position(|l| *l == ex.label)
                .ok_or_else(|| Error::Input(format!("line {}: label {:?} is not one of the training labels", ex.line, ex.label)))?;
            let encoded = tokenizer
                .encode_text(&ex.text, ex.text_pair.as_deref())
                .map_err(|e| Error::Input(format!("line {}: {e}", ex.line)))?;
            Ok(LabeledText::sentence(encoded, label))
        })
        .collect()
}

/// Tokenizes tagged sentences for a token classifier: each word's tag (one of `tags`) onto its
/// pieces as [`crate::tasks::tagging::encode_words`] puts it. Returns the examples and how many
/// words the tokenizer's length cut off (neither learned nor scored).
pub fn encode_tagged(tokenizer: &BertTokenizer, sentences: &[TaggedSentence], tags: &[String], pieces: LabelPieces) -> crate::Result<(Vec<LabeledText>, usize)> {
    let mut lost = 0;
    let examples = sentences
        .iter()
        .map(|s| {
            let ids = s
                .tags
                .iter()
                .map(|t| tags.iter().position(|x| x == t).ok_or_else(|| Error::Input(format!("line {}: tag {t:?} is not one of the training tags", s.line))))
                .collect::<crate::Result<Vec<_>>>()?;
            let (encoded, targets, cut) = encode_words(tokenizer, &s.words, &ids, tags, pieces).map_err(|e| Error::Input(format!("line {}: {e}", s.line)))?;
            if targets.is_empty() {
                return Err(Error::Input(format!("line {}: no word of this sentence fits in the model's length", s.line)));
            }
            lost += cut;
            Ok(LabeledText::tagged(encoded, targets))
        })
        .collect::<crate::Result<Vec<_>>>()?;
    Ok((examples, lost))
}

pub(super) fn labels_tensor(labels: &[usize], device: &Device) -> Tensor<1, Int> {
    let v: Vec<i64> = labels.iter().map(|&l| l as i64).collect();
    Tensor::from_data(TensorData::new(v, [labels.len()]), device)
}
