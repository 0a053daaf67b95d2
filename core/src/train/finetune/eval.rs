//! Evaluation of a fine-tuning run on its validation set: logits batch by batch, then the
//! metrics (accuracy, a tagger's entity-level scores), the best weights kept.

use burn::prelude::*;

use super::task::{Scored, batch_inputs, batch_units};
use super::{Best, EvalReport, LabeledText, Event, FineTuner, Phase, TrainMode};
use crate::bert::model::BertInput;
use crate::error::Error;
use crate::nn::read_f32;
use crate::tokenizer::Batch;

impl FineTuner {
    pub(super) async fn eval_batch(&mut self) -> crate::Result<Event> {
        let inner = self.device.clone().inner();
        let task = self.task();
        let state = self.eval.as_mut().expect("called while evaluating");
        let total = self.valid.len();
        if self.phase == Phase::Head {
            let head = self.model.head.valid();
            let feats = self.valid_features.clone().expect("cached").inner();
            let out = head.forward(feats);
            state.logits = read_f32(task.rows_to_units(out)).await?;
            state.next = total;
        } else {
            // Shortest first, each example's logits stored at its row.
            let k = self.labels.len();
            let end = (state.next + self.config.batch_size.max(16)).min(total);
            let indices = &self.valid_order[state.next..end];
            let examples: Vec<&LabeledText> = indices.iter().map(|&i| &self.valid[i]).collect();
            let model = self.model.valid();
            let batch = Batch::from_encoded(&batch_inputs(&examples, task), self.pad_id);
            let input = BertInput::from_batch(&batch, &inner);
            if task.one_output_per_pair() {
                // One cosine per pair, stored at the pair.
                let cosines = read_f32(model.forward_units(input, None)?).await?;
                for (&i, c) in indices.iter().zip(cosines) {
                    state.logits[i] = c;
                }
            } else {
                let (positions, _) = batch_units(&examples, task, batch.seq_len, &inner);
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
        let scored = task.score(self, &state.logits);
        let Scored { valid_loss, metrics, scores, predictions, probs } = scored;
        let score = scores.score(&metrics);
        let best = self.best.as_ref().is_none_or(|b| score > b.scores.score(&b.metrics));
        if best {
            self.best = Some(Best { model: self.model.clone(), metrics: metrics.clone(), scores: scores.clone(), predictions, probs, step: Some(self.step) });
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
            scores,
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
}
