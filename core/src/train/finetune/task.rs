//! What the fine-tuning session asks of its task, one implementation per task in `task/`, found
//! by [`of`] (the one place a task is told apart by its [`Level`]): the sequences an example
//! feeds the encoder; its *units* (what is scored: a text, a target token, a window's start and
//! end, a pair) with their labels or scores; the rows of features the head reads for them and
//! where they sit among the tokens; the head; the loss; and how the validation set is scored.
//! [`FineTuner`](super::FineTuner) itself holds no switch on the task.

use burn::prelude::*;

use burn::tensor::TensorData;

use super::units::{LabeledText, labels_tensor};
use super::{FineTuneConfig, FineTuner};
use crate::bert::config::BertConfig;
use crate::bert::model::BertModel;
use crate::bert::pooling::Pooling;
use crate::tasks::classification::{ClassificationHead, ClassificationHeadConfig, FeatureSpec, Level};
use crate::tasks::metrics::{Metrics, argmax, softmax};
use super::TaskScores;
use crate::tokenizer::Encoded;

pub use answer::encode_questions;
pub use classify::encode_examples;
pub use multi_label::encode_label_sets;
pub use similarity::encode_pairs;
pub use tag::encode_tagged;

mod answer;
pub mod choice;
mod classify;
mod multi_label;
mod similarity;
mod tag;

/// A task, as the training session sees it.
pub(crate) trait UnitTask: Sync {
    /// Refuses a run this task cannot train: its `labels`, and its `examples` (training and
    /// validation).
    fn check(&self, labels: &[String], examples: &[&LabeledText]) -> crate::Result<()>;

    /// Whether a student can learn the task from its teacher's probabilities (distillation:
    /// sentence classification only).
    fn distils(&self) -> bool {
        false
    }

    /// The recipe the studio and the command line start from.
    fn recipe(&self) -> FineTuneConfig {
        FineTuneConfig::new()
    }

    /// The recipe for data of `pairs` of texts read together (a classifier's), or of single
    /// texts: [`recipe`](Self::recipe) unless the task says otherwise.
    fn recipe_on(&self, _pairs: bool) -> FineTuneConfig {
        self.recipe()
    }

    /// The encoder a run starts from, made from the checkpoint's `bert` (its `config`, and the
    /// tensors of the checkpoint's own head in `head_weights`): what the task's Hugging Face
    /// class adds on the encoder that the checkpoint may lack, started as `transformers` starts it
    /// (from `seed` where fresh). The encoder as it is, unless the task says otherwise.
    fn start(&self, bert: BertModel, _config: &BertConfig, _features: &FeatureSpec, _head_weights: Option<&[u8]>, _seed: u64, _device: &Device) -> crate::Result<BertModel> {
        Ok(bert)
    }

    /// Its head on `width` features, `labels` outputs wide, with `dropout` before it.
    fn head(&self, width: usize, labels: usize, dropout: f64, device: &Device) -> ClassificationHead {
        ClassificationHeadConfig::new(width, labels).with_dropout(dropout).init(device)
    }

