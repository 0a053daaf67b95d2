//! A fine-tuning run's settings: what trains ([`TrainMode`]), its stages ([`Phase`]) and the
//! [`FineTuneConfig`] every task reads, with the reader of configurations saved by earlier
//! versions.

// `Result` is left as std's here: `#[derive(Config)]` expands code that names it.
use burn::prelude::*;
use serde::{Deserialize, Serialize};

use crate::data::ScoreScale;
use crate::tasks::classification::{FeatureSpec, Level};
use crate::tasks::distillation::Distillation;
use crate::tasks::qa::SpanConfig;
use crate::tasks::similarity::SimilarityLoss;

/// What trains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum TrainMode {
    /// Frozen encoder, cached features, only the head trains.
    #[default]
    HeadOnly,
    /// Every weight trains from the first step.
    Full,
    /// Head-only epochs first, then full fine-tuning.
    FreezeThenUnfreeze,
}

impl TrainMode {
    /// Short label for the page.
    pub fn label(self) -> &'static str {
        match self {
            TrainMode::HeadOnly => "head only (frozen encoder)",
            TrainMode::Full => "full fine-tuning",
            TrainMode::FreezeThenUnfreeze => "freeze, then unfreeze",
        }
    }
}

/// A stage of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Phase {
    /// Computing the frozen encoder's features.
    Features,
    /// Training the head on cached features.
    Head,
    /// Training everything.
    Full,
    /// Finished.
    Done,
}

/// Hyper-parameters of a run. Defaults follow the BERT paper's fine-tuning recipe (batch 32,
/// lr 5e-5, 2 epochs, 10% warmup, weight decay 0.01, dropout 0.1, clip at norm 1) and, for the
/// head on frozen features, a larger learning rate and more epochs (its steps take
/// milliseconds: it is logistic regression on cached vectors).
#[derive(Config, Debug)]
pub struct FineTuneConfig {
    /// What trains.
    #[config(default = "TrainMode::HeadOnly")]
    pub mode: TrainMode,
    /// What the head reads.
    #[config(default = "FeatureSpec::default()")]
    pub features: FeatureSpec,
    /// Examples per step.
    #[config(default = 32)]
    pub batch_size: usize,
    /// Peak learning rate when the encoder trains.
    #[config(default = 5e-5)]
    pub learning_rate: f64,
    /// Epochs of full fine-tuning.
    #[config(default = 2)]
    pub epochs: usize,
    /// Peak learning rate of the head on frozen features.
    #[config(default = 5e-3)]
    pub head_learning_rate: f64,
    /// Epochs of head-only training (head-only mode, or the first stage of freeze-then-unfreeze).
    #[config(default = 20)]
    pub head_epochs: usize,
    /// Fraction of each stage's steps spent warming the learning rate up from 0.
    #[config(default = 0.1)]
    pub warmup_ratio: f64,
    /// Decoupled weight decay (not applied to biases and LayerNorm).
    #[config(default = 0.01)]
    pub weight_decay: f64,
    /// Gradients are scaled down so their global L2 norm is at most this; 0 turns it off.
    #[config(default = 1.0)]
    pub max_grad_norm: f64,
    /// Dropout before the head, as `transformers`' sequence and token classifiers have it. A
    /// question-answering head has none whatever this says: `BertForQuestionAnswering`'s
    /// `qa_outputs` reads the encoder's last hidden states as they are.
    #[config(default = 0.1)]
    pub dropout: f64,
    /// Seed of the head's initialisation, dropout and batch order.
    #[config(default = 42)]
    pub seed: u64,
    /// Also evaluate every this many steps (0: only at the end of each epoch).
    #[config(default = 0)]
    pub eval_every: usize,
    /// Full fine-tuning batches texts of similar length together (see [`group_by_length`]),
    /// so a batch pads to little more than its own texts: less work per epoch, a slightly
    /// less random batch order.
    #[config(default = true)]
    pub group_by_length: bool,
    /// A question-answering run's windows and answer search.
    #[config(default = "SpanConfig::new()")]
    pub spans: SpanConfig,
    /// What a bi-encoder minimises.
    #[config(default = "SimilarityLoss::Cosine")]
    pub similarity_loss: SimilarityLoss,
    /// A similarity run's score scale (what 0 and 1 stand for in the data), kept with the model.
    #[config(default = "None")]
    pub score_scale: Option<ScoreScale>,
    /// A student's run: how a sentence classifier learns from its teacher's probabilities, which
    /// each training text then carries ([`LabeledText::with_teacher`](super::LabeledText::with_teacher)).
    #[config(default = "None")]
    pub distil: Option<Distillation>,
}

impl FineTuneConfig {
    /// The recipe a task starts with, in the studio and the command line, for a model that
    /// labels at `level` (its task's: question answering trains everything; every other task
    /// starts with the head alone on the frozen encoder's cached features).
    pub fn recipe(level: Level) -> Self {
        super::task::of(level).recipe()
    }

    /// The recipe for a model that labels at `level` on data of `pairs` of texts read together:
    /// a sentence classifier of pairs trains everything (see `pairs_recipe`); otherwise
    /// [`recipe`](Self::recipe).
    pub fn recipe_for_data(level: Level, pairs: bool) -> Self {
        super::task::of(level).recipe_on(pairs)
    }
}

/// Deserializes a [`FineTuneConfig`] saved by an earlier version: fields it lacks take their
/// defaults, so settings and checkpoints saved before a field existed still load. For
/// `#[serde(deserialize_with = "...")]`.
pub fn config_with_defaults<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<FineTuneConfig, D::Error> {
    use serde::de::Error as _;
    let saved = serde_json::Value::deserialize(d)?;
    let mut merged = serde_json::to_value(FineTuneConfig::new()).map_err(D::Error::custom)?;
    if let (Some(m), serde_json::Value::Object(saved)) = (merged.as_object_mut(), saved) {
        m.extend(saved);
    }
    serde_json::from_value(merged).map_err(D::Error::custom)
}

#[cfg(test)]
mod tests {
    use super::*;


    #[test]
    fn each_task_starts_with_its_recipe() {
        let qa = FineTuneConfig::recipe(Level::Span);
        assert_eq!((qa.mode, qa.batch_size, qa.learning_rate, qa.epochs), (TrainMode::Full, 16, 1.5e-4, 5));
        let tag = FineTuneConfig::recipe(Level::Token);
        assert_eq!((tag.mode, tag.batch_size, tag.learning_rate, tag.epochs), (TrainMode::Full, 16, 1e-4, 5));
        for full in [FineTuneConfig::recipe(Level::Score), FineTuneConfig::recipe(Level::Embedding), FineTuneConfig::recipe_for_data(Level::Sentence, true)] {
            assert_eq!((full.mode, full.batch_size, full.learning_rate, full.epochs), (TrainMode::Full, 16, 5e-5, 2));
        }
        for level in [Level::Sentence] {
            let r = FineTuneConfig::recipe(level);
            assert_eq!((r.mode, r.head_epochs, r.batch_size), (TrainMode::HeadOnly, 20, 32), "{level:?}");
        }
    }
}
