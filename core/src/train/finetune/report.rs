//! What a fine-tuning run reports: each optimizer step ([`StepPoint`]), each evaluation
//! ([`EvalReport`]), each unit of work done ([`Event`]) and where it stands ([`Progress`]).

use serde::{Deserialize, Serialize};

use super::Phase;
use crate::tasks::metrics::Metrics;
use crate::tasks::qa::AnswerMetrics;
use crate::tasks::similarity::SimilarityMetrics;
use crate::tasks::tagging::EntityMetrics;

/// One optimizer step, as reported.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
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

/// An evaluation on the validation set.
#[derive(Debug, Clone, Serialize, Deserialize)]
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
    /// A tagger's entity-level metrics (when its tags are BIO).
    #[serde(default)]
    pub entities: Option<EntityMetrics>,
    /// A question-answering model's exact match and F1 (SQuAD's).
    #[serde(default)]
    pub answers: Option<AnswerMetrics>,
    /// A similarity model's correlations with the gold scores.
    #[serde(default)]
    pub similarity: Option<SimilarityMetrics>,
    /// Whether this is the best validation score so far (its weights are kept): see
    /// [`score`](Self::score).
    pub best: bool,
}

impl EvalReport {
    /// The score runs are compared by: a similarity model's Spearman correlation, a
    /// question-answering model's F1, entity F1 where there are entities, else accuracy.
    pub fn score(&self) -> f32 {
        score(&self.metrics, self.entities.as_ref(), self.answers.as_ref(), self.similarity.as_ref())
    }
}

pub(super) fn score(metrics: &Metrics, entities: Option<&EntityMetrics>, answers: Option<&AnswerMetrics>, similarity: Option<&SimilarityMetrics>) -> f32 {
    similarity.map(|s| s.spearman).or(answers.map(|a| a.all.f1)).or(entities.map(|e| e.f1)).unwrap_or(metrics.accuracy)
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
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Progress {
    /// Current stage.
    pub phase: Phase,
    /// Optimizer steps done.
    pub step: usize,
    /// Optimizer steps in the whole run.
    pub total_steps: usize,
}