    /// The sequences the encoder reads for `t`.
    fn inputs<'a>(&self, t: &'a LabeledText) -> Vec<&'a Encoded> {
        vec![&t.encoded]
    }

    /// The label ids of `t`'s units (none for a task scored by numbers).
    fn unit_labels(&self, t: &LabeledText) -> Vec<usize>;

    /// The scores of `t`'s units (a similarity pair's, a student's teacher's log-probabilities;
    /// none for the other tasks).
    fn unit_scores(&self, _t: &LabeledText) -> Vec<f32> {
        Vec::new()
    }

    /// How many units `t` has.
    fn units(&self, _t: &LabeledText) -> usize {
        1
    }

    /// How many rows of features the head reads for `t`.
    fn rows(&self, _t: &LabeledText) -> usize {
        1
    }

    /// The token positions of `t`'s rows when the head reads tokens; `None` when it reads one
    /// pooled vector per input.
    fn row_positions(&self, _t: &LabeledText) -> Option<Vec<usize>> {
        None
    }

    /// Whether each example's one output is computed from its two inputs (a bi-encoder's cosine),
    /// rather than one output per row.
    fn one_output_per_pair(&self) -> bool {
        false
    }

    /// The head's outputs on cached feature rows, as unit outputs.
    ///
    /// # Shapes
    /// - `out`: `[rows, outputs]`
    /// - output: `[units, outputs]`
    fn rows_to_units(&self, out: Tensor<2>) -> Tensor<2> {
        out
    }

    /// Whether a unit's rows are a window's tokens, which the head reads padded to the longest
    /// window of the batch.
    fn windows(&self) -> bool {
        false
    }

    /// The mean loss of a batch's unit outputs.
    ///
    /// # Shapes
    /// - `out`: `[units, outputs]`
    /// - output: `[1]`
    fn loss(&self, _config: &FineTuneConfig, out: Tensor<2>, labels: &[usize], _scores: &[f32], device: &Device) -> Tensor<1> {
        ClassificationHead::loss(out, labels_tensor(labels, device))
    }

    /// How many of a batch's units came out right: `outputs` `width` wide per unit.
    fn correct(&self, outputs: &[f32], width: usize, labels: &[usize], _scores: &[f32]) -> usize {
        outputs.chunks(width).zip(labels).filter(|(row, y)| argmax(row) == **y).count()
    }

    /// The validation set's scores from its outputs (`logits`, validation order).
    fn score(&self, tuner: &FineTuner, logits: &[f32]) -> Scored;
}

/// The task of a model that labels at `level`.
pub(crate) fn of(level: Level) -> &'static dyn UnitTask {
    match level {
        Level::Sentence => &classify::Classify,
        Level::Token => &tag::Tag,
        Level::Span => &answer::Answer,
        Level::Score => &similarity::CrossEncoder,
        Level::Embedding => &similarity::BiEncoder,
        Level::Choice => &choice::Choice,
        Level::MultiLabel => &multi_label::MultiLabel,
    }
}

/// The encoder a run of `features` (whose level says the task) starts from: see
/// [`UnitTask::start`]. A sentence classifier or cross-encoder on `[CLS]` + pooler gets its
/// family's sequence pooler where the checkpoint has none; a task whose class reads another
/// pooler starts that.
pub fn start_encoder(bert: BertModel, config: &BertConfig, features: &FeatureSpec, head_weights: Option<&[u8]>, seed: u64, device: &Device) -> crate::Result<BertModel> {
    of(features.level).start(bert, config, features, head_weights, seed, device)
}

/// `bert`, with its family's sequence pooler where it has none and the head reads `[CLS]` +
/// pooler ([`with_sequence_pooler`](crate::tasks::classification::with_sequence_pooler)).
fn with_sequence_pooler(bert: BertModel, config: &BertConfig, features: &FeatureSpec, head_weights: Option<&[u8]>, seed: u64, device: &Device) -> crate::Result<BertModel> {
    if bert.pooler.is_some() || features.pooling != Pooling::Pooler {
        return Ok(bert);
    }
    crate::tasks::classification::with_sequence_pooler(bert, config, head_weights, seed, device)
}

/// Refuses a label id outside `labels`.
fn labels_in_range(task: &dyn UnitTask, labels: &[String], examples: &[&LabeledText]) -> crate::Result<()> {
    match examples.iter().flat_map(|t| task.unit_labels(t)).find(|&l| l >= labels.len()) {
        Some(bad) => Err(crate::error::Error::Training(format!("label id {bad} is out of range"))),
        None => Ok(()),
    }
}

/// Refuses fewer than two labels.
fn two_labels_or_more(labels: &[String]) -> crate::Result<()> {
    if labels.len() < 2 {
        return Err(crate::error::Error::Training(format!("a classifier needs at least two labels; the data has {}", labels.len())));
    }
    Ok(())
}

