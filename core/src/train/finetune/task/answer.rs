//! Extractive question answering (`*ForQuestionAnswering`): a window of question and passage
//! has two units, its answer's start and end, each a choice among the window's tokens, so the
//! head reads every token of it (`qa_outputs`) and the windows of a batch are padded to the
//! longest. Scored per question over its windows, by SQuAD's exact match and F1.

use super::*;
use std::sync::Arc;

use crate::data::QaItem;
use crate::tasks::qa::{SpanConfig, encode_question};
use crate::tokenizer::BertTokenizer;
use crate::train::finetune::units::SpanTarget;
use crate::error::Error;
use crate::tasks::metrics::Metrics;
use crate::tasks::qa::{AnswerMetrics, best_spans};
use super::cross_entropy;
use crate::train::finetune::TrainMode;

pub(super) struct Answer;

impl UnitTask for Answer {
    fn check(&self, labels: &[String], examples: &[&LabeledText]) -> crate::Result<()> {
        if labels.len() != 2 || examples.iter().any(|t| t.span.is_none()) {
            return Err(Error::Training("a question-answering run needs the labels start and end and every window's answer".into()));
        }
        Ok(())
    }

    /// It trains everything: a start/end head on a frozen encoder scores each token alone and
    /// cannot tell which question is asked (docs/performance.md, "Question answering on the
    /// example data"). Five epochs: on SQuAD training questions held out they score what ten
    /// did, in half the time (docs/performance.md, "Recipes chosen on dev splits").
    fn recipe(&self) -> FineTuneConfig {
        FineTuneConfig::new().with_mode(TrainMode::Full).with_batch_size(16).with_learning_rate(1.5e-4).with_epochs(5)
    }

    /// Without dropout: the encoder's own is all `transformers`' QA recipe has; one more before
    /// the start and end logits makes them noisier than the recipe's (core/tests/qa_training.rs
    /// holds the loss's spread over dropout masks to PyTorch's).
    fn head(&self, width: usize, labels: usize, _dropout: f64, device: &Device) -> ClassificationHead {
        ClassificationHeadConfig::new(width, labels).with_dropout(0.0).init(device)
    }

    fn unit_labels(&self, t: &LabeledText) -> Vec<usize> {
        t.span.as_ref().map_or_else(Vec::new, |s| vec![s.start, s.end])
    }

    fn units(&self, _t: &LabeledText) -> usize {
        2
    }

    fn rows(&self, t: &LabeledText) -> usize {
        t.encoded.tokens.len()
    }

    fn row_positions(&self, t: &LabeledText) -> Option<Vec<usize>> {
        Some((0..t.encoded.tokens.len()).collect())
    }

    fn windows(&self) -> bool {
        true
    }

    /// The loss of each window's start and end, each question's best span over its windows,
    /// SQuAD's exact match and F1; `metrics` tell answered from unanswered questions.
    fn score(&self, tuner: &FineTuner, logits: &[f32]) -> Scored {
        let (train, valid) = (&tuner.train, &tuner.valid);
        let base = tuner.row_start[train.len()];
        let at = |i: usize| {
            let row = train.len() + i;
            &logits[(tuner.row_start[row] - base) * 2..(tuner.row_start[row + 1] - base) * 2]
        };
        let allow_null = train.iter().chain(valid).any(|t| t.span.as_ref().is_some_and(|s| s.item.answers.is_empty()));
        let (mut loss, mut gold, mut pred) = (0.0f64, Vec::new(), Vec::new());
        let mut i = 0;
        while i < valid.len() {
            let item = &valid[i].span.as_ref().expect("checked in new").item;
            let mut j = i;
            let (mut windows, mut rows) = (Vec::new(), Vec::new());
            while j < valid.len() && valid[j].span.as_ref().is_some_and(|s| std::sync::Arc::ptr_eq(&s.item, item)) {
                let (t, span) = (&valid[j], valid[j].span.as_ref().expect("a window"));
                let r = at(j);
                let (starts, ends): (Vec<f32>, Vec<f32>) = r.chunks(2).map(|x| (x[0], x[1])).unzip();
                loss += cross_entropy(&starts, &[span.start], starts.len()) as f64 + cross_entropy(&ends, &[span.end], ends.len()) as f64;
                windows.push((&t.encoded, span.context.clone()));
                rows.push(r);
                j += 1;
            }
            let answered = best_spans(&item.context, &windows, &rows, &tuner.config.spans, allow_null);
            gold.push(item.answers.iter().map(|a| a.text.clone()).collect::<Vec<_>>());
            pred.push(answered.answer.map(|a| a.text).unwrap_or_default());
            i = j;
        }
        let valid_loss = (loss / (2 * valid.len()).max(1) as f64) as f32;
        let answerable = |has: bool| usize::from(!has);
        let truth: Vec<usize> = gold.iter().map(|g| answerable(!g.is_empty())).collect();
        let said: Vec<usize> = pred.iter().map(|p| answerable(!p.is_empty())).collect();
        let metrics = Metrics::new(&truth, &said, &["an answer".to_string(), "no answer".to_string()]);
        let answers = AnswerMetrics::new(&gold, &pred);
        Scored { valid_loss, metrics, scores: TaskScores::Answers(answers), predictions: pred, probs: Vec::new() }
    }
}

/// Windows of questions over passages for a question-answering model (see
/// [`crate::tasks::qa::encode_question`]): each window with its answer's token positions, the
/// first gold answer learned. Returns the windows, question after question, and how many
/// answered questions have their answer in no window whole (too long for one: they learn only
/// "no answer").
pub fn encode_questions(tokenizer: &BertTokenizer, items: &[QaItem], config: &SpanConfig) -> crate::Result<(Vec<LabeledText>, usize)> {
    let mut windows = Vec::new();
    let mut lost = 0;
    for item in items {
        let shared = Arc::new(item.clone());
        let encoded = encode_question(tokenizer, item, config).map_err(|e| Error::Input(format!("line {} (question {}): {e}", item.line, item.id)))?;
        lost += usize::from(!item.answers.is_empty() && encoded.iter().all(|(_, at)| *at == (0, 0)));
        for (w, (start, end)) in encoded {
            windows.push(LabeledText::window(w.encoded, SpanTarget { start, end, context: w.context, item: shared.clone() }));
        }
    }
    Ok((windows, lost))
}
