//! Evaluation of a fine-tuning run on its validation set: logits batch by batch, then the
//! metrics (accuracy, a tagger's entity-level scores), the best weights kept.

use burn::prelude::*;

use super::units::{batch_inputs, batch_units};
use super::{Best, EvalReport, LabeledText, Event, FineTuner, Phase, TrainMode, score};
use crate::bert::model::BertInput;
use crate::error::Error;
use crate::nn::read_f32;
use crate::tasks::classification::Level;
use crate::tasks::metrics::{Metrics, argmax, softmax};
use crate::tasks::qa::{AnswerMetrics, best_spans};
use crate::tasks::similarity::{self, SimilarityMetrics};
use crate::tasks::tagging::EntityMetrics;
use crate::tokenizer::Batch;

/// Mean cross-entropy of host-side logits rows.
fn cross_entropy(logits: &[f32], labels: &[usize], k: usize) -> f32 {
    let total: f64 = logits
        .chunks(k)
        .zip(labels)
        .map(|(row, &y)| -(softmax(row)[y].max(1e-30) as f64).ln())
        .sum();
    (total / labels.len().max(1) as f64) as f32
}

/// The scores of one validation pass.
struct Scored {
    valid_loss: f32,
    metrics: Metrics,
    entities: Option<EntityMetrics>,
    answers: Option<(AnswerMetrics, Vec<String>)>,
    similarity: Option<SimilarityMetrics>,
    /// Per text (a tagger: per word) probabilities; a similarity model's predicted score.
    probs: Vec<Vec<f32>>,
}

impl FineTuner {
    pub(super) async fn eval_batch(&mut self) -> crate::Result<Event> {
        let inner = self.device.clone().inner();
        let level = self.level();
        let state = self.eval.as_mut().expect("called while evaluating");
        let total = self.valid.len();
        if self.phase == Phase::Head {
            let head = self.model.head.valid();
            let feats = self.valid_features.clone().expect("cached").inner();
            let out = head.forward(feats);
            let out = if level == Level::Embedding { similarity::pair_cosines(out) } else { out };
            state.logits = read_f32(out).await?;
            state.next = total;
        } else {
            // Shortest first, each example's logits stored at its row.
            let k = self.labels.len();
            let end = (state.next + self.config.batch_size.max(16)).min(total);
            let indices = &self.valid_order[state.next..end];
            let examples: Vec<&LabeledText> = indices.iter().map(|&i| &self.valid[i]).collect();
            let model = self.model.valid();
            let batch = Batch::from_encoded(&batch_inputs(&examples, level), self.pad_id);
            let input = BertInput::from_batch(&batch, &inner);
            if level == Level::Embedding {
                // One cosine per pair, stored at the pair.
                let cosines = read_f32(model.forward_units(input, None)?).await?;
                for (&i, c) in indices.iter().zip(cosines) {
                    state.logits[i] = c;
                }
            } else {
                let (positions, _) = batch_units(&examples, level, batch.seq_len, &inner);
                let logits = read_f32(model.forward_rows(input, positions)?).await?;
                // Each example's unit rows go where its units start (validation units counted alone).
                let base = self.row_start[self.train.len()];
                let mut from = 0;
                for &i in indices {
                    let at = self.train.len() + i;
                    let (a, b) = ((self.row_start[at] - base) * k, (self.row_start[at + 1] - base) * k);
                    state.logits[a..b].copy_from_slice(&logits[from..from + b - a]);
                    from += b - a;
                }
            }
            state.next = end;
            if end < total {
                return Ok(Event::Evaluating { done: end, total });
            }
        }
        let state = self.eval.take().expect("evaluating");
        if state.logits.iter().any(|v| !v.is_finite()) {
            self.phase = Phase::Done;
            return Err(Error::Training("the model produced NaN or infinite outputs on the validation set; training stopped".into()));
        }
        let scored = match self.level() {
            Level::Span => self.score_answers(&state.logits),
            Level::Score | Level::Embedding => self.score_similarity(&state.logits),
            _ => self.score_labels(&state.logits),
        };
        let Scored { valid_loss, metrics, entities, answers, similarity, probs } = scored;
        let score = score(&metrics, entities.as_ref(), answers.as_ref().map(|a| &a.0), similarity.as_ref());
        let best = self
            .best
            .as_ref()
            .is_none_or(|b| score > self::score(&b.metrics, b.entities.as_ref(), b.answers.as_ref().map(|a| &a.0), b.similarity.as_ref()));
        let answer_metrics = answers.as_ref().map(|a| a.0.clone());
        if best {
            let (entities, similarity) = (entities.clone(), similarity.clone());
            self.best = Some(Best { model: self.model.clone(), metrics: metrics.clone(), entities, answers, similarity, probs, step: Some(self.step) });
        }
        let (loss_sum, correct, seen) = std::mem::take(&mut self.since_eval);
        let report = EvalReport {
            phase: self.phase,
            step: self.step,
            epoch: self.fractional_epoch(),
            train_loss: (loss_sum / seen.max(1) as f64) as f32,
            train_accuracy: correct as f32 / seen.max(1) as f32,
            valid_loss,
            metrics,
            entities,
            answers: answer_metrics,
            similarity,
            best,
        };
        if state.end_of_epoch {
            self.epoch += 1;
            if self.epoch < self.epochs_of(self.phase) {
                self.new_epoch_order();
            } else if self.phase == Phase::Head && self.config.mode == TrainMode::FreezeThenUnfreeze && self.config.epochs > 0 {
                // Free the cached features; the encoder now trains. This call reports the
                // evaluation, the next one the new stage.
                self.train_features = None;
                self.valid_features = None;
                self.announce = Some(self.start_phase(Phase::Full));
            } else {
                self.phase = Phase::Done;
            }
        }
        Ok(Event::Evaluated(Box::new(report)))
    }

