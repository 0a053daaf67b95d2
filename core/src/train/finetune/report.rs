//! What a fine-tuning run reports: each optimizer step ([`StepPoint`]), each evaluation
//! ([`EvalReport`]), each unit of work done ([`Event`]) and where it stands ([`Progress`]).

use serde::{Deserialize, Serialize};

use super::Phase;
use crate::tasks::metrics::Metrics;
use crate::tasks::multi_label::LabelSetMetrics;
use crate::tasks::qa::AnswerMetrics;
use crate::tasks::similarity::SimilarityMetrics;
use crate::tasks::tagging::EntityMetrics;

/// One optimizer step, as reported.
#[derive(Debug, Clone, Copy)]
pub struct StepPoint {
    /// Stage the step belongs to.
    pub phase: Phase,
    /// Steps done in the whole run, this one included.
    pub step: usize,
    /// Fractional epoch within the stage (1.5 = half-way through the second epoch).
    pub epoch: f32,
    /// Mean cross-entropy of the batch.
    pub loss: f32,
    /// Learning rate used.
    pub lr: f64,
    /// Global gradient norm before clipping.
    pub grad_norm: f32,
}

/// What a task scores beyond its validation loss and class metrics: one variant per kind of
/// task, so an evaluation carries its own task's scores and no other's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub enum TaskScores {
    /// The class metrics are the score: sentence and pair classification, a tagger whose tags
    /// are not BIO, any task scored by accuracy.
    #[default]
    Classes,
    /// A tagger with BIO tags: entity-level precision, recall and F1 (seqeval's).
    Entities(EntityMetrics),
    /// Question answering: SQuAD's exact match and F1.
    Answers(AnswerMetrics),
    /// Similarity: the correlations of the predicted scores with the gold ones.
    Similarity(SimilarityMetrics),
    /// Multi-label classification: each label's and the micro and macro F1 at the threshold
    /// chosen on the validation set.
    Labels(LabelSetMetrics),
}

impl TaskScores {
    /// The score runs are compared by: a similarity model's Spearman correlation, a
    /// question-answering model's F1, a BIO tagger's entity F1, a multi-label model's micro F1,
    /// else the accuracy in `metrics`.
    pub fn score(&self, metrics: &Metrics) -> f32 {
        match self {
            TaskScores::Classes => metrics.accuracy,
            TaskScores::Entities(e) => e.f1,
            TaskScores::Answers(a) => a.all.f1,
            TaskScores::Similarity(s) => s.spearman,
            TaskScores::Labels(l) => l.micro_f1,
        }
    }

    /// A BIO tagger's entity metrics.
    pub fn entities(&self) -> Option<&EntityMetrics> {
        if let TaskScores::Entities(e) = self { Some(e) } else { None }
    }

    /// A question-answering model's scores.
    pub fn answers(&self) -> Option<&AnswerMetrics> {
        if let TaskScores::Answers(a) = self { Some(a) } else { None }
    }

    /// A multi-label model's scores.
    pub fn labels(&self) -> Option<&LabelSetMetrics> {
        if let TaskScores::Labels(l) = self { Some(l) } else { None }
    }

    /// A similarity model's correlations.
    pub fn similarity(&self) -> Option<&SimilarityMetrics> {
        if let TaskScores::Similarity(s) = self { Some(s) } else { None }
    }

    /// The scores as an earlier build saved them, one optional field per task (at most one set).
    pub fn from_fields(entities: Option<EntityMetrics>, answers: Option<AnswerMetrics>, similarity: Option<SimilarityMetrics>) -> Self {
        match (similarity, answers, entities) {
            (Some(s), _, _) => TaskScores::Similarity(s),
            (_, Some(a), _) => TaskScores::Answers(a),
            (_, _, Some(e)) => TaskScores::Entities(e),
            _ => TaskScores::Classes,
        }
    }
}

/// An evaluation on the validation set.
#[derive(Debug, Clone)]
pub struct EvalReport {
    /// Stage evaluated in.
    pub phase: Phase,
    /// Steps done in the whole run.
    pub step: usize,
    /// Fractional epoch within the stage.
    pub epoch: f32,
    /// Mean training loss since the previous evaluation.
    pub train_loss: f32,
    /// Training accuracy since the previous evaluation (with dropout on, as trained).
    pub train_accuracy: f32,
    /// Mean validation cross-entropy.
    pub valid_loss: f32,
    /// Validation metrics (a token classifier's: of each word's tag, read at its first piece).
    pub metrics: Metrics,
    /// The task's own scores.
    pub scores: TaskScores,
    /// Whether this is the best validation score so far (its weights are kept): see
    /// [`score`](Self::score).
    pub best: bool,
}

impl EvalReport {
    /// The score runs are compared by ([`TaskScores::score`]).
    pub fn score(&self) -> f32 {
        self.scores.score(&self.metrics)
    }
}

/// What one call of [`FineTuner::advance`] did.
#[derive(Debug, Clone)]
pub enum Event {
    /// Computed a batch of frozen features.
    Features {
        /// Examples done (training then validation).
        done: usize,
        /// Examples in all.
        total: usize,
    },
    /// A stage starts.
    PhaseStarted {
        /// Which.
        phase: Phase,
        /// Its optimizer steps.
        steps: usize,
    },
    /// One optimizer step.
    Step(StepPoint),
    /// Evaluated a batch of the validation set.
    Evaluating {
        /// Examples done.
        done: usize,
        /// Examples in all.
        total: usize,
    },
    /// A validation pass finished.
    Evaluated(Box<EvalReport>),
    /// The run is over; [`FineTuner::best_model`] has the result.
    Finished,
}

/// Where the run stands, for a progress bar.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Current stage.
    pub phase: Phase,
    /// Optimizer steps done.
    pub step: usize,
    /// Optimizer steps in the whole run.
    pub total_steps: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(scores: TaskScores) -> EvalReport {
        let metrics = Metrics::new(&[0, 1, 1], &[0, 1, 0], &["a".to_string(), "b".to_string()]);
        EvalReport { phase: Phase::Full, step: 9, epoch: 1.5, train_loss: 0.4, train_accuracy: 0.8, valid_loss: 0.5, metrics, scores, best: true }
    }

    /// Each task is compared by its own score: a tagger by entity F1, QA by F1, similarity by
    /// Spearman, the rest by accuracy.
    #[test]
    fn each_task_is_compared_by_its_own_score() {
        let answers = AnswerMetrics::new(&[vec!["the cat"], vec!["a dog"]], &["the cat", "a cat"]);
        let similarity = SimilarityMetrics::new(&[0.0, 0.5, 1.0], &[0.1, 0.7, 0.6], false);
        let entities = EntityMetrics::new(&[vec!["B-PER", "O"]], &[vec!["B-PER", "O"]]);
        assert_eq!(report(TaskScores::Classes).score(), 2.0 / 3.0);
        assert_eq!(report(TaskScores::Answers(answers.clone())).score(), answers.all.f1);
        assert_eq!(report(TaskScores::Similarity(similarity.clone())).score(), similarity.spearman);
        assert_eq!(report(TaskScores::Entities(entities)).score(), 1.0);
    }
}