/// A batch's units' labels in order and, where the head reads tokens, the positions of its rows
/// (see the module's docs) in the padded batch flattened row by row: a tagger's target tokens,
/// every real token of a question-answering window.
pub(super) fn batch_units(rows: &[&LabeledText], task: &dyn UnitTask, seq_len: usize, device: &Device) -> (Option<Tensor<1, Int>>, Vec<usize>) {
    let labels = rows.iter().flat_map(|t| task.unit_labels(t)).collect();
    let mut at: Vec<i64> = Vec::new();
    for (r, t) in rows.iter().enumerate() {
        match task.row_positions(t) {
            Some(positions) => at.extend(positions.into_iter().map(|p| (r * seq_len + p) as i64)),
            // The head reads each input's pooled vector.
            None => return (None, labels),
        }
    }
    let n = at.len();
    (Some(Tensor::<1, Int>::from_data(TensorData::new(at, [n]), device)), labels)
}

/// Every sequence the encoder reads for `rows`, in order (a bi-encoder pair's two texts one
/// after the other).
pub(super) fn batch_inputs(rows: &[&LabeledText], task: &dyn UnitTask) -> Vec<Encoded> {
    rows.iter().flat_map(|t| task.inputs(t)).cloned().collect()
}

/// Mean cross-entropy of host-side logits rows.
pub(super) fn cross_entropy(logits: &[f32], labels: &[usize], k: usize) -> f32 {
    let total: f64 = logits
        .chunks(k)
        .zip(labels)
        .map(|(row, &y)| -(softmax(row)[y].max(1e-30) as f64).ln())
        .sum();
    (total / labels.len().max(1) as f64) as f32
}

/// The scores of one validation pass.
pub(crate) struct Scored {
    pub(super) valid_loss: f32,
    pub(super) metrics: Metrics,
    /// The task's own scores.
    pub(super) scores: TaskScores,
    /// Each validation item's predicted text, in order (question answering's answer, "": none;
    /// empty for the other tasks).
    pub(super) predictions: Vec<String>,
    /// Per text (a tagger: per word) probabilities; a similarity model's predicted score.
    pub(super) probs: Vec<Vec<f32>>,
}


#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Only a sentence classifier learns from a teacher's probabilities: every other task's
    /// session refuses a distillation.
    #[test]
    fn only_sentence_classification_distils() {
        let distilled: Vec<Level> = Level::ALL.into_iter().filter(|&l| of(l).distils()).collect();
        assert_eq!(distilled, [Level::Sentence]);
    }

    /// Whether a run of `level` on `pooling` starts with a pooler on a checkpoint without one.
    pub(crate) fn starts_with_pooler(level: Level, pooling: Pooling) -> bool {
        use crate::bert::model::BertModelConfig;
        let device = Device::flex();
        let config = crate::test_util::tiny_config(64);
        let bert = BertModelConfig::new(config.clone()).with_with_pooler(false).init(&device);
        let features = FeatureSpec { pooling, level, ..Default::default() };
        start_encoder(bert, &config, &features, None, 3, &device).unwrap().pooler.is_some()
    }

    /// A run starts from the encoder its task's class reads: a pooler, fresh, for a classifier
    /// or cross-encoder on `[CLS]` + pooler where the checkpoint has none; the encoder as it is
    /// for the other features and tasks (a task whose class reads another pooler tests its start in its own file).
    #[test]
    fn a_run_starts_from_what_its_class_reads() {
        let with_pooler: Vec<(Level, Pooling)> = [Level::Sentence, Level::Score, Level::Token, Level::Span, Level::Embedding]
            .into_iter()
            .flat_map(|l| [(l, Pooling::Pooler), (l, Pooling::Mean)])
            .filter(|&(l, p)| starts_with_pooler(l, p))
            .collect();
        assert_eq!(with_pooler, [(Level::Sentence, Pooling::Pooler), (Level::Score, Pooling::Pooler)]);
    }
}