    /// A classifier's or tagger's scores: of each text, or each word at its first piece.
    fn score_labels(&self, logits: &[f32]) -> Scored {
        let k = self.labels.len();
        let level = self.level();
        let all_truth: Vec<usize> = self.valid.iter().flat_map(|t| t.unit_labels(level)).collect();
        let valid_loss = cross_entropy(logits, &all_truth, k);
        let counted: Vec<bool> = match level {
            Level::Token => self.valid.iter().flat_map(|t| t.tokens.iter().map(|x| x.word_start)).collect(),
            _ => vec![true; self.valid.len()],
        };
        let rows: Vec<&[f32]> = logits.chunks(k).zip(&counted).filter(|(_, c)| **c).map(|(row, _)| row).collect();
        let truth: Vec<usize> = all_truth.iter().zip(&counted).filter(|(_, c)| **c).map(|(t, _)| *t).collect();
        let pred: Vec<usize> = rows.iter().map(|r| argmax(r)).collect();
        let metrics = Metrics::new(&truth, &pred, &self.labels);
        let entities = (level == Level::Token).then(|| self.entity_metrics(&pred)).flatten();
        let probs = rows.iter().map(|r| softmax(r)).collect();
        Scored { valid_loss, metrics, entities, answers: None, similarity: None, probs }
    }

    /// A similarity model's scores: its outputs (a cross-encoder's score, a bi-encoder's cosine,
    /// one per pair in validation order) against the gold scores; `metrics` tell pairs above
    /// 0.5 ("similar") from the others.
    fn score_similarity(&self, outputs: &[f32]) -> Scored {
        let n = self.valid.len();
        let pred = &outputs[..n];
        let gold: Vec<f32> = self.valid.iter().map(|t| t.score).collect();
        let binary = gold.iter().all(|&g| g == 0.0 || g == 1.0);
        let valid_loss = similarity::host_loss(self.level(), self.config.similarity_loss, pred, &gold);
        let side = |x: f32| usize::from(x >= 0.5);
        let truth: Vec<usize> = gold.iter().map(|&g| side(g)).collect();
        let said: Vec<usize> = pred.iter().map(|&p| side(p)).collect();
        let metrics = Metrics::new(&truth, &said, &["different".to_string(), "similar".to_string()]);
        let scores = SimilarityMetrics::new(&gold, pred, binary);
        Scored { valid_loss, metrics, entities: None, answers: None, similarity: Some(scores), probs: pred.iter().map(|&p| vec![p]).collect() }
    }

