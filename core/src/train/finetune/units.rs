//! What a fine-tuning run learns from: tokenized examples and their *units*. A unit is what one
//! row of the loss answers for: a text (sentence classification), a target token (a tagger's
//! word pieces), a window's answer start and its end (question answering, each a softmax over
//! the window's tokens), a pair's similarity (a cross-encoder's score, a bi-encoder's cosine), or
//! one of a group of sequences scored together (right or not; a softmax over the group), or a
//! multi-label text (each of its labels a yes or no).
//!
//! An example's *rows* are what the head reads for it, one feature vector each: the text's, its
//! target tokens', every token of a question-answering window, a bi-encoder pair's two texts, or
//! each sequence of a group.
//! Cached features and validation logits are stored row by row (a bi-encoder's validation
//! outputs, one cosine per pair, by pair).

use std::ops::Range;
use std::sync::Arc;

use burn::prelude::*;
use burn::tensor::TensorData;

use crate::data::QaItem;
use crate::tasks::tagging::TokenTarget;
use crate::tokenizer::Encoded;

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
    /// A question-answering window's answer (`None` for the other tasks).
    pub span: Option<SpanTarget>,
    /// A similarity pair's score in 0..1 (0 for the other tasks).
    pub score: f32,
    /// A bi-encoder pair's second text, encoded alone (`encoded` is then the first text alone).
    pub second: Option<Encoded>,
    /// An example read as a group of sequences, one after the other, scored together
    /// (`encoded` is then the first of them); empty for an example of one sequence.
    pub sequences: Vec<Encoded>,
    /// A student's training text: its teacher's log-probabilities of each label (empty
    /// otherwise).
    pub teacher: Vec<f32>,
    /// A multi-label text's targets: 1 for each label it has, 0 for the others (empty for the
    /// other tasks).
    pub targets: Vec<f32>,
}

/// A question-answering window's target: where its answer starts and ends (`(0, 0)`: `[CLS]`,
/// not in this window), which tokens are the passage's, and the question (the windows of one
/// question are consecutive and share it).
#[derive(Debug, Clone)]
pub struct SpanTarget {
    /// Token position of the answer's start.
    pub start: usize,
    /// Token position of its end (inclusive).
    pub end: usize,
    /// Token positions of the passage in the window.
    pub context: Range<usize>,
    /// The question, its passage and its gold answers.
    pub item: Arc<QaItem>,
}

impl LabeledText {
    /// A sentence classifier's example.
    pub fn sentence(encoded: Encoded, label: usize) -> Self {
        Self { encoded, label, tokens: Vec::new(), span: None, score: 0.0, second: None, sequences: Vec::new(), teacher: Vec::new(), targets: Vec::new() }
    }

    /// The text with its teacher's probabilities of each label (a student's training text; see
    /// [`Distillation`](crate::tasks::distillation::Distillation)), kept as logarithms.
    pub fn with_teacher(self, probs: &[f32]) -> Self {
        Self { teacher: probs.iter().map(|p| p.max(1e-30).ln()).collect(), ..self }
    }

    /// A multi-label text with its targets, one 0 or 1 per label.
    pub fn with_labels(encoded: Encoded, targets: Vec<f32>) -> Self {
        Self { targets, ..Self::sentence(encoded, 0) }
    }

    /// A token classifier's example: targets from [`crate::tasks::tagging::targets`].
    pub fn tagged(encoded: Encoded, tokens: Vec<TokenTarget>) -> Self {
        Self { tokens, ..Self::sentence(encoded, 0) }
    }

    /// A question-answering window: see [`encode_questions`].
    pub fn window(encoded: Encoded, span: SpanTarget) -> Self {
        Self { span: Some(span), ..Self::sentence(encoded, 0) }
    }

    /// A cross-encoder's pair, read together (`[CLS] a [SEP] b [SEP]`), with its score.
    pub fn scored(pair: Encoded, score: f32) -> Self {
        Self { score, ..Self::sentence(pair, 0) }
    }

    /// A bi-encoder's pair, each text encoded alone, with its score.
    pub fn pair(first: Encoded, second: Encoded, score: f32) -> Self {
        Self { score, second: Some(second), ..Self::sentence(first, 0) }
    }

    /// A group of sequences scored together, and the index of the right one (`None` for an
    /// empty group).
    pub fn group(sequences: Vec<Encoded>, label: usize) -> Option<Self> {
        let first = sequences.first()?.clone();
        Some(Self { sequences, ..Self::sentence(first, label) })
    }

    /// Its longest sequence, in tokens.
    pub(super) fn len(&self) -> usize {
        let longest = |all: &[Encoded]| all.iter().map(|e| e.tokens.len()).max().unwrap_or(0);
        self.encoded.tokens.len().max(self.second.as_ref().map_or(0, |s| s.tokens.len())).max(longest(&self.sequences))
    }
}

pub(super) fn scores_tensor(scores: &[f32], device: &Device) -> Tensor<1> {
    Tensor::from_data(TensorData::new(scores.to_vec(), [scores.len()]), device)
}

pub(super) fn labels_tensor(labels: &[usize], device: &Device) -> Tensor<1, Int> {
    let v: Vec<i64> = labels.iter().map(|&l| l as i64).collect();
    Tensor::from_data(TensorData::new(v, [labels.len()]), device)
}