    /// A question-answering model's scores: the loss of each window's start and end, each
    /// question's best span over its windows, SQuAD's exact match and F1; `metrics` tell
    /// answered from unanswered questions.
    fn score_answers(&self, logits: &[f32]) -> Scored {
        let base = self.row_start[self.train.len()];
        let at = |i: usize| {
            let row = self.train.len() + i;
            &logits[(self.row_start[row] - base) * 2..(self.row_start[row + 1] - base) * 2]
        };
        let allow_null = self.train.iter().chain(&self.valid).any(|t| t.span.as_ref().is_some_and(|s| s.item.answers.is_empty()));
        let (mut loss, mut gold, mut pred) = (0.0f64, Vec::new(), Vec::new());
        let mut i = 0;
        while i < self.valid.len() {
            let item = &self.valid[i].span.as_ref().expect("checked in new").item;
            let mut j = i;
            let (mut windows, mut rows) = (Vec::new(), Vec::new());
            while j < self.valid.len() && self.valid[j].span.as_ref().is_some_and(|s| std::sync::Arc::ptr_eq(&s.item, item)) {
                let (t, span) = (&self.valid[j], self.valid[j].span.as_ref().expect("a window"));
                let r = at(j);
                let (starts, ends): (Vec<f32>, Vec<f32>) = r.chunks(2).map(|x| (x[0], x[1])).unzip();
                loss += cross_entropy(&starts, &[span.start], starts.len()) as f64 + cross_entropy(&ends, &[span.end], ends.len()) as f64;
                windows.push((&t.encoded, span.context.clone()));
                rows.push(r);
                j += 1;
            }
            let answered = best_spans(&item.context, &windows, &rows, &self.config.spans, allow_null);
            gold.push(item.answers.iter().map(|a| a.text.clone()).collect::<Vec<_>>());
            pred.push(answered.answer.map(|a| a.text).unwrap_or_default());
            i = j;
        }
        let valid_loss = (loss / (2 * self.valid.len()).max(1) as f64) as f32;
        let answerable = |has: bool| usize::from(!has);
        let truth: Vec<usize> = gold.iter().map(|g| answerable(!g.is_empty())).collect();
        let said: Vec<usize> = pred.iter().map(|p| answerable(!p.is_empty())).collect();
        let metrics = Metrics::new(&truth, &said, &["an answer".to_string(), "no answer".to_string()]);
        let answers = AnswerMetrics::new(&gold, &pred);
        Scored { valid_loss, metrics, entities: None, answers: Some((answers, pred)), similarity: None, probs: Vec::new() }
    }

    /// Entity-level metrics of a tagger's word predictions (validation order), when its tags
    /// are BIO.
    fn entity_metrics(&self, pred: &[usize]) -> Option<EntityMetrics> {
        if !self.labels.iter().any(|l| l.starts_with("B-")) {
            return None;
        }
        let mut pred = pred.iter();
        let (mut truth_tags, mut pred_tags) = (Vec::new(), Vec::new());
        for t in &self.valid {
            let words = t.tokens.iter().filter(|x| x.word_start);
            truth_tags.push(words.clone().map(|x| self.labels[x.tag].as_str()).collect::<Vec<_>>());
            pred_tags.push(words.map(|_| self.labels[*pred.next().expect("one prediction per word")].as_str()).collect::<Vec<_>>());
        }
        Some(EntityMetrics::new(&truth_tags, &pred_tags))
    }

}
